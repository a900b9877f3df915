"""python -m lapse_emulator ARGS runs the lapse binary with ARGS."""

import os
import subprocess
import sys

from lapse_emulator import binary_path


def main() -> int:
    path = binary_path()
    if os.name == "nt":
        # Windows has no exec that keeps the process; wait for the child.
        return subprocess.call([path, *sys.argv[1:]])
    os.execv(path, [path, *sys.argv[1:]])
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
