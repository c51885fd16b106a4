"""kernscope ranks on a real two-GPU tensor-parallel decode with a known straggler (issue 16).

The fixture (tests/fixtures/ranks/tp2_decode_h200, README there) is bench/gpu/tp_decode.py traced by
`kernscope record` on two H200s. What is known without kernscope: the program's structure (40 warm-up
all-reduces, a barrier, 8 per step for 40 steps, a final barrier), rank 1 sleeping 2 ms before the first
all-reduce of steps 4, 9, ..., 39, one host clock for both ranks, and the NCCL kernel count per file
(sqlite3 below). The checks: every collective matched on both ranks, the 8 delayed collectives found
with rank 1 last by about the delay and their transfer unchanged, no other measured collective that late,
and a clock offset near zero.
usage: tp2_decode_test.py KERNSCOPE FIXTURE_DIR
"""
import csv
import gzip
import io
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

kernscope, fixture = sys.argv[1], sys.argv[2]
files = [os.path.join(fixture, f"rank{r}.sqlite.gz") for r in (0, 1)]
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def table(name):
    out = subprocess.run([kernscope, "ranks", "--format", "csv", "--table", name, *files],
                         capture_output=True, text=True, check=True).stdout
    return list(csv.DictReader(io.StringIO(out)))


# Independent count: NCCL kernels per rank file, by sqlite3.
with tempfile.TemporaryDirectory() as tmp:
    nccl, decode_walls = [], []
    for f in files:
        db = os.path.join(tmp, "t.sqlite")
        with gzip.open(f) as src, open(db, "wb") as dst:
            shutil.copyfileobj(src, dst)
        con = sqlite3.connect(db)
        walls = sorted(r[0] for r in con.execute("SELECT end - start FROM NVTX_EVENTS WHERE text = 'decode_step'"))
        decode_walls.append(walls)
        nccl.append(con.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s "
                                "ON s.id = k.shortName WHERE s.value LIKE '%nccl%'").fetchone()[0])
        con.close()
        os.remove(db)

WARMUP, LAYERS, STEPS, EVERY = 5, 8, 40, 5
issued = WARMUP * LAYERS + 1 + STEPS * LAYERS + 1          # warm-up, barrier, steps, final barrier
first_measured = WARMUP * LAYERS + 1
delayed = {first_measured + LAYERS * s for s in range(STEPS) if s % EVERY == EVERY - 1}

check(nccl == [issued, issued], f"sqlite3 counts {nccl} NCCL kernels per rank, the program issued {issued}")
rows = table("collectives")
check(len(rows) == issued, f"{len(rows)} collectives matched across both ranks (expected {issued})")
check(all(r["Ranks"] == "2" for r in rows), "every collective seen on both ranks")
by_index = {int(r["Index"]): r for r in rows}
for i in sorted(delayed):
    r = by_index.get(i)
    ok = r is not None and r["Last Rank"] == "1" and 1_800_000 <= int(r["Spread (ns)"]) <= 4_000_000 \
        and int(r["Transfer (ns)"]) < 100_000
    check(ok, f"collective {i} (a delayed step's first all-reduce): rank 1 last by ~2 ms, transfer under 100 us"
              + ("" if r is None else f" (last {r['Last Rank']}, spread {r['Spread (ns)']} ns, transfer {r['Transfer (ns)']} ns)"))
others = [r for i, r in by_index.items() if first_measured <= i < issued - 1 and i not in delayed]
late = [i for i, r in ((int(r["Index"]), r) for r in others) if int(r["Spread (ns)"]) >= 1_800_000]
check(not late, f"no other measured collective arrives ~2 ms apart (found {late[:5]})")
ranks = {r["Rank"]: r for r in table("ranks")}
check(abs(int(ranks["1"]["Clock Offset (ns)"])) < 1000, f"clock offset of rank 1 near zero on one host: {ranks['1']['Clock Offset (ns)']} ns")
# Bus bandwidth: kernscope record's files carry no message sizes, so none is computed; the link is
# still matched from the device name ('NVIDIA H200' in TARGET_INFO_GPU): NVLink 4, 900 GB/s in all per
# the datasheet, 450 GB/s per direction.
kinds = table("collective_kinds")
check(len(kinds) == 1 and kinds[0]["Kind"] == "all_reduce" and kinds[0]["Sized"] == "0" and kinds[0]["Median Bus BW (GB/s)"] == "",
      f"all-reduces without sizes have no bus bandwidth: {[(k['Kind'], k['Sized'], k['Median Bus BW (GB/s)']) for k in kinds]}")
check(all(float(k["Link Peak (GB/s)"]) == 450 for k in kinds), f"link peak 450 GB/s (H200 NVLink 4): {[k['Link Peak (GB/s)'] for k in kinds]}")
# Per-rank steps from each rank's own decode_step ranges (sqlite3: 40 per rank, the program's STEPS);
# wall p50 = the median of sqlite3's end - start (40 values: the mean of the 20th and 21st).
steps = {r["Rank"]: r for r in table("rank_steps")}
for rank in ("0", "1"):
    walls = decode_walls[int(rank)]
    median = (walls[19] + walls[20]) / 2
    row = steps.get(rank, {})
    check(len(walls) == STEPS and row.get("Steps") == str(STEPS), f"rank {rank}: {row.get('Steps')} steps, sqlite3 {len(walls)} decode_step ranges")
    check(row and abs(float(row["Wall p50 (ns)"]) - median) <= 1, f"rank {rank}: wall p50 {row.get('Wall p50 (ns)')} ns, sqlite3 median {median}")
# The slowest rank's steps: the 8 longest on every rank are the delayed steps, rank 1 last in them.
slow = table("slowest_rank_steps")
longest = sorted(slow, key=lambda r: -int(r["Max Wall (all ranks) (ns)"]))[:8]
want_steps = {s for s in range(STEPS) if s % EVERY == EVERY - 1}
check({int(r["Step"]) for r in longest} == want_steps, f"the 8 longest steps are the delayed ones: {sorted(int(r['Step']) for r in longest)}")
check(all(r["Most Last"] == "1" for r in longest), "rank 1 most often last in the delayed steps")
# Per layer: 8 positions of 40 collectives (one all-reduce per layer per step); the delay comes before the
# first layer, so only position 0 has ~2 ms spreads.
layers = table("skew_by_layer")
check([(r["Layer"], r["Collectives"]) for r in layers] == [(str(i), str(STEPS)) for i in range(LAYERS)],
      f"8 layers of 40 collectives: {[(r['Layer'], r['Collectives']) for r in layers]}")
check(layers and int(layers[0]["Max Spread (ns)"]) >= 1_800_000 and layers[0]["Top Straggler"] == "1",
      f"layer 0: max spread {layers and layers[0]['Max Spread (ns)']} ns, top straggler {layers and layers[0]['Top Straggler']}")
check(all(int(r["Max Spread (ns)"]) < 1_800_000 for r in layers[1:]), "layers 1-7: no ~2 ms spread")
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
