"""Names what a ctest run did not run: lit tests UNSUPPORTED on this
machine, GoogleTest cases that skipped themselves (GTEST_SKIP; ctest counts
them as skipped, not passed) and skipped pytest cases. ctest shows the
output of failing tests only and runs lit and pytest as one test each, so
without this a CI log says how many were skipped, never which.

usage: test_skips.py BUILD_DIR

Reads what the run wrote: BUILD_DIR/test/lit-results.json (lit -o, from
test/lit.cmake), BUILD_DIR/Testing/ctest-results.xml (ctest
--output-junit) and BUILD_DIR/Testing/python-results.xml (pytest
--junitxml), each if present (scripts/test asks for the last two). Prints
one line per skipped test with its reason; always exits 0.
"""
import json
import os
import sys
import xml.etree.ElementTree as ET


def first_line(text):
    lines = [l.strip() for l in (text or "").splitlines() if l.strip()]
    return lines[0] if lines else ""


def lit_unsupported(path):
    with open(path) as f:
        tests = json.load(f).get("tests", [])
    for t in tests:
        if t.get("code") == "UNSUPPORTED":
            # "Test requires the following unavailable features: cuda"
            yield t["name"], first_line(t.get("output"))


def junit_skipped(path):
    for case in ET.parse(path).getroot().iter("testcase"):
        skipped = case.find("skipped")
        if skipped is None and case.get("status") not in ("notrun", "disabled"):
            continue
        name = case.get("name", "")
        if case.get("classname") and case.get("classname") != name:
            name = "%s.%s" % (case.get("classname"), name)
        reason = skipped.get("message", "") if skipped is not None else case.get("status")
        if reason in ("", "SKIP_REGULAR_EXPRESSION_MATCHED"):
            reason = gtest_skip_message(case.findtext("system-out")) or reason
        yield name, reason


def gtest_skip_message(out):
    """GTEST_SKIP() << "why" prints "FILE:LINE: Skipped" and then "why"."""
    lines = (out or "").splitlines()
    for i, line in enumerate(lines):
        if line.rstrip().endswith(": Skipped"):
            return next((l.strip() for l in lines[i + 1:] if l.strip()), "")
    return ""


def main():
    build = sys.argv[1]
    sources = [
        ("lit UNSUPPORTED", os.path.join(build, "test", "lit-results.json"), lit_unsupported),
        ("ctest skipped", os.path.join(build, "Testing", "ctest-results.xml"), junit_skipped),
        ("pytest skipped", os.path.join(build, "Testing", "python-results.xml"), junit_skipped),
    ]
    for label, path, read in sources:
        if not os.path.exists(path):
            continue
        try:
            found = sorted(read(path))
        except (OSError, ValueError, ET.ParseError) as e:
            print("%s: cannot read %s: %s" % (label, path, e))
            continue
        print("%s: %d" % (label, len(found)))
        for name, reason in found:
            print("  %s%s" % (name, " (%s)" % reason if reason else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
