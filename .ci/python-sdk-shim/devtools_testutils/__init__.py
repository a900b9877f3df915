"""What azure-cosmos's tests import from the Azure SDK's own test tools
(devtools_testutils, not on PyPI), for their run against lapse by
.ci/python-cosmos-sdk-tests: lapse's stand-in, live mode, the account key."""
