"""A digest worker process: `python -m kernscope.fleet.worker OUT_DIR BIN_NS` reads one task per
line on stdin ("INDEX<TAB>PATH") and writes each digest's result as one JSON line on stdout.

Why a process of its own rather than multiprocessing's spawn: a spawned child imports the parent's
main script again, so a script that calls fleet.run() without an `if __name__ == "__main__":` guard
would start the fleet again in every worker (BrokenProcessPool). This worker imports only kernscope.
"""
import json
import sys

from .digest import digest_one


def main() -> int:
    out_dir, bin_ns = sys.argv[1], int(sys.argv[2])
    for line in sys.stdin:
        index, path = line.rstrip("\n").split("\t", 1)
        result = digest_one(int(index), path, out_dir, bin_ns)
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
