#!/usr/bin/env python3
"""Checks `kernscope whatif` and `kernscope critical-path` on every trace accounting_check.py reads
(the project's fixtures and ../shared/fixtures/realworld where it is beside the project):

1. The graph is complete: replayed without a change, every step's time comes back within 2 % (or
   2 us) of its traced time. The traced time is the step's own (its range's start, and its range's
   end or its GPU work's end, whichever is later; from the previous step's completion inside a
   group), so a graph that lost operations, calls or the order between them fails here.
2. Each change moves time only the way its model allows, against the no-change replay, on the
   span of the leading process's steps (the first start to the last completion: a max-plus
   function of every duration and lag, so removing time can only shorten it; one step's time from
   the previous step's completion need not shrink when the previous step gains more): `graphs`,
   `no-sync`, `host=0` and `scale=CLASS:0` for the trace's largest operation class never lengthen
   it (beyond 1 % plus 20 us: a graph launch may cost more than the one launch it replaces),
   `host=2` and `scale=CLASS:2` never shorten it.
3. The critical path of each group adds up: its categories sum to the path, the path per step
   equals the mean predicted step time, and where its largest category is not the accounting's,
   critical-path says so and why.
4. critical-path --perfetto writes strict JSON: a slice per link of the path, each flow start paired
   with its end.

A trace without steps is listed with kernscope's reason; nothing is skipped silently.
usage: whatif_check.py KERNSCOPE FIXTURE_DIR [REALWORLD_DIR]"""
import csv
import io
import json
import pathlib
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from accounting_check import traces  # noqa: E402  (the same list of traces)
from compressed import plain_copy  # noqa: E402  (one decompression per trace and test run)


def run(kernscope, *args):
    r = subprocess.run([kernscope, *args], capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def step_rows(kernscope, path, *changes):
    args = ["whatif", "--format", "csv", str(path)]
    for c in changes:
        args += ["--change", c]
    rc, out, err = run(kernscope, *args)
    if rc != 0:
        raise RuntimeError(f"whatif {' '.join(changes)} failed ({rc}): {err.strip()[-300:]}")
    return {int(r["Step"]): r for r in csv.DictReader(io.StringIO(out))}


def span(kernscope, path, *changes):
    args = ["whatif", "--format", "json", str(path)]
    for c in changes:
        args += ["--change", c]
    rc, out, err = run(kernscope, *args)
    if rc != 0:
        raise RuntimeError(f"whatif {' '.join(changes)} failed ({rc}): {err.strip()[-300:]}")
    return json.loads(out)["predicted_span_ns"]


def main():
    kernscope, fixture_dir = sys.argv[1], sys.argv[2]
    realworld = sys.argv[3] if len(sys.argv) > 3 else None
    failures, checked, no_steps, steps_checked = [], 0, [], 0
    if realworld and not pathlib.Path(realworld).is_dir():
        print(f"NOTE: {realworld} is not here: only the project's fixtures were checked (unchecked: the shared traces)")
    for path in traces(fixture_dir, realworld):
        name = f"{path.parent.name}/{path.name}"
        path = plain_copy(path)
        try:
            base = step_rows(kernscope, path)
        except RuntimeError as e:
            no_steps.append((name, str(e).splitlines()[-1]))
            continue
        if not base:
            no_steps.append((name, "no steps"))
            continue
        checked += 1
        problems = []
        # 1. Complete.
        for step, r in base.items():
            traced, predicted = int(r["Traced (ns)"]), int(r["Predicted (ns)"])
            steps_checked += 1
            if abs(predicted - traced) > max(0.02 * traced, 2000):
                problems.append(f"step {step} ({r['Group']}): replayed without a change {predicted} ns, traced {traced} ns")
        # 2. Each change within its model.
        rc, out, _ = run(kernscope, "critical-path", "--format", "json", str(path))
        doc = json.loads(out) if rc == 0 else {"groups": []}
        classes = {}
        for g in doc["groups"]:
            for part, ns in g["parts_ns"].items():
                if part.startswith("gpu."):
                    classes[part[4:]] = classes.get(part[4:], 0) + ns
        top = max(classes, key=classes.get) if classes else None
        rules = [("graphs", -1), ("no-sync", -1), ("host=0", -1), ("host=2", +1)]
        if top:
            rules += [(f"scale={top}:0", -1), (f"scale={top}:2", +1)]
        base_span = span(kernscope, path)
        for change, direction in rules:
            after = span(kernscope, path, change)
            slack = 0.01 * base_span + 20_000
            if direction < 0 and after > base_span + slack:
                problems.append(f"{change}: the steps' span lengthens, {base_span} -> {after} ns")
            if direction > 0 and after < base_span - slack:
                problems.append(f"{change}: the steps' span shortens, {base_span} -> {after} ns")
        # 3. The path adds up, and says where it disagrees with the accounting.
        predicted_by_group = {}
        for r in base.values():
            predicted_by_group.setdefault((r["Group"], r["Phase"]), []).append(int(r["Predicted (ns)"]))
        # The text is read only where the path and the accounting disagree (it must say so there).
        text = run(kernscope, "critical-path", str(path))[1] if any(
            g["bottleneck"] != g["accounting_bottleneck"] for g in doc["groups"]) else ""
        for g in doc["groups"]:
            if sum(g["categories_ns"].values()) != g["path_ns"]:
                problems.append(f"{g['group']}: path categories sum to {sum(g['categories_ns'].values())}, path {g['path_ns']}")
            values = predicted_by_group.get((g["group"], g["phase"]), [])
            if values and abs(g["path_ns"] - sum(values)) > 0.01 * sum(values) + 1000:
                problems.append(f"{g['group']}: path {g['path_ns']} ns, the steps' predicted times sum to {sum(values)} ns")
            if g["bottleneck"] != g["accounting_bottleneck"] and "the step accounting's most is" not in text:
                problems.append(f"{g['group']}: path most {g['bottleneck']}, accounting {g['accounting_bottleneck']}, unexplained")
        # 4. The path as a Perfetto trace: strict JSON, a slice per link, every flow start paired with its end.
        with tempfile.TemporaryDirectory() as tmp:
            out = pathlib.Path(tmp) / "path.json"
            rc, _, err = run(kernscope, "critical-path", "--perfetto", str(out), str(path))
            events = json.loads(out.read_text())["traceEvents"] if rc == 0 and out.exists() else None
            if events is None:
                problems.append(f"critical-path --perfetto failed: {err.strip()[-200:]}")
            else:
                slices = [e for e in events if e["ph"] == "X"]
                starts = sorted(e["id"] for e in events if e["ph"] == "s")
                ends = sorted(e["id"] for e in events if e["ph"] == "f")
                if starts != ends or (slices and len(starts) != len(slices) - 1) or any(e["dur"] < 0 for e in slices):
                    problems.append(f"Perfetto path: {len(slices)} slices, {len(starts)} flow starts, {len(ends)} flow ends")
        agree = sum(g["bottleneck"] == g["accounting_bottleneck"] for g in doc["groups"])
        print(f"{'FAIL' if problems else 'ok  '} {name}: {len(base)} steps, path and accounting agree on {agree} of {len(doc['groups'])} groups")
        for p in problems[:8]:
            print("       " + p)
        if problems:
            failures.append(name)
    for name, why in no_steps:
        print(f"no steps: {name}: {why}")
    print(f"{checked} traces ({steps_checked} steps) checked, {len(no_steps)} without steps, {len(failures)} failed")
    if checked == 0 or failures:
        sys.exit(1)


if __name__ == "__main__":
    main()
