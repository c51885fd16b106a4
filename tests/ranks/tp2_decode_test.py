"""kernscope ranks on a real two-GPU tensor-parallel decode with a known straggler (issue 16).

The fixtures are bench/gpu/tp_decode.py on two H200s: tests/fixtures/ranks/tp2_decode_h200 (traced by
`kernscope record`, one file per rank, 40 steps) and tp2_decode_nsys_h200 (traced by nsys, one export
holding both rank processes, 10 steps at batch 2048); their READMEs say how they were made. What is
known without kernscope: the program's structure (WARMUP x 8 warm-up all-reduces, a barrier, 8 per step,
a final barrier), rank 1 sleeping 2 ms before the first all-reduce of steps 4, 9, ..., one host clock for
both ranks, and the NCCL kernels and decode_step ranges per rank process (sqlite3 below, ranks by CUDA
device). The checks: every collective matched on both ranks, the delayed collectives found with rank 1
last by about the delay and their transfer unchanged, no other measured collective that late, and a
clock offset near zero.
usage: tp2_decode_test.py KERNSCOPE STEPS FILE...
"""
import csv
import io
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from compressed import open_any  # noqa: E402  (gzip, xz or plain by magic)

kernscope, STEPS, files = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def table(name):
    out = subprocess.run([kernscope, "ranks", "--format", "csv", "--table", name, *files],
                         capture_output=True, text=True, check=True).stdout
    return list(csv.DictReader(io.StringIO(out)))


# Independent counts per rank process (its CUDA device is its rank here: one GPU per process, torchrun's
# LOCAL_RANK): NCCL kernels and decode_step walls, by sqlite3.
nccl_by_device, walls_by_device = {}, {}
with tempfile.TemporaryDirectory() as tmp:
    for f in files:
        db = os.path.join(tmp, "t.sqlite")
        with open_any(f) as src, open(db, "wb") as dst:
            shutil.copyfileobj(src, dst)
        con = sqlite3.connect(db)
        device_of_pid = dict(con.execute("SELECT DISTINCT (globalPid >> 24) & 16777215, deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL"))
        for device, n in con.execute("SELECT k.deviceId, count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s "
                                     "ON s.id = k.shortName WHERE s.value LIKE '%nccl%' GROUP BY 1"):
            nccl_by_device[device] = n
        for pid, wall in con.execute("SELECT (n.globalTid >> 24) & 16777215, n.end - n.start FROM NVTX_EVENTS n "
                                     "LEFT JOIN StringIds s ON s.id = n.textId WHERE coalesce(n.text, s.value) = 'decode_step'"):
            walls_by_device.setdefault(device_of_pid[pid], []).append(wall)
        con.close()
        os.remove(db)
nccl = [nccl_by_device.get(d, 0) for d in (0, 1)]
decode_walls = [sorted(walls_by_device.get(d, [])) for d in (0, 1)]

WARMUP, LAYERS, EVERY = 5, 8, 5
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
# Bus bandwidth: neither kernscope record's files nor nsys's export carry message sizes (nsys 2025.3.1
# exports NCCL's NVTX payload schemas, "Message size [bytes]" among them, but no payload data), so none is computed; the link is
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
    median = statistics.median(walls) if walls else None
    row = steps.get(rank, {})
    check(len(walls) == STEPS and row.get("Steps") == str(STEPS), f"rank {rank}: {row.get('Steps')} steps, sqlite3 {len(walls)} decode_step ranges")
    check(row and median is not None and abs(float(row["Wall p50 (ns)"]) - median) <= 1, f"rank {rank}: wall p50 {row.get('Wall p50 (ns)')} ns, sqlite3 median {median}")
# The slowest rank's steps: the longest on every rank are the delayed steps, rank 1 last in them.
slow = table("slowest_rank_steps")
want_steps = {s for s in range(STEPS) if s % EVERY == EVERY - 1}
longest = sorted(slow, key=lambda r: -int(r["Max Wall (all ranks) (ns)"]))[:len(want_steps)]
check({int(r["Step"]) for r in longest} == want_steps, f"the {len(want_steps)} longest steps are the delayed ones: {sorted(int(r['Step']) for r in longest)}")
check(all(r["Most Last"] == "1" for r in longest), "rank 1 the straggler of the delayed steps (its lead, ~2 ms, outweighs the others' microseconds)")
# Per layer: 8 positions of STEPS collectives (one all-reduce per layer per step); the delay comes before the
# first layer, so only position 0 has ~2 ms spreads.
layers = table("skew_by_layer")
check([(r["Layer"], r["Collectives"]) for r in layers] == [(str(i), str(STEPS)) for i in range(LAYERS)],
      f"8 layers of {STEPS} collectives: {[(r['Layer'], r['Collectives']) for r in layers]}")
check(layers and int(layers[0]["Max Spread (ns)"]) >= 1_800_000 and layers[0]["Top Straggler"] == "1",
      f"layer 0: max spread {layers and layers[0]['Max Spread (ns)']} ns, top straggler {layers and layers[0]['Top Straggler']}")
check(all(int(r["Max Spread (ns)"]) < 1_800_000 for r in layers[1:]), "layers 1-7: no ~2 ms spread")
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
