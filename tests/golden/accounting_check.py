#!/usr/bin/env python3
"""Checks `kernscope account` on every trace fixture of the project and, where the folder is
beside the project, every trace of ../shared/fixtures/realworld:

1. Per step, the six categories sum to the step's window within 1 %, and every part sums to its
   category.
2. TTFT and TPOT are never 0 where steps exist (report's json), and report's accounting of the
   loop is account's steps of the leading process summed.
3. Per step, the GPU's busy time (gpu + communication + copy) equals the union of the process's
   kernels, copies and sets inside the window, computed here from the file itself: with sqlite3 on
   nsys exports, with Python's json on Kineto traces (exact decimals), within 1 %.
4. Where a person has written where the steps' time goes (../shared/fixtures/realworld/README.md,
   and tests/fixtures/README.md's notes), the accounting says the same (EXPECTATIONS below).

A trace without steps is listed as such with kernscope's reason; nothing is skipped silently.
(Checked with a wrapper that moves 2 % of each step's gpu time into idle, parts and all: check 2
fails on 99 steps of the project's fixtures.)

usage: accounting_check.py KERNSCOPE FIXTURE_DIR [REALWORLD_DIR]"""
import os
import collections
import decimal
import gzip
import json
import pathlib
import sqlite3
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from compressed import open_any, plain_copy  # noqa: E402  (gzip, xz or plain by magic; one decompression per run)

CATEGORIES = ["gpu", "communication", "copy", "host", "blocked", "idle"]


def shares(loop):
    wall = loop["wall_ns"] or 1
    return {c: 100.0 * loop["categories_ns"][c] / wall for c in CATEGORIES}


def part_share(loop, part):
    return 100.0 * loop["parts_ns"].get(part, 0) / (loop["wall_ns"] or 1)


def expect_copy_bound(doc, steps):
    s = shares(doc["accounting"]["loop"])
    assert doc["accounting"]["bottleneck"] == "copy", f"bottleneck {doc['accounting']['bottleneck']}, want copy"
    assert s["copy"] > 90, f"copy {s['copy']:.1f} %, the README says 97.7 % of GPU operation time is copies"
    assert part_share(doc["accounting"]["loop"], "copy.h2d") > 80, "the copies are host-to-device weight streaming"


def expect_data_loader(doc, steps):
    loop = doc["accounting"]["loop"]
    s = shares(loop)
    assert doc["accounting"]["bottleneck"] == "gpu", "GPU work first"
    # The README: GPU idle about 44 % of each step, the rest the host in the DataLoader's __next__.
    assert 30 < s["host"] + s["idle"] + s["blocked"] < 55, f"GPU idle share {100 - s['gpu'] - s['copy']:.1f} %"
    assert part_share(loop, "host.framework") > 25, "the host's time is framework time (the data loader)"
    assert s["host"] > 10 * s["idle"], "the idle time is explained"


def expect_gpu(top_class=None):
    def check(doc, steps):
        loop = doc["accounting"]["loop"]
        assert doc["accounting"]["bottleneck"] == "gpu", f"bottleneck {doc['accounting']['bottleneck']}, want gpu"
        if top_class:
            gpu_parts = {k: v for k, v in loop["parts_ns"].items() if k.startswith("gpu.")}
            top = max(gpu_parts, key=gpu_parts.get)
            assert top == "gpu." + top_class, f"the leading class is {top}, want {top_class}"
    return check


def expect_exposed_communication(doc, steps, comm_kernel_ns):
    loop = doc["accounting"]["loop"]
    assert doc["accounting"]["bottleneck"] == "gpu", "GPU work with overlapped communication"
    exposed = loop["categories_ns"]["communication"]
    assert 0 < exposed < comm_kernel_ns, f"exposed communication {exposed} ns must be part of the {comm_kernel_ns} ns of DeepEP kernels"


# Trace file name -> check. Written from ../shared/fixtures/realworld/README.md ("Where the time goes").
EXPECTATIONS = {
    "nsysai_h100_2gpu_1s": expect_copy_bound,
    "kineto_tbplugin__resnet50_num_workers_0": expect_data_loader,
    "tracelens__traces__inference__sglang_prefilldecode": expect_gpu("gemm"),
    "tracelens__traces__inference__vllm_prefilldecode_piecewise": expect_gpu("moe_gemm"),
    "deepseek_profile_data__train": "deepseek",
    # The bundled eager Llama (tests/fixtures/README.md): a launch-bound loop at batch 1.
    "llama_decode_h200/trace": "llama",
    # Programs built to have one bottleneck, traced on an H200 (tests/fixtures/accounting/README.md).
    "accounting/copy": "built:copy:copy.h2d",
    "accounting/blocked": "built:blocked:blocked.cudaStreamSynchronize",
    "accounting/framework": "built:host:host.framework",
    "accounting/graph": "built:gpu:",
}


def expect_built(category, part):
    """The steady-state group (the last group, as the headlines read it) spends most in `category`,
    and `part` is that category's largest part."""
    def check(doc, steps):
        group = doc["account"][-1]["Group"]
        rows = [r for r in doc["account"] if r["Group"] == group]
        totals = {c: sum(r[f"{c} (ns)"] for r in rows) for c in CATEGORIES}
        top = max(totals, key=totals.get)
        assert top == category, f"group {group}: most time in {top}, built to be {category} ({totals})"
        assert totals[category] > 0.6 * sum(totals.values()), f"{category} holds {totals[category]} of {sum(totals.values())} ns"
        if part:
            parts = collections.Counter()
            for r in rows:
                for k, v in r.items():
                    if k.startswith(category + ".") and k.endswith(" (ns)"):
                        parts[k[:-5]] += v
            assert parts and parts.most_common(1)[0][0] == part, f"largest part {parts.most_common(1)}, want {part}"
    return check


def expectation_for(path):
    for key, check in EXPECTATIONS.items():
        if key in str(path):
            return key, check
    return None, None


def union(intervals, lo, hi):
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted(intervals):
        s, e = max(s, lo), min(e, hi)
        if s >= e:
            continue
        if cur_e is not None and s <= cur_e:
            cur_e = max(cur_e, e)
        else:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def gpu_ops_nsys(path):
    """(start, end, pid) of every kernel, copy and set, from the export's CUPTI tables."""
    con = sqlite3.connect(f"file:{plain_copy(path)}?mode=ro", uri=True)
    tables = {r[0] for r in con.execute("select name from sqlite_master where type='table'")}
    ops = []
    for table in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
                  "CUDA_GRAPH_EXECUTION", "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"):
        if table in tables:
            cols = {r[1] for r in con.execute(f"pragma table_info({table})")}
            pid = "globalPid" if "globalPid" in cols else "0"
            ops += [(s, e, (g >> 24) & 0xFFFFFF) for s, e, g in con.execute(f"select start, end, {pid} from {table}")]
    con.close()
    return ops, 0


def gpu_ops_kineto(path, kernscope):
    """(start, end, pid) of every kernel, copy and set in ns on kernscope's clock: the JSON's exact
    microseconds, shifted by the difference of the first kernel's start here and in kernscope."""
    with open_any(path, "rt", encoding="utf-8") as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    ops = []
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in ("kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset"):
            s = int(decimal.Decimal(str(e["ts"])) * 1000)
            ops.append((s, s + int(decimal.Decimal(str(e.get("dur", 0))) * 1000), 0))
    if not ops:
        return ops, 0
    out = subprocess.run([kernscope, "stats", "-r", "cuda_gpu_trace", "--format", "csv", plain_copy(path)], capture_output=True, text=True)
    first = None
    for line in out.stdout.splitlines()[1:]:
        try:
            v = int(line.split(",")[0])
        except ValueError:
            continue
        first = v if first is None else min(first, v)
    return ops, (first - min(s for s, _, _ in ops)) if first is not None else 0


def traces(fixture_dir, realworld):
    found = []
    for pattern in ("nsys/*/*.sqlite.xz", "accounting/*.sqlite.xz", "whatif/*.sqlite.xz", "kineto/*.json.xz", "ranks/*.json.xz", "ranks/*.sqlite.xz", "ranks/*/*.sqlite.xz",
                    "graph_trace/*.sqlite.xz"):
        found += sorted(pathlib.Path(fixture_dir).glob(pattern))
    if realworld and pathlib.Path(realworld).is_dir():
        found += sorted(p for p in pathlib.Path(realworld).iterdir() if p.name.endswith((".sqlite.gz", ".json.gz", ".sqlite.xz", ".json.xz")))
    return found


def main():
    kernscope, fixture_dir = sys.argv[1], sys.argv[2]
    realworld = sys.argv[3] if len(sys.argv) > 3 else None
    failures, checked, no_steps, expected_seen = [], 0, [], set()
    files = traces(fixture_dir, realworld)
    if realworld and not pathlib.Path(realworld).is_dir():
        print(f"NOTE: {realworld} is not here: only the project's fixtures were checked (unchecked: the shared traces)")
    for path in files:
        run = subprocess.run([kernscope, "account", "--format", "json", plain_copy(path)], capture_output=True, text=True)
        if run.returncode != 0:
            if run.returncode == 2 and run.stderr.strip():
                no_steps.append((path, run.stderr.strip().splitlines()[-1]))
                continue
            failures.append(f"{path}: exit {run.returncode}: {run.stderr.strip()}")
            continue
        doc = json.loads(run.stdout)
        steps = doc["account"]
        if not steps:
            no_steps.append((path, "no steps found"))
            continue
        is_nsys = ".sqlite" in path.name
        ops, shift = gpu_ops_nsys(path) if is_nsys else gpu_ops_kineto(path, kernscope)
        by_pid = collections.defaultdict(list)
        for s, e, pid in ops:
            by_pid[pid].append((s + shift, e + shift))
        for row in steps:
            wall = row["Wall (ns)"]
            total = sum(row[f"{c} (ns)"] for c in CATEGORIES)
            if abs(total - wall) > 0.01 * wall:
                failures.append(f"{path.name} step {row['Step']}: categories sum to {total}, window {wall}")
            for c in CATEGORIES:
                parts = sum(v for k, v in row.items() if k.startswith(c + ".") and k.endswith(" (ns)"))
                if parts != row[f"{c} (ns)"]:
                    failures.append(f"{path.name} step {row['Step']}: parts of {c} sum to {parts}, {c} is {row[f'{c} (ns)']}")
            lo = row["Start (ns)"]
            pid = row["PID"]
            mine = by_pid[pid] if is_nsys and pid != 0 else [iv for v in by_pid.values() for iv in v]
            busy = union(mine, lo, lo + wall)
            said = row["gpu (ns)"] + row["communication (ns)"] + row["copy (ns)"]
            if abs(busy - said) > max(0.01 * wall, 1000):
                failures.append(f"{path.name} step {row['Step']}: GPU busy {said} ns, the file says {busy} ns")
        # The headlines read the right clock: never 0 where steps exist, and report's accounting is
        # the one `account` gives (the leading process's steps, summed).
        rep = subprocess.run([kernscope, "report", "--format", "json", plain_copy(path)], capture_output=True, text=True)
        if rep.returncode != 0:
            failures.append(f"{path.name}: report exit {rep.returncode}: {rep.stderr.strip()[-200:]}")
        else:
            r = json.loads(rep.stdout)
            for figure in ("tpot", "ttft"):
                d = r["steps"][figure]
                if d["count"] > 0 and (d["p50_ns"] <= 0 or d["max_ns"] <= 0):
                    failures.append(f"{path.name}: {figure} is 0 with {d['count']} steps: {d}")
            lead = r["accounting"]["process"]
            walls = sum(row["Wall (ns)"] for row in steps if row["PID"] == lead)
            if r["accounting"]["loop"]["wall_ns"] != walls:
                failures.append(f"{path.name}: report's loop {r['accounting']['loop']['wall_ns']} ns, account's steps of {lead} {walls} ns")
        key, check = expectation_for(path)
        if check == "deepseek":
            with open_any(path, "rt") as f:
                d = json.load(f)
            ev = d["traceEvents"] if isinstance(d, dict) else d
            comm = union([(float(e["ts"]) * 1000, (float(e["ts"]) + float(e.get("dur", 0))) * 1000) for e in ev
                          if e.get("cat") == "kernel" and "::ep::" in e["name"]], float("-inf"), float("inf"))
            check = lambda doc, steps: expect_exposed_communication(doc, steps, comm)
        if isinstance(check, str) and check.startswith("built:"):
            _, category, part = check.split(":", 2)
            check = expect_built(category, part)
        if check == "llama":
            def check(doc, steps):
                measured = [r for r in steps if r["Group"] == ":measure:decode_step"]
                launch = sum(r["host.launch (ns)"] for r in measured)
                wall = sum(r["Wall (ns)"] for r in measured)
                assert launch > 0.5 * wall, f"host.launch {100 * launch / wall:.1f} % of the measured decode steps"
        if check:
            expected_seen.add(key)
            try:
                check(doc, steps)
                print(f"ok   {path.name}: where the time goes agrees ({key})")
            except AssertionError as e:
                failures.append(f"{path.name}: {e}")
        checked += 1
        print(f"ok   {path.name}: {len(steps)} steps sum to their windows; GPU busy equals the file's")
    for path, why in no_steps:
        print(f"none {path.name}: no steps to account ({why})")
    shared_here = bool(realworld) and pathlib.Path(realworld).is_dir()
    missing = [k for k in EXPECTATIONS if k not in expected_seen and (shared_here or "deepseek" not in k)]
    for k in missing:
        failures.append(f"expectation {k}: no trace of that name was checked")
    print(f"{checked} traces accounted, {len(no_steps)} without steps, {len(expected_seen)} expectations checked")
    if checked < 10:
        failures.append(f"only {checked} traces had steps")
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
