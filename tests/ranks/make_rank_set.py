#!/usr/bin/env python3
"""Replicates one real PyTorch-profiler (Kineto) trace into N rank traces with known truths.

Each rank's clock is shifted by a known offset; every NCCL kernel (one collective) gets a small
arrival jitter per rank (below 1 us) and, where the straggler schedule says, one rank arrives late
by a known delay. The collective then ends, on every rank, the original transfer time after the
last arrival (NCCL kernels finish together), so:
  - each rank's clock offset to rank 0 is recoverable exactly from the kernels' ends;
  - the injected straggler is the last to arrive, leading the second-last by delay + its jitter -
    the largest other jitter (within 1 us of the delay).
Other events keep their times (shifted by the rank's clock offset only).

Bad-input variants: --cut RANK (file cut mid-event), --hang RANK:K (the rank's last K collectives
never launched while its trace goes on), --late-start RANK:K (its window starts at the K-th
collective), --skip RANK (no file), --no-dist-info (ranks only in file names), --seq (record the
process group's sequence number, as newer PyTorch does), --layer-straggler RANK:DELAY_US:LAYER (the rank
late at every collective that is the LAYER-th (from 0) launched inside its ProfilerStep#N range;
replaces the default schedule; the truth file lists each collective's step and layer).

Writes rank<R>.trace.json.gz per rank into OUT_DIR, and OUT_DIR.truth.json beside it (offsets,
injected stragglers, variants), outside the folder so the folder holds traces only.
Times are kept exact: JSON numbers are read as decimals and written back as exact microseconds.
"""
import argparse
import decimal
import gzip
import json
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from compressed import open_any  # noqa: E402  (gzip, xz or plain by magic)


def load(path):
    with open_any(path, "rt") as f:
        return json.load(f, parse_float=decimal.Decimal)


def to_ns(us):
    return int((decimal.Decimal(us) * 1000).to_integral_value(rounding=decimal.ROUND_HALF_EVEN))


def us_text(ns):
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    return f"{sign}{ns // 1000}.{ns % 1000:03d}"


class Exact(json.JSONEncoder):
    def default(self, o):
        if isinstance(o, decimal.Decimal):
            return float(o)  # only args (not times) reach here
        return super().default(o)


def offset_ns(rank):
    # Known, irregular offsets, some negative: whole milliseconds plus odd nanoseconds.
    return ((rank * 5 + 6) % 13 - 6) * 1_000_003 + rank * 17


def jitter_ns(rank, index):
    return ((rank + 1) * (index + 3) * 2654435761) % 800


def is_nccl_kernel(e):
    return e.get("cat") == "kernel" and e.get("name", "").startswith(("ncclKernel_", "ncclDevKernel_"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("source", help="a Kineto trace with NCCL kernels (.json or .json.gz)")
    ap.add_argument("out_dir")
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--straggler", action="append", default=[],
                    help="RANK:DELAY_US:EVERY:PHASE — late at collectives i with i %% EVERY == PHASE (first match wins)")
    ap.add_argument("--layer-straggler", action="append", default=[], help="RANK:DELAY_US:LAYER")
    ap.add_argument("--seq", action="store_true")
    ap.add_argument("--no-dist-info", action="store_true")
    ap.add_argument("--cut", type=int, action="append", default=[])
    ap.add_argument("--hang", action="append", default=[], help="RANK:K")
    ap.add_argument("--late-start", action="append", default=[], help="RANK:K")
    ap.add_argument("--skip", type=int, action="append", default=[])
    ap.add_argument("--plain", action="store_true", help="write .json instead of .json.gz")
    args = ap.parse_args()

    doc = load(args.source)
    events = doc["traceEvents"]
    nccl = sorted((e for e in events if is_nccl_kernel(e)), key=lambda e: to_ns(e["ts"]))
    if not nccl:
        sys.exit("make_rank_set: the source has no NCCL kernels")
    index_of = {id(e): i for i, e in enumerate(nccl)}
    n = args.ranks
    schedule = []
    for spec in args.straggler or ["5:200:3:1", "2:80:7:0"]:
        rank, delay_us, every, phase = spec.split(":")
        schedule.append((int(rank), int(float(delay_us) * 1000), int(every), int(phase)))
    # Each collective's step (the ProfilerStep#N range its launch falls in) and its position there.
    launch = {}
    for e in events:
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and isinstance(e.get("args"), dict) and "correlation" in e["args"]:
            launch[e["args"]["correlation"]] = to_ns(e["ts"])
    steps = sorted((to_ns(e["ts"]), to_ns(e["ts"]) + to_ns(e["dur"]), e["name"]) for e in events
                   if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#"))
    step_of, layer_of, seen = {}, {}, {}
    for i, e in enumerate(nccl):
        t = launch.get(e.get("args", {}).get("correlation"), to_ns(e["ts"]))
        for start, end, name in steps:
            if start <= t <= end:
                step_of[i] = name
                layer_of[i] = seen.get(name, 0)
                seen[name] = layer_of[i] + 1
                break
    if args.layer_straggler:
        schedule = []
    late = {}  # collective index -> (rank, delay ns)
    for i in range(len(nccl)):
        for rank, delay, every, phase in schedule:
            if rank < n and i % every == phase:
                late[i] = (rank, delay)
                break
    for spec in args.layer_straggler:
        rank, delay_us, layer = spec.split(":")
        for i in range(len(nccl)):
            if int(rank) < n and layer_of.get(i) == int(layer) and i not in late:
                late[i] = (int(rank), int(float(delay_us) * 1000))

    def arrival_delay(rank, i):
        d = jitter_ns(rank, i)
        if late.get(i, (None,))[0] == rank:
            d += late[i][1]
        return d

    last_delay = [max(arrival_delay(r, i) for r in range(n)) for i in range(len(nccl))]
    hang = {int(a): int(b) for a, b in (s.split(":") for s in args.hang)}
    late_start = {int(a): int(b) for a, b in (s.split(":") for s in args.late_start)}
    os.makedirs(args.out_dir, exist_ok=True)
    seq_of = {}  # collective index -> its number within its process group
    counters = {}
    for i, e in enumerate(nccl):
        group = str(e.get("args", {}).get("Process Group Name", ""))
        seq_of[i] = counters.get(group, 0)
        counters[group] = seq_of[i] + 1

    def with_world(a):
        a = dict(a)
        a["Group size"] = n
        a["Process Group Ranks"] = str(list(range(n)))
        return a

    for rank in range(n):
        if rank in args.skip:
            continue
        o = offset_ns(rank)
        drop_from = len(nccl) - hang.get(rank, 0)
        window_start = to_ns(nccl[late_start[rank]]["ts"]) if rank in late_start else None
        lines = []
        for original in events:
            if window_start is not None and "ts" in original and original.get("ph") != "M" and to_ns(original["ts"]) < window_start:
                continue
            e = dict(original)
            times = {}
            if "ts" in e:
                times["ts"] = to_ns(e["ts"]) + o
                if "dur" in e:
                    times["dur"] = to_ns(e["dur"])
            if isinstance(e.get("args"), dict) and "device" in e["args"]:
                e["args"] = dict(e["args"], device=rank % 8)  # each rank's GPU work on its own device
            i = index_of.get(id(original))
            if i is not None:
                if i >= drop_from:
                    continue  # --hang: never launched
                s = to_ns(original["ts"])
                start = s + arrival_delay(rank, i)
                end = s + last_delay[i] + to_ns(original["dur"])
                times = {"ts": start + o, "dur": end - start}
                a = with_world(e.get("args", {}))
                if args.seq:
                    a["Seq"] = seq_of[i]
                e["args"] = a
            elif e.get("name") == "record_param_comms" and "args" in e:
                e["args"] = with_world(e["args"])
            placeholders = {}
            for key, ns in times.items():
                e[key] = f"@@{key}@@"
                placeholders[f'"@@{key}@@"'] = us_text(ns)
            text = json.dumps(e, cls=Exact, separators=(",", ":"))
            for ph, value in placeholders.items():
                text = text.replace(ph, value)
            lines.append(text)
        top = {k: v for k, v in doc.items() if k != "traceEvents"}
        if args.no_dist_info:
            top.pop("distributedInfo", None)
        else:
            info = dict(top.get("distributedInfo", {}))
            info.update({"backend": "nccl", "rank": rank, "world_size": n})
            info["pg_config"] = [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl", "pg_size": n,
                                  "ranks": list(range(n))}]
            top["distributedInfo"] = info
        head = json.dumps(top, cls=Exact, separators=(",", ":"))
        body = head[:-1] + (',' if len(head) > 2 else '') + '"traceEvents":[\n' + ",\n".join(lines) + "\n]}\n"
        if rank in args.cut:
            body = body[: int(len(body) * 0.7)]
        name = os.path.join(args.out_dir, f"rank{rank}.trace.json" + ("" if args.plain else ".gz"))
        if args.plain:
            with open(name, "w") as f:
                f.write(body)
        else:
            with gzip.open(name, "wt", compresslevel=1) as f:
                f.write(body)

    truth = {
        "source": os.path.basename(args.source),
        "ranks": n,
        "collectives": len(nccl),
        "offsets_ns": {str(r): offset_ns(r) - offset_ns(0) for r in range(n) if r not in args.skip},
        "max_jitter_ns": 800,
        "injected": [{"collective": i, "rank": r, "delay_ns": d} for i, (r, d) in sorted(late.items())],
        "times_last": {str(r): sum(1 for i, (rr, _) in late.items() if rr == r) for r in range(n)},
        "steps": {str(i): step_of[i] for i in step_of}, "layers": {str(i): layer_of[i] for i in layer_of},
        "hang": hang, "late_start": late_start, "cut": args.cut, "skip": args.skip, "seq": args.seq,
    }
    with open(os.path.normpath(args.out_dir) + ".truth.json", "w") as f:
        json.dump(truth, f, indent=1)


if __name__ == "__main__":
    main()
