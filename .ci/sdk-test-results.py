"""Compares a JUnit XML report of an SDK's own test suite, run against
lapse, with the list of its tests known to fail there and why.

    python sdk-test-results.py RESULTS.xml KNOWN [NEW-IDS]

KNOWN has a line per test, "ID<TAB>REASON", ID as "classname::name" of the
report; lines starting with # are comments. It prints the counts (run,
passed, known failures, skipped by the suite), the failures that are not
in KNOWN (and exits 1 if there is any), and the known ones that passed
(a known failure whose reason starts with "timing" may pass or fail).
With NEW-IDS, it writes the pytest node ids of the new failures there, a
line each, for the caller to run them once more.
"""

import sys
import xml.etree.ElementTree as ET


def main(results, known_path, new_ids=None):
    known = {}
    with open(known_path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            test, _, reason = line.partition("\t")
            known[test.strip()] = reason.strip()
    run = skipped = 0
    failed, passed = [], set()
    for case in ET.parse(results).getroot().iter("testcase"):
        test = case.get("classname", "") + "::" + case.get("name", "")
        run += 1
        if case.find("skipped") is not None:
            skipped += 1
        elif case.find("failure") is not None or case.find("error") is not None:
            failed.append(test)
        else:
            passed.add(test)
    unknown = [t for t in failed if t not in known]
    fixed = sorted(t for t in known if t in passed)
    print("SDK tests: %d run, %d passed, %d known failures, %d skipped by the suite, %d new failures"
          % (run, len(passed), len(failed) - len(unknown), skipped, len(unknown)))
    for t in fixed:
        if known[t].startswith("timing"):
            print("known to fail by timing, passed this run: " + t)
        else:
            print("known to fail but passed (take it off the list): " + t)
    for t in unknown:
        print("NEW FAILURE: " + t)
    if new_ids:
        with open(new_ids, "w", encoding="utf-8") as f:
            for t in unknown:
                classname, _, name = t.partition("::")
                parts = classname.split(".")
                # tests.test_x.TestY -> tests/test_x.py::TestY
                path = "/".join(parts[:-1]) + ".py"
                f.write(path + "::" + parts[-1] + "::" + name + "\n")
    return 1 if unknown else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
