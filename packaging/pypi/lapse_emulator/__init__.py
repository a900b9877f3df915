"""lapse-emulator: the lapse command in a wheel, with the pytest plugin.

pip puts the lapse binary among the environment's scripts (bin/ or
Scripts\\), so `lapse` runs once the environment is active; binary_path()
says where it is, and `python -m lapse_emulator ARGS` runs it from
anywhere. The pytest plugin pytest_lapse (the lapse_sandbox fixture) comes
in the same wheel and loads by its pytest11 entry point.
"""

from __future__ import annotations

import os
import sys
import sysconfig

from lapse_emulator._version import __version__

__all__ = ["__version__", "binary_path"]


def _name() -> str:
    return "lapse.exe" if sys.platform == "win32" else "lapse"


def _script_dirs() -> list:
    """_script_dirs lists where pip may have put the scripts of this
    wheel: the interpreter's scripts folder (a venv's bin/), then the
    user's (pip install --user)."""
    dirs = [sysconfig.get_path("scripts")]
    if hasattr(sysconfig, "get_preferred_scheme"):  # Python 3.10+
        user = sysconfig.get_preferred_scheme("user")
    else:
        user = "nt_user" if os.name == "nt" else "posix_user"
    try:
        dirs.append(sysconfig.get_path("scripts", scheme=user))
    except KeyError:
        pass
    return dirs


def binary_path() -> str:
    """binary_path returns the path of the lapse binary this package
    installed; FileNotFoundError when it is in none of the scripts
    folders pip uses."""
    tried = []
    for d in _script_dirs():
        p = os.path.join(d, _name())
        if os.path.isfile(p):
            return p
        tried.append(p)
    raise FileNotFoundError("lapse-emulator's binary is not installed; looked at " + ", ".join(tried))
