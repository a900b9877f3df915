"""Runs a tutorial program under Debian's pika 1.2.0, unchanged.

The tutorials write pika.DeliveryMode.Persistent, an enum pika added in
1.3.0 (Transient = 1, Persistent = 2); Debian's pika 1.2.0 does not have it.
This defines it when pika lacks it, as an IntEnum so that pika 1.2.0 can
encode it, then runs the program as __main__:

    python3 pika_compat.py PROGRAM [ARGS...]
"""

import enum
import runpy
import sys

import pika

if not hasattr(pika, "DeliveryMode"):
    class DeliveryMode(enum.IntEnum):
        Transient = 1
        Persistent = 2

    pika.DeliveryMode = DeliveryMode

sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
