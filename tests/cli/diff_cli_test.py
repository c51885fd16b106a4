#!/usr/bin/env python3
"""`kernscope diff` / `compare` end to end, against sums taken independently of kernscope: Python's
sqlite3 over the nsys exports and Python's json over the PyTorch-profiler traces.

  - HTA's trace_diff control/test pair (Kineto): every kernel's count and total on both sides.
  - nsys-ai's 2-GPU training window before/after an MFU fix (nsys, kernels matched by mangled name).
  - an nsys export against a PyTorch-profiler trace (different sources and GPUs): the 15 kernels
    both hold (tests/fixtures/diff/cross_source_names.tsv) are matched, with each side's counts.
  - the gate: the llama decode trace split into the first and second half of its decode steps
    (sqlite3 deletes the other half's events) is noise; the same half with one kernel made 10 %
    slower (sqlite3 UPDATE) is a regression.
  - bad input: a malformed --fail-if (exit 2, the grammar), traces with nothing in common.

Usage: diff_cli_test.py KERNSCOPE FIXTURES_DIR
Checked to fail: with 1 ns added to each JSON duration 320 checks fail; with the sqlite3 median off by
1 ns the TPOT check fails.
"""
import collections
import csv
import decimal
import io
import json
import os
import shutil
import statistics
import sqlite3
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from compressed import open_any  # noqa: E402  (gzip, xz or plain by magic)

KERNSCOPE, FIXTURES = sys.argv[1], sys.argv[2]
# The llama trace's most launched GEMV kernel (8,192 launches, C linkage: one name in every tool).
KERNEL = "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT"
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)


def run(*args, expect=0):
    p = subprocess.run([KERNSCOPE, *args], capture_output=True, text=True)
    if p.returncode != expect:
        failures.append(f"{args}: exit {p.returncode}, expected {expect}: {p.stderr[-500:]}")
        print("FAIL:", failures[-1])
    return p


def to_ns(value):
    return int((decimal.Decimal(str(value)) * 1000).quantize(decimal.Decimal(1), rounding=decimal.ROUND_HALF_UP))


def kineto_kernels(path):
    """name -> [count, total ns] of the kernel events ("X", cat kernel) of a PyTorch-profiler trace."""
    with open_any(path, "rt", encoding="utf-8") as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    sums = collections.defaultdict(lambda: [0, 0])
    for e in doc["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") in ("kernel", "Kernel"):
            sums[e["name"]][0] += 1
            sums[e["name"]][1] += to_ns(e.get("dur", 0))
    return sums


def unzipped(path, tmp):
    # Fixtures share a file name (nsys/NAME/trace.sqlite.xz): the copy is named by its folder too.
    out = os.path.join(tmp, os.path.basename(os.path.dirname(path)) + "_" + os.path.basename(path).replace(".gz", "").replace(".xz", ""))
    if not os.path.exists(out):
        with open_any(path, "rb") as f, open(out, "wb") as w:
            shutil.copyfileobj(f, w)
    return out


def nsys_kernels(path, tmp, key="mangledName"):
    """key name -> [count, total ns, demangled name] with Python's sqlite3."""
    con = sqlite3.connect(unzipped(path, tmp))
    rows = con.execute(f"SELECT s.value, d.value, COUNT(*), SUM(k.end - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                       f"JOIN StringIds s ON s.id = k.{key} JOIN StringIds d ON d.id = k.demangledName GROUP BY k.{key}")
    return {name: [count, total, demangled] for name, demangled, count, total in rows}


def kernel_rows(stdout):
    rows = list(csv.DictReader(io.StringIO(stdout)))
    return rows


def main():
    tmp = tempfile.mkdtemp(prefix="kernscope_diff_")
    kineto = os.path.join(FIXTURES, "kineto")
    nsys = os.path.join(FIXTURES, "nsys")

    # --- the CSV's columns, exactly -------------------------------------------------------------
    control = os.path.join(kineto, "trace_diff__control__control.json.xz")
    test = os.path.join(kineto, "trace_diff__test__test.json.xz")
    p = run("diff", "--format", "csv", control, test)
    header = p.stdout.splitlines()[0] if p.stdout else ""
    check(header == "Name,Count A,Count B,Total A (ns),Total B (ns),Delta (ns),Delta (%),Mean A (ns),Mean B (ns)", header)

    # --- HTA's control/test pair: every kernel on both sides -------------------------------------
    rows = {r["Name"]: r for r in kernel_rows(p.stdout)}
    for side, path in (("A", control), ("B", test)):
        expected = kineto_kernels(path)
        check(len(expected) > 10, f"{path}: kernels found by json")
        for name, (count, total) in expected.items():
            row = rows.get(name)
            if row is None:
                check(False, f"trace_diff: kernel missing from the diff: {name[:80]}")
                continue
            check(int(row[f"Count {side}"]) == count and int(row[f"Total {side} (ns)"]) == total,
                  f"trace_diff {side} {name[:60]}: {row[f'Count {side}']}/{row[f'Total {side} (ns)']} vs json {count}/{total}")
        check(sum(int(r[f"Total {side} (ns)"]) for r in rows.values()) == sum(t for _, t in expected.values()),
              f"trace_diff: total {side}")
    for r in rows.values():
        delta = int(r["Total B (ns)"]) - int(r["Total A (ns)"])
        check(int(r["Delta (ns)"]) == delta, f"delta of {r['Name'][:60]}")
    # Largest change first.
    deltas = [abs(int(r["Delta (ns)"])) for r in kernel_rows(p.stdout)]
    check(deltas == sorted(deltas, reverse=True), "rows by |delta|, largest first")

    # --- nsys-ai's MFU fix: matched by mangled name ---------------------------------------------
    before = os.path.join(nsys, "nsysai_mfu_2gpu_before", "trace.sqlite.xz")
    after = os.path.join(nsys, "nsysai_mfu_2gpu_after", "trace.sqlite.xz")
    p = run("diff", "--format", "csv", before, after)
    by_name = collections.defaultdict(lambda: [0, 0, 0, 0])
    for r in kernel_rows(p.stdout):
        e = by_name[r["Name"]]
        e[0] += int(r["Count A"]); e[1] += int(r["Total A (ns)"]); e[2] += int(r["Count B"]); e[3] += int(r["Total B (ns)"])
    expected = collections.defaultdict(lambda: [0, 0, 0, 0])
    for offset, path in ((0, before), (2, after)):
        for mangled, (count, total, demangled) in nsys_kernels(path, tmp).items():
            expected[demangled][offset] += count
            expected[demangled][offset + 1] += total
    check(dict(by_name) == dict(expected),
          f"MFU pair: per-kernel counts/totals differ from sqlite3 for "
          f"{[n[:50] for n in set(expected) ^ set(by_name) or [n for n in expected if expected[n] != by_name.get(n)]][:5]}")

    # JSON: the headline's totals are the sums of every kernel.
    p = run("diff", "--format", "json", before, after)
    doc = json.loads(p.stdout)
    check(doc["headline"]["total_kernel_ns_a"] == sum(v[1] for v in expected.values()), "headline total A")
    check(doc["headline"]["total_kernel_ns_b"] == sum(v[3] for v in expected.values()), "headline total B")
    check(doc["identity"] == "mangled names", doc["identity"])
    top = doc["headline"]["contributors"]
    check(len(top) > 0 and abs(top[0]["delta_ns"]) == max(abs(v[3] - v[1]) for v in expected.values()) or
          len(top) > 0 and abs(top[0]["delta_ns"]) >= max(abs(v[3] - v[1]) for v in expected.values()),
          "the first contributor is the kernel that changed most")

    # --- across sources: nsys export vs PyTorch-profiler trace ----------------------------------
    llama = os.path.join(nsys, "llama_decode_h200", "trace.sqlite.xz")
    qwen = os.path.join(kineto, "tracelens__traces__h100__Qwen_Qwen1.5-0.5B-Chat__1016005.json.xz")
    p = run("diff", "--format", "csv", "--limit", "0", llama, qwen)
    rows = kernel_rows(p.stdout)
    nsys_sums = nsys_kernels(llama, tmp)
    kineto_sums = kineto_kernels(qwen)
    pairs = [line.rstrip("\n").split("\t") for line in open(os.path.join(FIXTURES, "diff", "cross_source_names.tsv"))
             if not line.startswith("#")]
    for mangled, nsys_name, kineto_name in pairs:
        matched = [r for r in rows if r["Name"] == nsys_name and int(r["Count B"]) > 0]
        check(len(matched) == 1, f"cross-source: {nsys_name[:70]} matched {len(matched)} rows with a B side")
        if matched:
            r = matched[0]
            check(int(r["Count A"]) == nsys_sums[mangled][0] and int(r["Total A (ns)"]) == nsys_sums[mangled][1],
                  f"cross-source A of {nsys_name[:60]}")
            check(int(r["Count B"]) == kineto_sums[kineto_name][0] and int(r["Total B (ns)"]) == kineto_sums[kineto_name][1],
                  f"cross-source B of {nsys_name[:60]}")
    check("different GPUs" in p.stderr and "different sources" in p.stderr, f"notes on stderr: {p.stderr[-300:]}")
    notes = json.loads(run("diff", "--format", "json", llama, qwen).stdout)["notes"]
    kinds = {n["kind"]: n for n in notes}
    check({"different_gpus", "different_sources"} <= set(kinds) and all(n["severity"] == "info" for n in notes),
          f"the JSON's notes have kinds: {notes}")
    check(kinds.get("different_sources", {}).get("text", "").startswith("the traces come from different sources ("),
          f"a note's text is the sentence: {notes}")

    # --- gate: noise-only (halves of one run) passes, the MFU change fails ----------------------
    full = unzipped(llama, tmp)
    con = sqlite3.connect(full)
    starts = [s for (s,) in con.execute(
        "SELECT n.start FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId "
        "WHERE COALESCE(n.text, s.value) LIKE 'measure:decode_step%' ORDER BY n.start")]
    con.close()
    check(len(starts) >= 32, f"llama decode steps: {len(starts)}")
    middle = starts[len(starts) // 2]
    halves = []
    for name, keep in (("first", "< ?"), ("second", ">= ?")):
        out = os.path.join(tmp, f"{name}.sqlite")
        shutil.copy(full, out)
        con = sqlite3.connect(out)
        tables = [t for (t,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_MEMCPY",
                      "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "NVTX_EVENTS"):
            if table in tables:
                # Keep the half's decode steps (and, for the first, the prefill before them).
                con.execute(f"DELETE FROM {table} WHERE NOT (start {keep})", (middle,))
        con.commit()
        con.close()
        halves.append(out)
    # Noise only: the first and the second half of one run. TPOT p50 (each decode step from its NVTX
    # range's start until the range or its kernels end, median by Python over sqlite3's rows)
    # differs by about 2 per cent; a +1.5 % threshold is then exceeded by the measured change but not
    # by the whole interval: the gate passes.
    def decode_walls(path):
        con = sqlite3.connect(path)
        walls = sorted(max(e, g or 0) - s for s, e, g in con.execute(
            "SELECT n.start, n.end, (SELECT max(k.end) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN CUPTI_ACTIVITY_KIND_KERNEL k "
            "ON k.correlationId = r.correlationId WHERE r.globalTid = n.globalTid AND r.start >= n.start AND r.end <= n.end) "
            "FROM NVTX_EVENTS n WHERE n.text = 'measure:decode_step' AND n.end IS NOT NULL"))
        con.close()
        return walls
    walls = [decode_walls(h) for h in halves]
    p = run("diff", "--format", "json", "--fail-if", "tpot_p50 > +1.5%", "--fail-if", "gpu_busy > +5%",
            "--fail-if", f"kernel:{KERNEL} > +5%", *halves)
    doc = json.loads(p.stdout) if p.stdout else {"gates": [{}, {}, {}]}
    for gate in doc["gates"]:
        print("noise-only:", gate.get("evidence"))
        check(gate.get("failed") is False, f"noise-only halves failed a gate: {gate.get('evidence')}")
    tpot = doc["gates"][0]
    check(tpot.get("a_ns") == statistics.median(walls[0]) and tpot.get("b_ns") == statistics.median(walls[1]),
          f"TPOT p50 {tpot.get('a_ns')}/{tpot.get('b_ns')} vs sqlite3 medians {statistics.median(walls[0])}/{statistics.median(walls[1])}")
    check(tpot.get("holds") is True and tpot.get("beyond_noise") is False,
          "the +1.5 % TPOT gate: the change exceeds the threshold, the noise does not let it fail")
    check(doc.get("failed") is False, "noise-only: failed is false")

    # A real regression, made by hand: the second half again with every launch of KERNEL 10 %
    # longer (sqlite3 UPDATE): +10 % beyond the noise fails a +5 % gate and passes a +15 % one.
    slowed = []
    for half in halves:
        out = half.replace(".sqlite", "_slow.sqlite")
        shutil.copy(half, out)
        con = sqlite3.connect(out)
        n = con.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start + (end - start) * 11 / 10 WHERE shortName = "
                        "(SELECT id FROM StringIds WHERE value = ?)", (KERNEL,)).rowcount
        con.commit()
        con.close()
        check(n > 1000, f"{n} launches slowed")
        slowed.append(out)
    p = run("diff", "--format", "json", "--fail-if", f"kernel:{KERNEL} > +5%", "--fail-if", f"kernel:{KERNEL} > +15%",
            halves[1], slowed[1], expect=1)
    doc = json.loads(p.stdout) if p.stdout else {"gates": [{}, {}]}
    gate, high = doc["gates"][0], doc["gates"][1]
    print("regression:", gate.get("evidence"))
    check(gate.get("failed") is True and gate.get("holds") is True and gate.get("beyond_noise") is True, str(gate)[:300])
    check(abs(gate.get("change", 0) - 10.0) < 0.1, f"the slowdown measured as {gate.get('change')} %")
    check(high.get("failed") is False and high.get("holds") is False, str(high)[:300])
    check(doc.get("failed") is True, "regression: failed is true")
    # Repeated runs: the two halves as two runs a side, the runs are the unit of the noise.
    p = run("diff", "--format", "json", "--fail-if", f"kernel:{KERNEL} > +5%", "--a", *halves, "--b", *slowed, expect=1)
    doc = json.loads(p.stdout) if p.stdout else {"gates": [{}]}
    print("runs:", doc["gates"][0].get("evidence"))
    check(doc["gates"][0].get("noise_from") == "2 and 2 runs", str(doc["gates"][0])[:200])
    p = run("diff", "--format", "json", "--fail-if", f"kernel:{KERNEL} > +5%", "--a", *halves, "--b", *reversed(halves))
    check(json.loads(p.stdout)["failed"] is False if p.stdout else False, "the same runs in another order pass")

    # --- compare: labelled columns; class totals are at most the kernel, copy and set time ------
    # (setup before the first step is left out of classes, as `ops` leaves it out: checked exactly
    # on the llama trace below, whose first step is an NVTX range)
    p = run("compare", "--format", "json", "--label", "before", "--label", "after", before, after)
    doc = json.loads(p.stdout)
    check(doc["labels"] == ["before", "after"], str(doc["labels"]))
    for label, path in (("before", before), ("after", after)):
        con = sqlite3.connect(unzipped(path, tmp))
        total = 0
        for table in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"):
            try:
                total += con.execute(f"SELECT COALESCE(SUM(end - start), 0) FROM {table}").fetchone()[0]
            except sqlite3.OperationalError:
                pass
        got = sum(int(r[f"{label} (ns)"]) for r in doc["classes"])
        check(0 < got <= total, f"compare {label}: classes sum {got} vs sqlite3 {total}")

    # --- diff's classes leave out the setup before the first step, as ops does ------------------
    # The llama trace's first step is its warmup:prefill NVTX range. GPU work launched before it
    # starts (its launching call by correlation id, sqlite3) is setup: all 149 weight copies and one
    # kernel. The class table holds the rest, to the nanosecond, and says what it left out.
    llama = os.path.join(nsys, "llama_decode_h200", "trace.sqlite.xz")
    con = sqlite3.connect(unzipped(llama, tmp))
    first = con.execute("SELECT MIN(start) FROM NVTX_EVENTS WHERE text IN "
                        "('warmup:prefill', 'warmup:decode_step', 'measure:prefill', 'measure:decode_step')").fetchone()[0]
    launch = {}
    for corr, start in con.execute("SELECT correlationId, start FROM CUPTI_ACTIVITY_KIND_RUNTIME"):
        launch[corr] = min(start, launch.get(corr, start))
    kept, setup_copies = 0, 0
    for table in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"):
        for start, end, corr in con.execute(f"SELECT start, end, correlationId FROM {table}"):
            if launch.get(corr, start) >= first:
                kept += end - start
            elif table == "CUPTI_ACTIVITY_KIND_MEMCPY":
                setup_copies += 1
    check(setup_copies == 149, f"llama: {setup_copies} setup copies by sqlite3")
    p = run("diff", "--format", "json", llama, llama)
    doc = json.loads(p.stdout)
    setup = [n for n in doc["notes"] if n["kind"] == "setup_left_out"]
    check(len(setup) == 2 and setup[0]["text"].startswith("A: setup before the first step"), f"setup notes by kind: {doc['notes']}")
    got = sum(int(r["Total A (ns)"]) for r in doc["classes"])
    check(got == kept, f"diff llama: classes sum {got} vs sqlite3 without setup {kept}")
    check(not any(r["Class"] == "memcpy" for r in doc["classes"]), "diff llama: no memcpy class (all copies are setup)")
    p = run("diff", llama, llama)
    check("A: setup before the first step" in p.stdout and "149 copies" in p.stdout, "diff says what setup it left out")
    run("compare", "--label", "one", before, after, expect=2)
    run("compare", before, expect=2)

    # --- the step time leads (issue 27), on steps that are steps (issue 44). The what-if copies pair
    # (tests/fixtures/whatif/README.md: the programs' own steps take 12.03 ms before, 2.09 ms after):
    # the headline is the step time, equal to the mean window `kernscope account` gives the measured
    # steps, then what moved; raw totals below.
    pair_a = os.path.join(os.path.dirname(nsys), "whatif", "copies.before.sqlite.xz")
    pair_b = os.path.join(os.path.dirname(nsys), "whatif", "copies.after.sqlite.xz")
    p = run("diff", pair_a, pair_b)
    lines = [l for l in p.stdout.splitlines() if l.strip()]
    check(len(lines) > 3 and lines[1].startswith("Step time"), f"the step time leads: {lines[1:3]}")
    check(lines[2].startswith("Per step, what moved"), f"the categories that moved follow: {lines[2:3]}")
    raw = next((l for l in lines if l.startswith("GPU kernel time")), "")
    check("raw totals" in raw, f"the raw kernel total stays, below: {raw}")
    doc = json.loads(run("diff", "--format", "json", pair_a, pair_b).stdout)
    rows = {r["Metric"]: r for r in doc.get("phases", [])}
    step = rows.get("Step time per step", {})
    check(step and step.get("B (ns)", 1e18) < step.get("A (ns)", 0), f"per step the after is faster: {step}")
    for side, path in (("A (ns)", pair_a), ("B (ns)", pair_b)):
        acc = json.loads(run("account", "--format", "json", path).stdout)
        groups = collections.Counter(r["Group"] for r in acc["account"])
        largest = groups.most_common(1)[0][0]
        walls = [r["Wall (ns)"] for r in acc["account"] if r["Group"] == largest]
        check(step and abs(step.get(side, 0) - round(sum(walls) / len(walls), 1)) < 1,
              f"{side} step time {step.get(side)} is the mean window of account's {len(walls)} steps of {largest}")
    # nsys-ai's MFU pair: 0.3 s windows inside one training step each (autograd's annotations, no
    # optimizer kernel), whose repeating units are blocks, not steps: no step headline is built on
    # them; the diff leads with the kernel totals (the 8.7 % less kernel time of the after).
    mfu_a = os.path.join(nsys, "nsysai_mfu_2gpu_before", "trace.sqlite.xz")
    mfu_b = os.path.join(nsys, "nsysai_mfu_2gpu_after", "trace.sqlite.xz")
    lines = [l for l in run("diff", mfu_a, mfu_b).stdout.splitlines() if l.strip()]
    check(not any(l.startswith("Step time") for l in lines), f"no step-time headline on blocks: {lines[1:3]}")
    check(len(lines) > 1 and lines[1].startswith("GPU kernel time") and "-8.7 %" in lines[1], f"kernel totals lead: {lines[1:2]}")

    # --- bad input ------------------------------------------------------------------------------
    p = run("diff", "--fail-if", "tpot_p50 >> 5%", before, after, expect=2)
    check("METRIC OP CHANGE" in p.stderr, f"grammar printed: {p.stderr[:200]}")
    run("diff", before, expect=2)
    run("diff", before, after, control, expect=2)
    run("diff", before, "--a", after, "--b", before, expect=2)  # positional traces mixed with --a/--b
    run("diff", "--a", before, after, expect=2)  # --a without --b
    run("diff", before, os.path.join(tmp, "missing.sqlite"), expect=2)
    triton = os.path.join(kineto, "triton_example__triton_example.json.xz")
    p = run("diff", control, triton)
    check("no kernel in common" in p.stdout, "nothing in common is said")
    shutil.rmtree(tmp)
    print(f"diff_cli: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
