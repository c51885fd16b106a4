# What happened inside one step of a kernscope trace (sqlite, nsys schema): the API calls of each thread
# by name (count, total ms), the kernels, copies and memsets, in the window [START, START+WALL) that
# `kernscope account` gave the step.
# usage: python3 step_calls.py TRACE.sqlite START_NS WALL_NS
import sqlite3, sys

db, start, wall = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
end = start + wall
c = sqlite3.connect(db)
tables = {r[0] for r in c.execute("select name from sqlite_master where type='table'")}


def clip(a, b):
    return max(0, min(b, end) - max(a, start))


print(f"  window {start}..{end} ({wall / 1e6:.3f} ms)")
if "CUPTI_ACTIVITY_KIND_RUNTIME" in tables:
    rows = c.execute("select s.value, count(*), sum(r.end - r.start), sum(min(r.end, ?) - max(r.start, ?)) "
                     "from CUPTI_ACTIVITY_KIND_RUNTIME r join StringIds s on s.id = r.nameId "
                     "where r.end > ? and r.start < ? group by s.value order by 4 desc limit 12",
                     (end, start, start, end)).fetchall()
    for n, k, d, inside in rows:
        print(f"  api {n:<40} x{k:<5} {d / 1e6:9.3f} ms ({inside / 1e6:.3f} ms inside the window)")
if "CUPTI_ACTIVITY_KIND_KERNEL" in tables:
    k, d = c.execute("select count(*), coalesce(sum(min(end, ?) - max(start, ?)), 0) from CUPTI_ACTIVITY_KIND_KERNEL "
                     "where end > ? and start < ?", (end, start, start, end)).fetchone()
    print(f"  kernels x{k}, {d / 1e6:.3f} ms (summed, clipped to the window)")
if "CUPTI_ACTIVITY_KIND_MEMCPY" in tables:
    for kind, src, k, b, d in c.execute(
            "select copyKind, srcKind, count(*), sum(bytes), sum(min(end, ?) - max(start, ?)) from CUPTI_ACTIVITY_KIND_MEMCPY "
            "where end > ? and start < ? group by copyKind, srcKind", (end, start, start, end)):
        print(f"  memcpy copyKind={kind} srcKind={src} x{k} {b / 2**20:.1f} MiB {d / 1e6:.3f} ms "
              f"({b / d:.2f} GB/s)" if d else f"  memcpy copyKind={kind} srcKind={src} x{k}")
if "CUPTI_ACTIVITY_KIND_MEMSET" in tables:
    k, d = c.execute("select count(*), coalesce(sum(min(end, ?) - max(start, ?)), 0) from CUPTI_ACTIVITY_KIND_MEMSET "
                     "where end > ? and start < ?", (end, start, start, end)).fetchone()
    if k:
        print(f"  memsets x{k}, {d / 1e6:.3f} ms")
if "NVTX_EVENTS" in tables:
    for t, k, d in c.execute("select text, count(*), sum(min(end, ?) - max(start, ?)) from NVTX_EVENTS "
                             "where end > ? and start < ? and end is not null group by text order by 3 desc limit 6",
                             (end, start, start, end)):
        print(f"  nvtx {t} x{k} {d / 1e6:.3f} ms inside the window")
