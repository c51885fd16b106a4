#!/usr/bin/env python3
"""Lists what the golden suites do not check (tests/golden/gold_skips.txt: fixtures awaiting gold, cases
where kernscope differs from nsys or nsys refuses the export) and exits 77, which ctest reports as
"Skipped": the cases golden_nsys skips inside its one entry show up as unchecked, never as passed.
usage: list_unchecked.py GOLD_SKIPS"""
import collections
import sys

kinds = collections.defaultdict(list)
with open(sys.argv[1], encoding="utf-8") as f:
    for line in f:
        if not line.strip() or line.startswith("#"):
            continue
        kind, fixture, *rest = line.split(None, 3)
        kinds[(kind, fixture)].append(line.rstrip("\n"))
total = sum(len(v) for v in kinds.values())
for (kind, fixture), lines in sorted(kinds.items()):
    print(f"UNCHECKED {len(lines)} {kind} case(s) of {fixture}:")
    for line in lines:
        print("   " + line)
print(f"{total} golden case(s) unchecked (gold_skips.txt)")
sys.exit(77 if total else 0)
