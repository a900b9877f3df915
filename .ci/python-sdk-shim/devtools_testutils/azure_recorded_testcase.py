"""lapse's stand-in for devtools_testutils.azure_recorded_testcase."""


def get_credential(is_async=False, **kwargs):
    """The emulator tests sign with the account key; a credential is for
    Entra ID tests, which lapse's run leaves out."""
    raise RuntimeError("no Entra ID credential in lapse's run of the emulator tests")
