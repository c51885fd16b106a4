#!/usr/bin/env python3
"""`kernscope ranks` on 8-rank sets made from a real DDP trace by make_rank_set.py, checked against
the generator's truth file (chosen clock offsets, injected stragglers, cut/hung/late/missing ranks).

Usage: ranks_synthetic_test.py KERNSCOPE SOURCE_TRACE

Tolerances: clock offsets exact (ns); who is last exact; a straggler's mean lead within 1 us of the
injected delay (each rank's arrival jitter is below 800 ns). Checked that it can fail: with
`--clocks trust` the offsets read 0 and the stragglers table names whichever rank's clock runs
latest (run with KERNSCOPE_RANKS_BREAK=1 to see it fail).
"""
import json
import os
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from compressed import open_any  # noqa: E402  (gzip, xz or plain by magic)

HERE = os.path.dirname(os.path.abspath(__file__))
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def make(source, out, *args):
    subprocess.run([sys.executable, os.path.join(HERE, "make_rank_set.py"), source, out, *args], check=True)
    with open(out + ".truth.json") as f:
        return json.load(f)


def ranks_json(kernscope, *args):
    extra = ["--clocks", "trust"] if os.environ.get("KERNSCOPE_RANKS_BREAK") else []
    r = subprocess.run([kernscope, "ranks", *args, "--format", "json", *extra], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"kernscope ranks failed ({r.returncode}): {r.stderr}")
    return json.loads(r.stdout)


def column(row, prefix):
    for key, value in row.items():
        if key == prefix or key.startswith(prefix + " ("):
            return value
    raise KeyError(prefix)


def check_offsets(doc, truth, ranks):
    rows = {column(r, "Rank"): r for r in doc["tables"]["ranks"]}
    for rank in ranks:
        got = column(rows[rank], "Clock Offset")
        check(got == truth["offsets_ns"][str(rank)], f"rank {rank} clock offset {got} != {truth['offsets_ns'][str(rank)]}")


def check_stragglers(doc, truth):
    by_rank = {column(r, "Rank"): r for r in doc["tables"]["stragglers"]}
    for rank, times in truth["times_last"].items():
        rank = int(rank)
        if times == 0:
            check(rank not in by_rank, f"rank {rank} named a straggler, none injected")
            continue
        row = by_rank.get(rank)
        check(row is not None and column(row, "Times Last") == times, f"rank {rank} last {row and column(row, 'Times Last')} times, injected {times}")
        if row:
            delays = [i["delay_ns"] for i in truth["injected"] if i["rank"] == rank]
            want = sum(delays) / len(delays)
            got = column(row, "Mean Lead")
            check(abs(got - want) < 1000, f"rank {rank} mean lead {got} ns, injected {want} ns")


def check_bandwidth(doc, source, n):
    """Bus bandwidth per collective against nccl-tests' definitions worked from the source trace by
    hand: the generator keeps each NCCL kernel's duration as the transfer (last arrival -> end), so
    busBW = max(In, Out msg nelems) x dtype bytes (Float 4, Long 8) x factor / duration, with factor
    2(n-1)/n for all-reduce and 1 for broadcast (n = 8 ranks, the Group size the generator writes)."""
    import decimal
    with open_any(source, "rt") as f:
        events = json.load(f, parse_float=decimal.Decimal)["traceEvents"]
    nccl = sorted((e for e in events if e.get("cat") == "kernel" and e.get("name", "").startswith("ncclKernel_")),
                  key=lambda e: e["ts"])
    width = {"Float": 4, "Long": 8}
    factor = {"allreduce": 2 * (n - 1) / n, "broadcast": 1.0}
    rows = doc["tables"]["collectives"]
    check(len(rows) == len(nccl), f"{len(rows)} collectives vs {len(nccl)} NCCL kernels in the source")
    for i, (e, row) in enumerate(zip(nccl, rows)):
        a = e["args"]
        size = max(a["In msg nelems"], a["Out msg nelems"]) * width[a["dtype"]]
        duration_ns = int(e["dur"] * 1000)
        want_alg = size / duration_ns  # bytes per ns = GB/s
        want_bus = want_alg * factor[a["Collective name"]]
        got_alg, got_bus = column(row, "Alg BW"), column(row, "Bus BW")
        check(column(row, "Bytes") == size, f"collective {i}: {column(row, 'Bytes')} bytes, source {size}")
        check(column(row, "Transfer") == duration_ns, f"collective {i}: transfer {column(row, 'Transfer')} ns, source {duration_ns}")
        check(got_alg is not None and abs(got_alg - want_alg) <= 1e-9 * want_alg, f"collective {i}: algBW {got_alg}, by hand {want_alg}")
        check(got_bus is not None and abs(got_bus - want_bus) <= 1e-9 * want_bus, f"collective {i}: busBW {got_bus}, by hand {want_bus}")
    # The source's GPUs ('NVIDIA A100-PG509-200') have no row in data/link_peaks.tsv: no peak, said so.
    check("no row in data/link_peaks.tsv" in doc["link"]["note"], "unknown device said: " + doc["link"]["note"])
    check(all(column(r, "Bus BW of Peak") in (None, "") for r in rows), "no share of a peak without a peak")
    check("sizes of 21 of 21" in doc["sizes"], "sizes from the arguments: " + doc["sizes"])


def main():
    kernscope, source = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        # 1. Identity: sequence numbers recorded, every rank whole.
        a = os.path.join(tmp, "a")
        truth = make(source, a, "--seq")
        doc = ranks_json(kernscope, a)
        check(doc["ranks"] == 8 and doc["world_size"] == 8, f"8 ranks of world 8, got {doc['ranks']} of {doc['world_size']}")
        check("sequence number" in doc["matching"], "matched by sequence number: " + doc["matching"])
        check(doc["clocks_trusted"], "clocks trusted")
        check(len(doc["tables"]["collectives"]) == truth["collectives"], "every collective matched on every rank")
        check(all("distributedInfo" in column(r, "Rank Evidence") for r in doc["tables"]["ranks"]), "ranks from distributedInfo")
        check_offsets(doc, truth, range(8))
        check_stragglers(doc, truth)
        injected = {i["collective"]: i["rank"] for i in truth["injected"]}
        lasts = [column(r, "Last Rank") for r in doc["tables"]["collectives"]]
        for index, rank in injected.items():
            check(lasts[index] == rank, f"collective {index}: last rank {lasts[index]}, injected {rank}")

        check_bandwidth(doc, source, 8)

        # 2. Order matching, a late window, a hang and a missing rank: every pairing confirmed (kinds, sizes
        # and ends agree), so the hang is named.
        b = os.path.join(tmp, "b")
        truth = make(source, b, "--late-start", "3:2", "--hang", "6:1", "--skip", "7")
        doc = ranks_json(kernscope, os.path.join(b, "rank*.json.gz"))
        notes = "\n".join(f"{n['kind']}/{n['severity']}/{n['count']}: {n['text']}" for n in doc["notes"])
        check("by order" in doc["matching"], "matched by order: " + doc["matching"])
        check(not doc["verdicts_withheld"] and doc["matching_trusted"], "matching trusted: " + "; ".join(doc["distrust"]))
        check("window_shifted/data_loss/2: rank 3, 0: its trace starts 2 collective(s) later" in notes, "late window found:\n" + notes)
        check("rank 3: its trace starts after 2 collective(s)" in "\n".join(doc["windows"]), "late window said as such: " + str(doc["windows"]))
        check("rank_did_not_arrive/info/1: rank 6 did not arrive at 1 collective" in notes, "hang on rank 6 found:\n" + notes)
        check("missing_ranks/data_loss/1: missing ranks: 7 " in notes, "missing rank 7 said:\n" + notes)
        check_offsets(doc, truth, [0, 1, 2, 3, 5, 6])
        incomplete = doc["tables"]["incomplete"]
        last = [r for r in incomplete if column(r, "Index") == truth["collectives"] - 1]
        check(len(last) == 1 and "rank 6: did not arrive" in column(last[0], "Why"), "the last collective waits for rank 6")

        # 2b. The same with rank 4's file cut at 70 %: it keeps collectives 19, 20 and 0-8 (the file's event
        # order), so by order its 10th and 11th pair with the others' 10th and 11th, an all-reduce with a
        # broadcast. That matching is not trusted: said first, and no hang or straggler verdict drawn from it.
        b2 = os.path.join(tmp, "b2")
        make(source, b2, "--late-start", "3:2", "--hang", "6:1", "--cut", "4", "--skip", "7")
        doc = ranks_json(kernscope, os.path.join(b2, "rank*.json.gz"))
        notes = "\n".join(f"{n['kind']}/{n['severity']}: {n['text']}" for n in doc["notes"])
        check(doc["verdicts_withheld"] and not doc["matching_trusted"], "verdicts withheld on the cut rank's matching")
        check(any(d.startswith("matching: rank 4, 0:") for d in doc["distrust"]), "rank 4's matching doubted: " + "; ".join(doc["distrust"]))
        check("cut_short/data_loss: rank 4: the trace is cut short" in notes, "cut rank 4 said:\n" + notes)
        check("matching_not_trusted/info: matching: rank 4, 0:" in notes, "rank 4's matching doubted among the notes:\n" + notes)
        check("did not arrive" not in notes, "no hang verdict:\n" + notes)
        check(all("did not arrive" not in column(r, "Why") for r in doc["tables"]["incomplete"]), "no 'did not arrive' in the incomplete table")
        check(all(column(r, "Trusted") == "no: matching" for r in doc["tables"]["stragglers"] + doc["tables"]["incomplete"]),
              "straggler and hang rows marked untrusted")
        text = subprocess.run([kernscope, "ranks", os.path.join(b2, "rank*.json.gz")], capture_output=True, text=True, check=True).stdout
        lines = text.splitlines()
        check(len(lines) > 1 and lines[1].startswith("NOT TRUSTED"), "the distrust is said first: " + "|".join(lines[:3]))
        check("Stragglers: withheld" in text and "last in " not in text and "did not arrive" not in text, "no verdict in the text")

        # 3. No distributedInfo: ranks from the NCCL kernels' device ids.
        c = os.path.join(tmp, "c")
        make(source, c, "--ranks", "2", "--no-dist-info")
        doc = ranks_json(kernscope, os.path.join(c, "rank0.trace.json.gz"), os.path.join(c, "rank1.trace.json.gz"))
        check(all("CUDA device id" in column(r, "Rank Evidence") for r in doc["tables"]["ranks"]), "ranks from device ids")

        # 4. A straggler at a known layer: rank 1 late by 150 us at the 4th collective (layer 3) of every
        # ProfilerStep#N; the truth file lists each collective's step and layer, worked out by the
        # generator from the source's ProfilerStep ranges and launch times.
        d = os.path.join(tmp, "d")
        truth = make(source, d, "--ranks", "2", "--seq", "--layer-straggler", "1:150:3")
        doc = ranks_json(kernscope, d)
        per_layer = {}
        for i, layer in truth["layers"].items():
            per_layer[layer] = per_layer.get(layer, 0) + 1
        rows = {column(r, "Layer"): r for r in doc["tables"]["skew_by_layer"]}
        check(sorted(rows) == sorted(per_layer), f"layers {sorted(rows)}, generator {sorted(per_layer)}")
        for layer, count in per_layer.items():
            r = rows.get(layer)
            if r is None:
                continue
            check(column(r, "Collectives") == count, f"layer {layer}: {column(r, 'Collectives')} collectives, generator {count}")
            if layer == 3:
                injected = [x for x in truth["injected"] if truth["layers"][str(x["collective"])] == 3]
                check(column(r, "Top Straggler") == 1 and column(r, "Times Last") == len(injected),
                      f"layer 3: top straggler {column(r, 'Top Straggler')} x{column(r, 'Times Last')}, injected rank 1 x{len(injected)}")
                check(abs(column(r, "Mean Lead") - 150_000) < 1000, f"layer 3: mean lead {column(r, 'Mean Lead')} ns, injected 150000")
            else:
                check(column(r, "Top Straggler") in (None, ""), f"layer {layer}: no straggler, got {column(r, 'Top Straggler')}")
        steps = {column(r, "Rank"): r for r in doc["tables"]["rank_steps"]}
        want_steps = len(set(truth["steps"].values()))
        check(all(column(steps[k], "Steps") == want_steps for k in (0, 1)), f"{want_steps} ProfilerStep ranges per rank")
    if failures:
        sys.exit(f"{len(failures)} check(s) failed")
    print("ranks synthetic sets: all checks passed")


if __name__ == "__main__":
    main()
