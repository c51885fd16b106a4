"""Per window of a live-capture trace: the API records (how many, which calls, their correlation ids) and the
kernels that ran in it (how many, their correlation ids, how many pair with an API record of the same window),
for finding where launches and kernels stop pairing. Usage: api_diag.py TRACE..."""
import collections, sqlite3, sys

for path in sys.argv[1:]:
    db = sqlite3.connect(path)
    info = dict(db.execute("select name, value from KERNSCOPE_TRACER_INFO").fetchall())
    print(f"{path}: api_records={info.get('api_records')!r} paused_cupti={info.get('paused_cupti')!r}")
    names = dict(db.execute("select id, value from StringIds").fetchall())
    api = db.execute("select start, end, correlationId, nameId from CUPTI_ACTIVITY_KIND_RUNTIME").fetchall()
    kernels = db.execute("select start, correlationId from CUPTI_ACTIVITY_KIND_KERNEL").fetchall()
    per_corr = collections.Counter(c for _, _, c, _ in api)
    print(f"  {len(api)} API records, {sum(1 for n in per_corr.values() if n > 1)} correlation ids on more than one; {len(kernels)} kernels")
    for i, (s, e) in enumerate(db.execute("select start, end from KERNSCOPE_CAPTURE_WINDOWS order by start").fetchall()):
        e = e or 1 << 62
        a = [(c, names.get(n, "?")) for st, _, c, n in api if s <= st < e]
        k = [c for st, c in kernels if s <= st < e + 200_000_000]
        ac = {c for c, _ in a}
        top = collections.Counter(n for _, n in a).most_common(4)
        print(f"  window {i + 1} ({(e - s) / 1e9:.3f} s): {len(a)} API records, ids {min(ac, default=0)}..{max(ac, default=0)}, {top}; "
              f"{len(k)} kernels, {len(set(k))} distinct ids {min(k, default=0)}..{max(k, default=0)}, {sum(1 for c in k if c in ac)} pair with this window's calls")
