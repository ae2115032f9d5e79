#!/usr/bin/env python3
"""Why ctest skipped tests: every skipped test of a ctest log with the reason it printed.

    python3 scripts/skip_reasons.py <build>/Testing/Temporary/LastTest.log

ctest lists skipped tests but not why. The reason is in each test's output: GoogleTest writes it
on the line after "<file>:<line>: Skipped", Python's unittest as "skipped '<reason>'", the
examples and scripts as "SKIPPED: <reason>" (or "SKIPPED (<reason>)"). Prints the reasons with
their counts, most frequent first, and names any skipped test that printed none. Exit status 0.
"""
import re
import sys
from collections import Counter

BLOCK = re.compile(r'^\d+/\d+ Testing: (.+)$', re.M)
SKIPPED = "Skip regular expression found in output"
REASONS = (re.compile(r': Skipped\n(.+)'), re.compile(r"skipped '([^']+)'"), re.compile(r'SKIPPED: (.+)$', re.M),
           re.compile(r'SKIPPED \((.+)\)$', re.M))


def skips(text):
    """(test name, reason or None) of each skipped test in a LastTest.log text."""
    starts = list(BLOCK.finditer(text))
    for i, m in enumerate(starts):
        block = text[m.end():starts[i + 1].start() if i + 1 < len(starts) else len(text)]
        if SKIPPED not in block and "Test Skipped" not in block:
            continue
        reason = None
        for pattern in REASONS:
            found = pattern.search(block)
            if found:
                reason = found.group(1).strip()
                break
        yield m.group(1).strip(), reason


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) == 2 else 2
    try:
        with open(argv[1], errors="replace") as f:
            text = f.read()
    except OSError as e:
        print(f"skip_reasons.py: cannot read {argv[1]} ({e.strerror})", file=sys.stderr)
        return 2
    found = list(skips(text))
    if not found:
        return 0
    counts = Counter(reason for _, reason in found if reason)
    silent = [name for name, reason in found if not reason]
    print(f"Why tests were skipped ({len(found)} tests; count, reason):")
    for reason, n in counts.most_common():
        print(f"  {n:5d} {reason}")
    if silent:
        print(f"  {len(silent):5d} printed no reason: {', '.join(silent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
