"""kernscope whatif on the ranks of a real two-GPU decode, a file each (issue 29, item 1).

tests/fixtures/ranks/tp2_decode_h200 is bench/gpu/tp_decode.py on two H200s traced by `kernscope
record`, one file per rank process, 40 decode_step ranges per rank; its README says how it was made.
Known without kernscope: rank 1 slept 2 ms on the host before the first all-reduce of steps 4, 9, ...,
39, so rank 0 waited those 2 ms inside that all-reduce's kernel. The checks:
- without a change every step of both ranks replays to its traced time (the joined graph is complete);
- the slow steps are the 8 the program delayed, on both ranks;
- host=0 (the host's own work removed, rank 1's sleep with it): replayed together, rank 0's slow steps
  lose the wait (their all-reduces now wait for a rank 1 that no longer sleeps) and come out no longer
  than its other steps; replayed alone (rank 0's file only), the wait stays inside its kernel's time;
- json says the ranks were replayed together, with their ranks and clock offsets;
- rank 1's file with every start and end moved 5 s later (a clock of its own, as on another host):
  its offset comes out at 5 s, every prediction is the same as with the files as recorded, and each
  step's start is given in its own file's clock (a wrong sign or a missing conversion back fails);
- rank 1's collective kernels, every other one ending 40 us later: the matching is not trusted, so no
  replay together (issue 47's uncaught mutation: whatif over ranks ignoring an untrusted matching;
  checked 2026-12-06: run_whatif.cpp without its distrust lines replays them together and fails this).
usage: tp2_whatif_test.py KERNSCOPE RANK0 RANK1
"""
import csv
import io
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from compressed import plain_copy  # noqa: E402  (an uncompressed copy, cached)

kernscope, rank0, rank1 = sys.argv[1:4]
failures = []
DELAYED = set(range(4, 40, 5))  # the program's delayed steps (its README)


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def steps(files, *changes):
    args = [kernscope, "whatif", "-q", "--format", "csv", *files]
    for c in changes:
        args += ["--change", c]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    by_rank = {}
    for r in rows:
        by_rank.setdefault(int(r.get("Rank", 0)), {})[int(r["Step"])] = (float(r["Traced (ns)"]), float(r["Predicted (ns)"]),
                                                                      float(r["Start (ns)"]))
    return by_rank


none = steps([rank0, rank1])
check(sorted(none) == [0, 1] and all(len(v) == 40 for v in none.values()), "40 steps on each of ranks 0 and 1")
worst = max(abs(p - t) / t for v in none.values() for t, p, _ in v.values())
check(worst <= 0.02, f"no change: every step replays to its traced time (worst {100 * worst:.2f} %)")
for rank, v in sorted(none.items()):
    typical = statistics.median(t for t, _, _ in v.values())
    slow = {s for s, (t, _, _) in v.items() if t > typical + 1.5e6}
    check(slow == DELAYED, f"rank {rank}: the steps over 1.5 ms above the median are the delayed ones {sorted(slow)}")

together = steps([rank0, rank1], "host=0")[0]
alone = steps([rank0], "host=0")[0]
others = statistics.median(p for s, (_, p, _) in together.items() if s not in DELAYED)
for s in sorted(DELAYED):
    check(together[s][1] <= 1.5 * others,
          f"host=0, ranks together: rank 0's step {s} {together[s][1] / 1e6:.3f} ms, like its other steps ({others / 1e6:.3f} ms)")
    check(alone[s][1] >= 2e6, f"host=0, rank 0 alone: step {s} keeps the 2 ms wait ({alone[s][1] / 1e6:.3f} ms)")

doc = json.loads(subprocess.run([kernscope, "whatif", "-q", "--format", "json", rank0, rank1, "--change", "host=0"],
                                capture_output=True, text=True, check=True).stdout)
check(doc["together"] is True and [r["rank"] for r in doc["ranks"]] == [0, 1], "json: ranks 0 and 1 replayed together")
check(all(abs(r["offset_ns"]) < 1e5 for r in doc["ranks"]), "json: clock offsets under 100 us (one host clock)")
check(all(g["predicted_step_ns"] < g["traced_step_ns"] for r in doc["ranks"] for g in r["whatif"]["groups"]),
      "json: each rank's groups predicted faster without host work")

# Rank 1 on a clock of its own: every start and end of its file 5 s later.
SHIFT = 5_000_000_000
scratch = tempfile.mkdtemp(prefix="tp2_whatif_")
try:
    shifted = os.path.join(scratch, "rank1.sqlite")
    shutil.copy(plain_copy(rank1), shifted)
    db = sqlite3.connect(shifted)
    moved = 0
    for (table,) in db.execute("select name from sqlite_master where type = 'table'").fetchall():
        for column in [c[1] for c in db.execute(f"pragma table_info('{table}')").fetchall() if c[1].lower() in ("start", "end")]:
            moved += db.execute(f'update "{table}" set "{column}" = "{column}" + ? where typeof("{column}") = \'integer\'', (SHIFT,)).rowcount
    db.commit()
    db.close()
    base = steps([rank0, rank1], "host=0")
    moved_run = steps([rank0, shifted], "host=0")
    doc = json.loads(subprocess.run([kernscope, "whatif", "-q", "--format", "json", rank0, shifted, "--change", "host=0"],
                                    capture_output=True, text=True, check=True).stdout)
    offset = {r["rank"]: r["offset_ns"] for r in doc["ranks"]}
    check(doc["together"] is True and abs(offset[1] - offset[0] - SHIFT) < 1e5,
          f"rank 1 moved 5 s ({moved} times): replayed together, its offset {offset[1] / 1e9:.6f} s")
    drift = max(abs(moved_run[r][s][1] - base[r][s][1]) for r in (0, 1) for s in base[r])
    check(drift <= 1000, f"the same predictions on a clock of its own (largest difference {drift:.0f} ns)")
    starts = all(moved_run[1][s][2] == base[1][s][2] + SHIFT and moved_run[0][s][2] == base[0][s][2] for s in base[1])
    check(starts, "each step's start in its own file's clock")
    # Rank 1's collective kernels: every other one ends 40 us later (a clock that drifts, or a
    # matching that pairs the wrong calls): the ranks' matching is not trusted, so they are not
    # replayed together, and json says why (the replay itself would pair them).
    jittered = os.path.join(scratch, "rank1_jitter.sqlite")
    shutil.copy(plain_copy(rank1), jittered)
    db = sqlite3.connect(jittered)
    rows = db.execute("select k.rowid from CUPTI_ACTIVITY_KIND_KERNEL k join StringIds s on s.id = k.demangledName "
                      "where s.value like '%nccl%' order by k.start").fetchall()
    for i, (rowid,) in enumerate(rows):
        db.execute('update CUPTI_ACTIVITY_KIND_KERNEL set "end" = "end" + ? where rowid = ?', (40_000 if i % 2 else 0, rowid))
    db.commit()
    db.close()
    doc = json.loads(subprocess.run([kernscope, "whatif", "-q", "--format", "json", rank0, jittered, "--change", "host=0"],
                                    capture_output=True, text=True, check=True).stdout)
    said = " ".join(n["text"] for n in doc.get("notes", []) if n["kind"] == "ranks_replayed_apart")
    check(len(rows) > 10 and doc["together"] is False and "replayed apart" in said,
          f"rank 1's collective ends jittered ({len(rows)} kernels): not replayed together ({said[:160]})")
finally:
    shutil.rmtree(scratch, ignore_errors=True)

if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
