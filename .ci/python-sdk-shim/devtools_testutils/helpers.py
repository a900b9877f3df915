"""lapse's stand-in for devtools_testutils.helpers."""


def is_live():
    """The tests run against a live endpoint (lapse), not recordings."""
    return True
