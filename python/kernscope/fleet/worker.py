"""A digest worker process: `python -m kernscope.fleet.worker OUT_DIR BIN_NS` reads one task per
line on stdin, a JSON array [INDEX, PATH] (so any path, a newline in it included, survives), and
writes each digest's result as one JSON line on the descriptor that was its stdout.

Why a process of its own rather than multiprocessing's spawn: a spawned child imports the parent's
main script again, so a script that calls fleet.run() without an `if __name__ == "__main__":` guard
would start the fleet again in every worker (BrokenProcessPool). This worker imports only kernscope.
A task that fails in any way (a trace that cannot be read, a folder that cannot be written) gives a
result with its error, never a dead worker; anything the digest prints goes to stderr, never into
the results.
"""
import json
import os
import sys
import traceback

from .digest import digest_one


def main() -> int:
    out_dir, bin_ns = sys.argv[1], int(sys.argv[2])
    results = os.fdopen(os.dup(1), "w", encoding="utf-8")
    sys.stdout = sys.stderr  # stray prints must not corrupt the result lines
    for line in sys.stdin:
        if not line.strip():
            continue
        index, path = json.loads(line)
        try:
            result = digest_one(int(index), path, out_dir, bin_ns)
        except BaseException as e:  # noqa: BLE001 - every failure is the task's result, not the worker's end
            if isinstance(e, KeyboardInterrupt):
                raise
            traceback.print_exc()
            result = {"trace": int(index), "path": path, "error": f"{type(e).__name__}: {e}", "rows": {}}
        results.write(json.dumps(result) + "\n")
        results.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
