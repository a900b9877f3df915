#!/usr/bin/env python3
"""build_wheels.py writes the wheels of lapse-emulator, one per platform.

    python3 packaging/pypi/build_wheels.py --bin-dir dist/bin --out dist/pypi [--platform linux-amd64 ...]

Each wheel (lapse_emulator-VERSION-py3-none-TAG.whl) carries the binary of
its platform as a script, in lapse_emulator-VERSION.data/scripts/, which pip
copies to the environment's bin/ (Scripts\\ on Windows) with its executable
bit, so that `pip install lapse-emulator` puts `lapse` on PATH; the package
lapse_emulator (binary_path(), __version__, python -m lapse_emulator); and
the pytest plugin pytest_lapse, copied from fixtures/python at build time,
with its pytest11 entry point. No Python code of the wheel depends on the
platform: only the binary and the tag differ.

It reads only --bin-dir (packaging/collect-binaries' layout: OS-ARCH/lapse,
lapse.exe on Windows, and VERSION) and needs Python's standard library
alone. The zip is the same bytes for the same inputs: its entries are in a
fixed order with a fixed time (SOURCE_DATE_EPOCH when set).
"""

from __future__ import annotations

import argparse
import base64
import csv
import hashlib
import io
import os
import re
import sys
import time
import zipfile

NAME = "lapse-emulator"
DIST = "lapse_emulator"  # the name as wheel file names and folders spell it

# PLATFORMS maps collect-binaries' folder names to the wheel's platform tags
# (compressed tag sets, "." between tags). The binaries are static (CGO off),
# so the oldest manylinux tag pip knows for the architecture fits.
PLATFORMS = {
    "linux-amd64": "manylinux_2_17_x86_64.manylinux2014_x86_64",
    "linux-arm64": "manylinux_2_17_aarch64.manylinux2014_aarch64",
    "darwin-amd64": "macosx_10_12_x86_64",
    "darwin-arm64": "macosx_11_0_arm64",
    "windows-amd64": "win_amd64",
    "windows-arm64": "win_arm64",
}

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PLUGIN_DIR = os.path.join(REPO, "fixtures", "python", "pytest_lapse")
PACKAGE_DIR = os.path.join(HERE, DIST)

SUMMARY = "lapse, an emulator of Azure Service Bus, RabbitMQ and Azure Cosmos DB with a clock tests move, and its pytest plugin"

DESCRIPTION = """\
# lapse-emulator

`pip install lapse-emulator` installs `lapse`, one binary that emulates
Azure Service Bus (AMQP 1.0), RabbitMQ (AMQP 0-9-1) and Azure Cosmos DB
(REST) for tests of expiry, with one clock that tests move: a 1-hour TTL
is tested in milliseconds.

It also installs the pytest plugin pytest_lapse: the `lapse_sandbox`
fixture gives each test a sandbox of its own in one running lapse (its own
clock and entities), found at `--lapse-url`, else `$LAPSE_URL`, else
http://localhost:8080. pytest loads it by its entry point; the package
needs nothing but Python's standard library and, for the fixture, pytest
(`pip install "lapse-emulator[pytest]"`).

    lapse &
    pytest -n 4

`lapse_emulator.binary_path()` returns where pip put the binary, and
`python -m lapse_emulator ARGS` runs it.
"""


def pep440(version: str) -> str:
    """pep440 maps the version GoReleaser stamped (dist/bin/VERSION) to a
    PEP 440 one: 1.2.3 and v1.2.3 stay 1.2.3; 1.2.3-rc.1 is 1.2.3rc1 (alpha
    a, beta b); a snapshot, 0.0.0-SNAPSHOT-476a222, is the development
    release 0.0.0.dev0 with the commit as its local label,
    0.0.0.dev0+476a222."""
    v = version.strip()
    if v.startswith("v"):
        v = v[1:]
    m = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)(?:-(.+))?", v)
    if not m:
        raise ValueError(f"version {version!r} is not MAJOR.MINOR.PATCH[-PRERELEASE]")
    base = ".".join(str(int(x)) for x in m.group(1, 2, 3))
    pre = m.group(4)
    if pre is None:
        return base
    snap = re.fullmatch(r"SNAPSHOT(?:-([0-9A-Za-z]+))?", pre)
    if snap:
        return base + ".dev0" + ("+" + snap.group(1).lower() if snap.group(1) else "")
    rc = re.fullmatch(r"(alpha|beta|rc)\.?(\d+)", pre)
    if rc:
        return base + {"alpha": "a", "beta": "b", "rc": "rc"}[rc.group(1)] + str(int(rc.group(2)))
    raise ValueError(f"version {version!r}: no PEP 440 form for the pre-release {pre!r}")


def record_hash(data: bytes) -> str:
    """record_hash is a RECORD line's hash: sha256, urlsafe base64 without
    its padding."""
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def zip_time() -> tuple:
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch:
        return time.gmtime(max(int(epoch), 315532800))[:6]  # zip starts in 1980
    return (1980, 1, 1, 0, 0, 0)


class Wheel:
    """Wheel is a wheel being written: its entries and its RECORD."""

    def __init__(self, path: str):
        self.zip = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED)
        self.records: list = []
        self.when = zip_time()

    def add(self, name: str, data: bytes, mode: int = 0o644) -> None:
        info = zipfile.ZipInfo(name, date_time=self.when)
        info.compress_type = zipfile.ZIP_DEFLATED
        # The Unix mode, regular file, in the high 16 bits: pip sets the
        # executable bit of an installed file from it.
        info.external_attr = (0o100000 | mode) << 16
        info.create_system = 3  # Unix, so that the mode is read
        self.zip.writestr(info, data)
        self.records.append((name, record_hash(data), str(len(data))))

    def close(self, record: str) -> None:
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        for row in self.records:
            w.writerow(row)
        w.writerow((record, "", ""))
        self.add(record, out.getvalue().encode())
        self.records.pop()
        self.zip.close()


def python_files(folder: str) -> list:
    """python_files returns the .py files of folder, sorted, not its
    caches."""
    names = sorted(n for n in os.listdir(folder) if n.endswith(".py"))
    if "__init__.py" not in names:
        raise FileNotFoundError(f"{folder} has no __init__.py")
    return names


def read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def metadata(version: str) -> str:
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {NAME}",
        f"Version: {version}",
        f"Summary: {SUMMARY}",
        "Requires-Python: >=3.9",
        "Provides-Extra: pytest",
        'Requires-Dist: pytest>=7; extra == "pytest"',
        "Classifier: Framework :: Pytest",
        "Classifier: Topic :: Software Development :: Testing",
        "Classifier: Programming Language :: Python :: 3",
        "Description-Content-Type: text/markdown",
    ]
    return "\n".join(lines) + "\n\n" + DESCRIPTION


def wheel_file(tags: str) -> str:
    lines = [
        "Wheel-Version: 1.0",
        "Generator: lapse build_wheels.py",
        "Root-Is-Purelib: false",
    ]
    lines += [f"Tag: py3-none-{t}" for t in tags.split(".")]
    return "\n".join(lines) + "\n"


def build(bin_dir: str, out: str, platform: str, version: str) -> str:
    """build writes the wheel of platform into out and returns its path."""
    tags = PLATFORMS[platform]
    exe = "lapse.exe" if platform.startswith("windows-") else "lapse"
    binary = read(os.path.join(bin_dir, platform, exe))
    path = os.path.join(out, f"{DIST}-{version}-py3-none-{tags}.whl")
    dist_info = f"{DIST}-{version}.dist-info"
    w = Wheel(path + ".tmp")
    try:
        for n in python_files(PACKAGE_DIR):
            w.add(f"{DIST}/{n}", read(os.path.join(PACKAGE_DIR, n)))
        w.add(f"{DIST}/_version.py", f'"""The version of the wheel lapse_emulator came in."""\n\n__version__ = "{version}"\n'.encode())
        for n in python_files(PLUGIN_DIR):
            w.add(f"pytest_lapse/{n}", read(os.path.join(PLUGIN_DIR, n)))
        w.add(f"{DIST}-{version}.data/scripts/{exe}", binary, 0o755)
        w.add(f"{dist_info}/METADATA", metadata(version).encode())
        w.add(f"{dist_info}/WHEEL", wheel_file(tags).encode())
        w.add(f"{dist_info}/entry_points.txt", b"[pytest11]\nlapse = pytest_lapse\n")
        w.add(f"{dist_info}/top_level.txt", f"{DIST}\npytest_lapse\n".encode())
        w.close(f"{dist_info}/RECORD")
    except BaseException:
        w.zip.close()
        os.remove(path + ".tmp")
        raise
    os.replace(path + ".tmp", path)
    return path


def main(argv: list) -> int:
    p = argparse.ArgumentParser(description="Write lapse-emulator's wheels, one per platform, from the collected binaries.")
    p.add_argument("--bin-dir", required=True, help="the collected binaries: OS-ARCH/lapse[.exe] and VERSION")
    p.add_argument("--out", required=True, help="the folder the wheels are written to")
    p.add_argument("--platform", action="append", choices=sorted(PLATFORMS),
                   help="a platform to build (repeat it); every one when not given")
    args = p.parse_args(argv)
    with open(os.path.join(args.bin_dir, "VERSION")) as f:
        version = pep440(f.read())
    os.makedirs(args.out, exist_ok=True)
    for platform in args.platform or list(PLATFORMS):
        path = build(args.bin_dir, args.out, platform, version)
        print(f"{path} ({os.path.getsize(path)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
