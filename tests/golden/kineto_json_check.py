#!/usr/bin/env python3
"""Cross-checks kernscope's Kineto reader against an independent reading of the same JSON with
Python's json module (exact decimals): per kernel name, per CUDA API name and per range (PyTorch's
operator, user-annotation and GPU-annotation ranges, which kernscope shows as NVTX ranges in the
domains cpu_op, python_function, default and gpu_user_annotation), the count and the total duration in ns must equal
kernscope's cuda_gpu_kern_sum / cuda_api_sum / nvtx_sum CSV. Where the JSON has no event of a
kind, kernscope must say the report has no data (an empty output is not taken for agreement), and
every fixture must have names compared.

Which files: every Kineto trace anywhere under FIXTURE_DIR, found by content: each *.json or
*.json.gz or *.json.xz file (so *.pt.trace.json[.gz|.xz] too) whose text holds "traceEvents" is a Kineto trace and
must be checked; the check fails if fewer files pass than were found (a file that holds
"traceEvents" but does not read as a trace fails rather than being skipped). Model configs and
nsys's JSON reports have no "traceEvents" and are not traces.

Kernel names are compared twice, every name, count and total exactly each time:
- as the JSON writes them, against `cuda_gpu_kern_sum:mangled` (for a Kineto trace the mangled-name
  column holds the name as the JSON has it, mangled or not);
- as kernscope shows them, against `cuda_gpu_kern_sum`: kernscope shows an Itanium-mangled name
  (_Z...) demangled as nsys shows it (cu++filt's spelling). The expected spelling comes from GNU
  c++filt (binutils, run with --no-recurse-limit: without it c++filt refuses cuDNN's long cutlass
  names), an implementation independent of kernscope's (LLVM's demangler). A name that did not come
  mangled is compared exactly. The two demanglers spell some things differently
  (tests/fixtures/demangle/README.md); only those seen on the fixtures' names are normalised, by one
  function applied to both sides (normalised()), and only to names that came mangled: cu++filt
  writes literals as casts ((int)128, (unsigned int)0, (bool)0: GNU 128, 0u, false), `T *` and
  `T &` with a space, `>>` where GNU writes `> >`, and the template parameters in a function
  template's signature as T1, T2 (GNU substitutes them; a pack expansion `T3...` of a one-element
  pack is GNU's element alone). Checked against cu++filt itself (CUDA 13.0, on the GPU host,
  2026-11-27): of the fixtures' 9 distinct mangled kernel names both demanglers demangle 8, with
  normalised(cu++filt) == normalised(GNU c++filt) on all 8, and both leave the ninth (sgl_hip's
  act_and_mul_kernel, `Tn` mangling) as it is; kernscope's spelling of the HTA DDP trace's two
  cutlass names equals cu++filt's byte for byte.
  KNOWN_UNDEMANGLED lists where kernscope still differs from cu++filt (none now): each is asserted
  to still differ (kernscope shows the mangled name, with the JSON's count and total), and the names
  are printed each run.

(Checked with kernscope wrappers that print nothing and say nothing for a skipped report, that drop
the last nvtx_sum row, and, on the HTA DDP trace in ranks/, that drop one row of
cuda_gpu_kern_sum:mangled, add 1 ns to the total of a demangled cutlass kernel in cuda_gpu_kern_sum,
or change one literal of its spelling ((int)128 -> (int)129): each fails. A fixture folder holding
a .pt.trace.json two folders down and a .json.gz whose traceEvents is not a list: the first is
found and checked, the second fails the run.)

usage: kineto_json_check.py KERNSCOPE FIXTURE_DIR"""
import os
import collections
import csv
import decimal
import io
import json
import pathlib
import re
import shutil
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from compressed import decompress_any  # noqa: E402  (gzip, xz or plain by magic)

KERNEL_CATS = {"kernel", "Kernel"}
API_CATS = {"cuda_runtime", "Runtime", "cuda_driver"}
# Range categories -> the NVTX domain kernscope files them under (README.md, "PyTorch's cpu_op ...");
# nsys names a range "DOMAIN:TEXT", with an empty DOMAIN for the default domain.
RANGE_DOMAINS = {"cpu_op": "cpu_op", "Operator": "cpu_op", "python_function": "python_function", "user_annotation": "",
                 "gpu_user_annotation": "gpu_user_annotation"}

# Mangled names kernscope leaves mangled where nsys's demangler (cu++filt, CUDA 13.0) and GNU c++filt
# 2.40 both demangle them: (predicate on the mangled name, why). None now: the 6 DF16b
# (std::bfloat16_t) names of the TraceLens ROCm traces that LLVM 14's parser refused are parsed by
# kernscope's own production for DF16b (src/base/nsys_demangle.cpp) and compared like the rest.
KNOWN_UNDEMANGLED = ()


def to_ns(value):
    # Microseconds -> integer ns, half away from zero (durations are never negative here).
    return int((decimal.Decimal(str(value)) * 1000).quantize(decimal.Decimal(1), rounding=decimal.ROUND_HALF_UP))


def read_text(path):
    with open(path, "rb") as f:
        data = f.read()
    data = decompress_any(data)
    return data.decode("utf-8")


def kineto_traces(root):
    """Every *.json / *.json.gz / *.json.xz file under root whose text holds "traceEvents" (links followed, each
    file once)."""
    found = {}
    for path in sorted(root.rglob("*")):
        if not path.name.endswith((".json", ".json.gz", ".json.xz")) or not path.is_file():
            continue
        if '"traceEvents"' in read_text(path):
            found.setdefault(path.resolve(), path)
    return sorted(found.values())


# ---- demangling -------------------------------------------------------------------------------

def gnu_demangle(names):
    """GNU c++filt's spelling of each name (the name itself where c++filt cannot demangle it)."""
    if not names:
        return {}
    cxxfilt = shutil.which("c++filt")
    if cxxfilt is None:
        raise SystemExit("FAIL c++filt (GNU binutils) not found: the kernel names cannot be checked")
    out = subprocess.run([cxxfilt, "--no-recurse-limit"], input="".join(n + "\n" for n in names),
                         check=True, capture_output=True, text=True).stdout.split("\n")
    if len(out) != len(names) + 1 or out[-1] != "":
        raise SystemExit(f"FAIL c++filt gave {len(out) - 1} lines for {len(names)} names")
    return dict(zip(names, out))


OPEN, CLOSE = "<([{", ">)]}"


def split_top(text, sep=","):
    """text split at the separators outside any bracket."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in OPEN:
            depth += 1
        elif c in CLOSE:
            depth -= 1
        elif c == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def matching_open(text, close_at):
    """Index of the bracket opening the one that closes at close_at."""
    depth = 0
    for i in range(close_at, -1, -1):
        if text[i] in CLOSE:
            depth += 1
        elif text[i] in OPEN:
            depth -= 1
            if depth == 0:
                return i
    return -1


def normalised(name):
    """A demangled name with cu++filt's and GNU c++filt's known spelling differences removed (the
    same function for both)."""
    # T1, T2 ... in the signature of a function template -> its template arguments (cu++filt).
    if name.endswith(")"):
        params_at = matching_open(name, len(name) - 1)
        if params_at > 0 and name[params_at - 1] == ">":
            args_at = matching_open(name, params_at - 1)
            args = [a.strip() for a in split_top(name[args_at + 1:params_at - 1])]

            def arg(m):
                k = int(m.group(1))
                return args[k - 1] if 1 <= k <= len(args) else m.group(0)

            # A pack expansion T3... of a one-element pack: GNU writes the element alone.
            name = name[:params_at] + re.sub(r"\bT(\d+)\b(?:\.\.\.)?", arg, name[params_at:])
    name = re.sub(r"\(int\)(-?\d+)", r"\1", name)
    name = re.sub(r"\(unsigned int\)(\d+)", r"\1u", name)
    name = name.replace("(bool)0", "false").replace("(bool)1", "true")
    name = re.sub(r" ([*&])", r"\1", name)
    while "> >" in name:
        name = name.replace("> >", ">>")
    # An empty template parameter pack: cu++filt (and so nsys and kernscope) keeps its separator
    # (`tuple<C<64>, C<32>, >`, `RegisterTest<, ...>`), GNU c++filt drops it (first seen on the
    # grouped_mm CUTLASS kernel of tests/fixtures/hf_generate/moe_*_torchprof).
    name = name.replace(", >", ">").replace("<, ", "<").replace(", , ", ", ")
    return name


# ---- expected and reported tables -----------------------------------------------------------------

REPORTS = (("cuda_gpu_kern_sum:mangled", "Name", "Instances"), ("cuda_gpu_kern_sum", "Name", "Instances"),
           ("cuda_api_sum", "Name", "Num Calls"), ("nvtx_sum", "Range", "Instances"))


def expected(path):
    """Per report, name -> [count, total ns], from the complete ("X") events of the JSON; kernels by
    their JSON name. Also the mangled kernel names."""
    doc = json.loads(read_text(path), parse_float=decimal.Decimal)
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        raise AssertionError("not a Kineto trace: no traceEvents list at the top level")
    tables = {report: collections.defaultdict(lambda: [0, 0]) for report, _, _ in REPORTS}
    for e in doc["traceEvents"]:
        if e.get("ph") != "X":
            continue
        cat = e.get("cat")
        if cat in KERNEL_CATS:
            entry = tables["cuda_gpu_kern_sum:mangled"][e["name"]]
        elif cat in API_CATS:
            entry = tables["cuda_api_sum"][e["name"]]
        elif cat in RANGE_DOMAINS:
            entry = tables["nvtx_sum"][RANGE_DOMAINS[cat] + ":" + e["name"]]
        else:
            continue
        entry[0] += 1
        entry[1] += to_ns(e.get("dur", 0))
    return {report: dict(table) for report, table in tables.items()}


def shown_kernels(raw, demangled):
    """The kernel table under the names kernscope should show: (table, names that came mangled and
    were demangled by c++filt, known differences)."""
    shown, from_mangled, known = {}, set(), []
    for name, value in raw.items():
        display = demangled.get(name, name)
        if display != name:
            why = next((why for rule, why in KNOWN_UNDEMANGLED if rule(name)), None)
            if why is not None:
                known.append((name, value, why))
                display = name
            else:
                from_mangled.add(display)
        if display in shown:
            raise AssertionError(f"two JSON names show as {display[:80]!r}")
        shown[display] = value
    return shown, from_mangled, known


def reported(kernscope, path, report, name_column, count_column):
    """kernscope's rows (name -> [count, total ns]); None when it said the trace has no such data."""
    result = subprocess.run([kernscope, "stats", "--report", report, "--format", "csv", str(path)],
                            check=True, capture_output=True, text=True)
    lines = result.stdout.splitlines()
    base = report.split(":")[0]
    if not lines:
        said_no_data = any(f"SKIPPED {r}" in result.stderr or f"{r}: no data" in result.stderr for r in (report, base))
        if not said_no_data:
            raise AssertionError(f"{report} printed nothing and did not say why: {result.stderr!r}")
        return None
    if not lines[0].startswith("Time"):
        raise AssertionError(f"{report} printed no CSV table: {lines[0][:100]!r}")
    rows = collections.defaultdict(lambda: [0, 0])
    for row in csv.DictReader(io.StringIO("\n".join(lines))):
        entry = rows[row[name_column]]  # nvtx_sum has a row per style (push/pop, start/end) of a range
        entry[0] += int(row[count_column])
        entry[1] += int(row["Total Time (ns)"])
    return dict(rows)


def by_expected_spelling(got, want, from_mangled):
    """kernscope's kernel rows, a demangled name renamed to the expected (GNU) spelling where the two
    are equal once normalised; every other name kept exactly as kernscope wrote it."""
    index = {}
    for name in from_mangled:
        index.setdefault(normalised(name), []).append(name)
    renamed = {}
    for name, value in got.items():
        key = name
        if name not in want:
            match = index.get(normalised(name), [])
            if len(match) == 1:
                key = match[0]
        if key in renamed:
            raise AssertionError(f"two kernscope names match {key[:80]!r}")
        renamed[key] = value
    return renamed


def check_file(kernscope, path, tables, demangled):
    """(names compared, failures, known differences) for one trace; tables: expected(path)."""
    shown, from_mangled, known = shown_kernels(tables["cuda_gpu_kern_sum:mangled"], demangled)
    tables["cuda_gpu_kern_sum"] = shown
    names_here = failures = 0
    for report, name_column, count_column in REPORTS:
        want = tables[report]
        try:
            got = reported(kernscope, path, report, name_column, count_column)
            if got is not None and report == "cuda_gpu_kern_sum":
                got = by_expected_spelling(got, want, from_mangled)
        except AssertionError as e:
            failures += 1
            print(f"FAIL {path.name} {e}")
            continue
        if got is None:
            if want:
                failures += 1
                print(f"FAIL {path.name} {report}: kernscope says no data, the JSON has {len(want)} names")
            else:
                print(f"ok   {path.name} {report}: no such events in the JSON, and kernscope says so")
            continue
        if got != want:
            failures += 1
            missing = sorted(set(want) - set(got))
            extra = sorted(set(got) - set(want))
            diff = [n for n in sorted(set(want) & set(got)) if want[n] != got[n]]
            print(f"FAIL {path.name} {report}: {len(missing)} names missing, {len(extra)} extra, "
                  f"{len(diff)} with other numbers ([count, total ns] JSON vs kernscope)")
            for n in missing:
                print(f"       missing {want[n]} {n[:160]}")
            for n in extra:
                print(f"       extra   {got[n]} {n[:160]}")
            for n in diff:
                print(f"       differs {want[n]} vs {got[n]} {n[:160]}")
            if report == "cuda_gpu_kern_sum" and {name for name, _, _ in known} & set(missing):
                print("       (a name of KNOWN_UNDEMANGLED is no longer shown mangled: if kernscope now "
                      "demangles it, drop it from KNOWN_UNDEMANGLED)")
            continue
        names_here += len(want)
        note = f", {len(from_mangled)} demangled" if report == "cuda_gpu_kern_sum" and from_mangled else ""
        print(f"ok   {path.name} {report}: {len(want)} names{note}, {sum(v[0] for v in want.values())} events")
    for name, value, why in known:
        print(f"known {path.name} cuda_gpu_kern_sum: kernscope shows {name[:70]}... mangled "
              f"([count, total ns] {value}, equal to the JSON's); nsys would demangle it: {why}")
    if names_here == 0:
        failures += 1
        print(f"FAIL {path.name}: no name was compared")
    return names_here, failures, len(known)


def main():
    kernscope, root = sys.argv[1], pathlib.Path(sys.argv[2])
    traces = kineto_traces(root)
    print(f"{len(traces)} Kineto traces under {root} (*.json / *.json.gz / *.json.xz holding \"traceEvents\"):")
    for path in traces:
        print(f"     {path.relative_to(root)}")
    tables = {}
    for path in traces:
        try:
            tables[path] = expected(path)
        except (AssertionError, ValueError) as e:
            print(f"FAIL {path.relative_to(root)}: {e}")
    demangled = gnu_demangle(sorted({name for t in tables.values() for name in t["cuda_gpu_kern_sum:mangled"]
                                     if name.startswith("_Z")}))
    failures = checked = passed = known = 0
    for path, expected_tables in tables.items():
        names_here, failed, known_here = check_file(kernscope, path, expected_tables, demangled)
        checked += names_here
        known += known_here
        failures += failed
        passed += failed == 0
    print(f"{checked} names checked; {passed} of the {len(traces)} Kineto traces found agree"
          + (f"; {known} kernel names kernscope leaves mangled (known, listed above)" if known else ""))
    if passed < len(traces) or not traces:
        print(f"FAIL {len(traces) - passed} of the {len(traces)} Kineto traces under {root} were not checked or disagree")
        return 1
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
