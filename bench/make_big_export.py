#!/usr/bin/env python3
"""Makes a large Nsight Systems export from a real one by replicating its event rows with shifted
times and correlation ids (each copy starts after the previous one ends), until the file reaches
the target size. The schema, strings and per-copy event mix are those of the real export.

    make_big_export.py SOURCE.sqlite OUT.sqlite TARGET_GB
"""
import os
import shutil
import sqlite3
import sys

TABLES = ["CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_MEMCPY",
          "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "NVTX_EVENTS"]


def main():
    src, out, target_gb = sys.argv[1], sys.argv[2], float(sys.argv[3])
    shutil.copyfile(src, out)
    db = sqlite3.connect(out)
    db.execute("PRAGMA journal_mode=OFF")
    db.execute("PRAGMA synchronous=OFF")
    tables = [t for t in TABLES if db.execute("SELECT 1 FROM sqlite_master WHERE name=?", (t,)).fetchone()]
    lo, hi = db.execute("SELECT min(start), max(end) FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()
    span = (hi - lo) + 1_000_000
    max_corr = max(db.execute(f"SELECT coalesce(max(correlationId), 0) FROM {t}").fetchone()[0]
                   for t in tables if t != "NVTX_EVENTS") + 1
    original = {t: db.execute(f"SELECT max(rowid) FROM {t}").fetchone()[0] or 0 for t in tables}
    copies = 0
    while os.path.getsize(out) < target_gb * 1e9:
        copies += 1
        for t in tables:
            cols = [r[1] for r in db.execute(f"PRAGMA table_info({t})")]
            exprs = []
            for c in cols:
                if c in ("start", "end"):
                    exprs.append(f'"{c}" + {copies * span}')
                elif c == "correlationId":
                    exprs.append(f'"{c}" + {copies * max_corr}')
                else:
                    exprs.append(f'"{c}"')
            db.execute(f"INSERT INTO {t} ({', '.join(chr(34) + c + chr(34) for c in cols)}) "
                       f"SELECT {', '.join(exprs)} FROM {t} WHERE rowid <= {original[t]}")
        db.commit()
        print(f"copy {copies}: {os.path.getsize(out) / 1e9:.2f} GB", flush=True)
    db.close()


if __name__ == "__main__":
    main()
