#!/usr/bin/env python3
"""Independent truth for issue 31 (mixture of experts, speculative decoding), from the raw traces.

Standard library only (json, gzip, lzma, sqlite3). Nothing here calls kernscope or reads its rules
(data/op_rules.tsv): the kernel groups are this script's own name patterns, each justified in
docs/research/moe_and_speculative_evidence.md ("Name patterns" section). They key on libraries'
naming conventions (vLLM, SGLang, TensorRT-LLM, DeepEP, DeepGEMM, triton_kernels, aiter/CK), never
on one trace's names.

What it computes, per Kineto trace (default: the two shared MoE traces, read in place):
  - the MoE kernel groups: routed-expert GEMMs, router/top-k/gating, token permute/align/sort/
    unpermute (routing metadata included), dispatch/combine communication, other kernels that
    name MoE; per group: count, total duration (Kineto `dur`, us) and share of the summed
    duration of all GPU kernels (a sum over kernels, not the busy time of their union);
  - per name within each group;
  - per graph launch (kernels carrying the correlation id of a cuda/hipGraphLaunch), per step
    annotation (kernels launched inside ProfilerStep#N / execute_*_context_*_generation_* /
    step[...] etc. on the same process) and per innermost user annotation of the launching
    thread (e.g. DualPipe's dispatch(F)/mlp(F)/combine(F));
  - kernels the name rules leave out although a person reading the trace would call them MoE
    work ("ambiguous"), listed so the C++ side knows where names are not enough;
  - speculative-decoding evidence (kernel, annotation, python_function and NVTX names).

`--fixtures DIR` scans every Kineto/nsys trace under DIR (default tests/fixtures) and says which
hold any MoE or speculative evidence at all.

Usage:
  python3 tests/realworld/moe_truth.py            # readable tables for the two shared traces
  python3 tests/realworld/moe_truth.py --json     # the expected values as one JSON document
  python3 tests/realworld/moe_truth.py --fixtures [DIR] [--json]
  python3 tests/realworld/moe_truth.py TRACE...   # any Kineto JSON (.json, .json.gz, .json.xz)
"""

import argparse
import gzip
import json
import lzma
import os
import re
import sqlite3
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SHARED = os.path.join(os.path.dirname(REPO), "shared", "fixtures", "realworld")
SHARED_MOE_TRACES = [
    "tracelens__traces__inference__vllm_prefilldecode_piecewise__graph_execution.json.gz",
    "deepseek_profile_data__train.json.gz",
]

# --------------------------------------------------------------------------------------------
# Name patterns (case-insensitive, searched anywhere in the kernel name). First group that
# matches wins; the order matters (dispatch/combine before permute: DeepEP's names hold both).
# The doc's "Name patterns" table gives the source line of each alternative.
# --------------------------------------------------------------------------------------------
GROUP_ORDER = ["dispatch_combine", "expert_gemm", "router", "permute", "moe_other"]
GROUP_TITLE = {
    "expert_gemm": "routed-expert GEMMs",
    "router": "router / top-k / gating",
    "permute": "token permute / align / sort / unpermute (routing metadata)",
    "dispatch_combine": "dispatch / combine communication",
    "moe_other": "other kernels that name MoE",
}
GROUP_PATTERNS = {
    # DeepEP normal and low-latency kernels: deep_ep::{intranode,internode,internode_ll}::
    # {notify_dispatch,dispatch,cached_notify*,combine,...}; DeepSeek's own build spells the
    # namespace dpsk::ep::; forks keep the inner names (primus_turbo::deep_ep::, uccl::).
    # pplx-kernels all-to-all; kernels named for an all-to-all. Namespaced, so a kernel merely
    # called "combine" elsewhere is not taken.
    "dispatch_combine": re.compile(
        r"(deep_?ep|dpsk::ep|\bep)::(\w+::)*(intranode|internode|internode_ll|low_latency)?"
        r"(::)?\w*?(notify_dispatch|notify_combine|cached_notify\w*|dispatch|combine|clean_low_latency_buffer)\b"
        r"|pplx\w*::\w*(dispatch|combine)|all_?to_?all",
        re.I),
    # Routed-expert GEMMs. vLLM/SGLang Triton fused_moe_kernel(_gptq_awq); vLLM/TRT-LLM CUTLASS
    # MoE GEMMs (MoeFCGemm, moe_gemm, cutlass_moe_mm / cutlass_moe); DeepGEMM m_grouped_* and
    # k_grouped_* (and DeepSeek's m_grouped_fp8_ptp128c); triton_kernels matmul_ogs (gather/
    # scatter = routed); Marlin MoE; aiter/CK fused MoE (fmoe, ck_moe, kernel_moe_gemm,
    # FusedMoeGemm, MoeFlatmm); trtllm-gen batched GEMM (bmm_*dynBatch); CUTLASS grouped GEMMs
    # (GemmGrouped, GroupProblemShape) and torch._grouped_mm. "grouped_gemm::" as a namespace
    # is NOT enough: DeepSeek's dpsk::grouped_gemm::cuda::fp8_ptp128c is a plain GEMM used for
    # attention projections too.
    "expert_gemm": re.compile(
        r"fused_moe_kernel|fused_moe_\w*gemm|moe_?gemm|MoeFCGemm|cutlass_moe|moe_mm\b|\bm_grouped_|\bk_grouped_"
        r"|matmul_ogs|marlin_moe|moe_wna16|(^|[^a-z])fmoe|ck_moe|kernel_moe_gemm|FusedMoeGemm|MoeFlatmm"
        r"|^bmm_\w*dynBatch|GemmGrouped|GroupProblemShape|grouped_?mm\b|grouped_gemm(?!::)",
        re.I),
    # Router top-k / gating: vLLM/SGLang/TRT-LLM topkGatingSoftmax, moeSoftmax, moeTopK,
    # topk_softmax; grouped_topk / biased_grouped_topk / moe_fused_gate / noaux_tc (DeepSeek-V3
    # routing); TRT-LLM/flashinfer routingMainKernel, routingIndices*; router GEMMs named as such
    # (vLLM dsv3_router_gemm, llama4_router_gemm, gpt_oss_router_gemm, fp32_router_gemm);
    # triton_kernels _topk_forward; DeepSeek's topk_sum_and_topk_idx (group-limited top-k).
    "router": re.compile(
        r"topkGatingSoftmax|moeSoftmax|moeTopK|topk_?softmax|grouped_?topk|moe_fused_gate|noaux_?tc"
        r"|routingMainKernel|routingIndices|routing\w*TopK|router_gemm|_topk_forward|topk_sum_and_topk_idx"
        r"|moe_gating|gating_?softmax|topk_?sigmoid",
        re.I),
    # Permute / align / sort / unpermute and routing metadata: vLLM/SGLang moe_align_block_size
    # (+ count_and_sort_expert_tokens, small_batch_expert), moe_sum, moe_permute/unpermute,
    # shuffle_rows, CUTLASS MoE compute_problem_sizes / compute_expert_offsets; TRT-LLM
    # expandInputRows, finalizeMoeRouting, build/sort expert maps, expert prefix sums;
    # ck_tile/aiter MoeSorting / moe_sorting; triton_kernels routing (_combined_routing_*,
    # _routing_*, _sum_bitmatrix_rows, _expt_data*) and _finalize_matmul* (scatter + top-k sum);
    # DeepEP get_dispatch_layout (tokens per rank/expert); DeepSeek's clean_and_count_expert.
    "permute": re.compile(
        r"moe_align_block_size|count_and_sort_expert_tokens|small_batch_expert|moe_sum|moe_?permute|moe_?unpermute"
        r"|shuffle_rows|compute_problem_sizes|compute_expert_offsets|expandInputRows|finalizeMoeRouting"
        r"|ExpertMaps|ExpertPrefixSum|moe_?sorting|MoeSorting|_combined_routing|_routing_(compute|memset|clear)"
        r"|sum_bitmatrix|_expt_data|_finalize_matmul|get_dispatch_layout|count_expert|token_to_expert"
        r"|moe_?reorder|prepare_moe_input|moe_permute_prepare|deepep_scatter_gather",
        re.I),
    # Anything else that names MoE (e.g. Inductor's triton_poi_fused_..._moe_forward_0 pad).
    "moe_other": re.compile(r"moe|expert", re.I),
}
# Kernels a reader would call MoE work but whose names do not say so (reported, never classed).
AMBIGUOUS = re.compile(
    r"grouped_gemm::|gatherTopK|sbtopk|radixSelect|fused_mapping|reduce_fused|expand_to_fused"
    r"|swiglu\w*with_weight|unique_group_indices|aux_fi",
    re.I)

SPEC_KERNEL = re.compile(
    r"rejection_(greedy|random)_sample|sample_recovered_tokens|VerifyTreeGreedy|verify_tree_greedy"
    r"|TreeSpeculativeSampling|tree_speculative_sampling|build_tree_kernel|generate_draft_decode_kv_indices"
    r"|eagle|medusa|spec_decode|speculative",
    re.I)
SPEC_HOST = re.compile(
    r"_assisted_decoding|AssistedCandidateGenerator|candidate_generator|get_candidates|_speculative_sampling"
    r"|EagleProposer|eagle_worker|EAGLEWorker|draft_forward|forward_draft|SpecDecodeWorker|spec_decode"
    r"|speculative|rejection_sampler|\bpropose\b|draft_model|verify_tree",
    re.I)
# Names that contain "spec"/"draft" words but are no evidence: vLLM's InputBatch bookkeeping runs
# every step whether or not speculation is on; Triton's argument specialisation; SGLang's mode
# predicates (SpeculativeAlgorithm.is_none, ForwardMode.is_target_verify / is_draft_extend,
# ScheduleBatch.is_spec_v2), called on every batch: the sglang Qwen3-8B fixture has them with
# speculation off.
SPEC_NOT_EVIDENCE = re.compile(r"update_req_spec_token_ids|specializ", re.I)
PY_FUNCTION = re.compile(r"^(?P<path>.*)\((?P<line>\d+)\):\s*(?P<func>\S*)$")


def host_spec_evidence(cat, name):
    """True when a host-side name (annotation, cpu_op, python_function, NVTX) shows speculation."""
    if SPEC_NOT_EVIDENCE.search(name):
        return False
    m = PY_FUNCTION.match(name) if cat == "python_function" else None
    if m:
        func = m.group("func")
        if func.startswith("is_"):
            return False  # a mode predicate, evaluated whether or not speculation runs
        if re.search(r"[/\\]speculative[/\\]|[/\\]spec_decode[/\\]", m.group("path")):
            return True
        return bool(SPEC_HOST.search(func))
    return bool(SPEC_HOST.search(name) or SPEC_KERNEL.search(name))


STEP_NAME = re.compile(
    r"(^|[:/])ProfilerStep#\d+$|execute_(\d+_)?context_\d+|^step\[[A-Z_]+|(^|[:/])(prefill|decode|decode_step|"
    r"prefill_step|execute_model|generate_step|forward_step|train_step)(_\d+)?$",
    re.I)


def classify(name):
    for g in GROUP_ORDER:
        if GROUP_PATTERNS[g].search(name):
            return g
    return None


# --------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------
def read_bytes(path):
    with open(path, "rb") as f:
        head = f.read(6)
    if head[:2] == b"\x1f\x8b":
        with gzip.open(path, "rb") as f:
            return f.read()
    if head == b"\xfd7zXZ\x00":
        with lzma.open(path, "rb") as f:
            return f.read()
    with open(path, "rb") as f:
        return f.read()


def load_kineto(path):
    data = json.loads(read_bytes(path).decode("utf-8", errors="replace"))
    events = data.get("traceEvents", []) if isinstance(data, dict) else data
    return [e for e in events if isinstance(e, dict)]


def short(name, n=110):
    s = re.sub(r"\(.*$", "", name) if not name.startswith("_Z") else name
    return s if len(s) <= n else s[: n - 3] + "..."


def is_kernel(e):
    return e.get("ph") == "X" and str(e.get("cat", "")).lower() == "kernel"


def enclosing(sorted_ranges, pid, tid, ts, end):
    """Innermost range of (pid, tid) holding [ts, end]; sorted_ranges: list of (ts, dur, name, pid, tid)."""
    best = None
    for r in sorted_ranges:
        if r[0] > ts:
            break
        if r[3] == pid and (tid is None or r[4] == tid) and r[0] <= ts and end <= r[0] + r[1]:
            if best is None or r[1] <= best[1]:
                best = r
    return best


def new_tally():
    return {"count": 0, "dur_us": 0.0}


def add(t, dur):
    t["count"] += 1
    t["dur_us"] += dur


def rnd(x):
    return round(x, 3)


def analyze_kineto(path):
    events = load_kineto(path)
    kernels = [e for e in events if is_kernel(e)]
    runtime = {}
    for e in events:
        cat = str(e.get("cat", "")).lower()
        if cat in ("cuda_runtime", "cuda_driver", "runtime") and e.get("ph") == "X":
            corr = (e.get("args") or {}).get("correlation")
            if corr is not None:
                runtime[(e.get("pid"), corr)] = e
    # Kineto files kernels under the GPU's pid; the runtime call under the host's. Match by
    # correlation id alone when it is unique in the file (it is, per process, in Kineto).
    runtime_by_corr = {}
    for (pid, corr), e in runtime.items():
        runtime_by_corr.setdefault(corr, []).append(e)
    annotations = sorted(
        ((e["ts"], e.get("dur", 0), e["name"], e.get("pid"), e.get("tid"))
         for e in events if str(e.get("cat", "")).lower() == "user_annotation" and e.get("ph") == "X"),
        key=lambda r: r[0])
    steps = [r for r in annotations if STEP_NAME.search(r[2])]

    total = new_tally()
    groups = {g: new_tally() for g in GROUP_ORDER}
    names = {g: {} for g in GROUP_ORDER}
    ambiguous = {}
    per_launch = {}   # graph launch correlation -> info
    per_step = {}     # step name+ts -> tallies
    per_annotation = {}
    spec_kernels = {}
    for k in kernels:
        name = k.get("name", "")
        dur = float(k.get("dur", 0) or 0)
        add(total, dur)
        g = classify(name)
        corr = (k.get("args") or {}).get("correlation")
        launches = runtime_by_corr.get(corr, [])
        launch = launches[0] if len(launches) == 1 else None
        if g:
            add(groups[g], dur)
            add(names[g].setdefault(short(name), new_tally()), dur)
        elif AMBIGUOUS.search(name):
            add(ambiguous.setdefault(short(name), new_tally()), dur)
        if SPEC_KERNEL.search(name):
            add(spec_kernels.setdefault(short(name), new_tally()), dur)
        if launch is not None and "graphlaunch" in launch.get("name", "").lower():
            info = per_launch.setdefault(corr, {"correlation": corr, "launch_ts": launch["ts"], "kernels": new_tally(),
                                                "groups": {x: new_tally() for x in GROUP_ORDER}})
            add(info["kernels"], dur)
            if g:
                add(info["groups"][g], dur)
        if launch is not None:
            lts, lend = launch["ts"], launch["ts"] + launch.get("dur", 0)
            for s in steps:
                if s[3] == launch.get("pid") and s[0] <= lts <= s[0] + s[1]:
                    key = "%s @%s" % (s[2][:60], s[0])
                    st = per_step.setdefault(key, {"kernels": new_tally(), "groups": {x: new_tally() for x in GROUP_ORDER}})
                    add(st["kernels"], dur)
                    if g:
                        add(st["groups"][g], dur)
            inner = enclosing(annotations, launch.get("pid"), launch.get("tid"), lts, lend)
            if inner is not None and g:
                pa = per_annotation.setdefault(inner[2][:60], {x: new_tally() for x in GROUP_ORDER})
                add(pa[g], dur)

    def finish(t):
        return {"count": t["count"], "dur_us": rnd(t["dur_us"]),
                "share_pct": rnd(100.0 * t["dur_us"] / total["dur_us"]) if total["dur_us"] else 0.0}

    out = {
        "trace": os.path.basename(path),
        "kernels": {"count": total["count"], "dur_us": rnd(total["dur_us"])},
        "groups": {g: finish(groups[g]) for g in GROUP_ORDER},
        "moe_all": finish({"count": sum(groups[g]["count"] for g in GROUP_ORDER),
                           "dur_us": sum(groups[g]["dur_us"] for g in GROUP_ORDER)}),
        "names": {g: {n: finish(t) for n, t in sorted(names[g].items(), key=lambda kv: -kv[1]["dur_us"])}
                  for g in GROUP_ORDER if names[g]},
        "router_invocations": groups["router"]["count"],
        "ambiguous_not_classed": {n: finish(t) for n, t in sorted(ambiguous.items(), key=lambda kv: -kv[1]["dur_us"])},
        "speculative_kernels": {n: finish(t) for n, t in spec_kernels.items()},
    }
    if per_launch:
        launches = sorted(per_launch.values(), key=lambda i: i["launch_ts"])
        rows = []
        for i, info in enumerate(launches):
            rows.append({"index": i, "correlation": info["correlation"], "kernels": info["kernels"]["count"],
                         "dur_us": rnd(info["kernels"]["dur_us"]),
                         "groups": {x: {"count": t["count"], "dur_us": rnd(t["dur_us"])}
                                    for x, t in info["groups"].items() if t["count"]}})
        with_moe = [r for r in rows if r["groups"].get("expert_gemm")]
        out["graph_launches"] = {
            "count": len(rows),
            "with_expert_gemm": len(with_moe),
            "without_expert_gemm": [r["index"] for r in rows if not r["groups"].get("expert_gemm")],
            "per_launch": rows,
        }
    if per_step:
        out["steps"] = {k: {"kernels": {"count": v["kernels"]["count"], "dur_us": rnd(v["kernels"]["dur_us"])},
                            "groups": {x: {"count": t["count"], "dur_us": rnd(t["dur_us"])} for x, t in v["groups"].items() if t["count"]}}
                        for k, v in per_step.items()}
    if per_annotation:
        out["innermost_annotation"] = {a: {x: {"count": t["count"], "dur_us": rnd(t["dur_us"])} for x, t in v.items() if t["count"]}
                                       for a, v in sorted(per_annotation.items())}
    host_spec = {}
    for e in events:
        cat = str(e.get("cat", "")).lower()
        if cat in ("user_annotation", "python_function", "cpu_op", "gpu_user_annotation"):
            n = e.get("name", "")
            if host_spec_evidence(cat, n):
                host_spec[n[:100]] = host_spec.get(n[:100], 0) + 1
    out["speculative_host_names"] = host_spec
    return out


# --------------------------------------------------------------------------------------------
# Fixture scan (Kineto and nsys)
# --------------------------------------------------------------------------------------------
def scan_sqlite(path):
    raw = read_bytes(path)
    fd, tmp = tempfile.mkstemp(suffix=".sqlite")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
        con = sqlite3.connect("file:%s?mode=ro" % tmp, uri=True)
        tables = {r[0] for r in con.execute("select name from sqlite_master where type='table'")}
        kernels = []
        if "CUPTI_ACTIVITY_KIND_KERNEL" in tables and "StringIds" in tables:
            cols = {r[1] for r in con.execute("pragma table_info(CUPTI_ACTIVITY_KIND_KERNEL)")}
            name_col = "demangledName" if "demangledName" in cols else "shortName"
            kernels = list(con.execute(
                "select s.value, k.[end]-k.start from CUPTI_ACTIVITY_KIND_KERNEL k join StringIds s on s.id=k.%s" % name_col))
        texts = []
        if "NVTX_EVENTS" in tables:
            cols = {r[1] for r in con.execute("pragma table_info(NVTX_EVENTS)")}
            if "textId" in cols and "StringIds" in tables:
                texts = [r[0] for r in con.execute(
                    "select coalesce(n.text, s.value) from NVTX_EVENTS n left join StringIds s on s.id=n.textId")
                    if r[0]]
            else:
                texts = [r[0] for r in con.execute("select text from NVTX_EVENTS") if r[0]]
        con.close()
    finally:
        os.unlink(tmp)
    return kernels, texts


def scan_file(path):
    """-> dict with MoE groups found and speculative names found (empty when none)."""
    if ".sqlite" in os.path.basename(path):
        kernels, texts = scan_sqlite(path)
        host = [("nvtx", t) for t in texts]
        kernels = [(n, d / 1000.0) for n, d in kernels]  # ns -> us
        fmt = "nsys"
    else:
        events = load_kineto(path)
        kernels = [(e.get("name", ""), float(e.get("dur", 0) or 0)) for e in events if is_kernel(e)]
        host = [(str(e.get("cat", "")).lower(), e.get("name", "")) for e in events
                if str(e.get("cat", "")).lower() in ("user_annotation", "python_function", "cpu_op", "gpu_user_annotation")]
        fmt = "kineto"
    groups = {}
    spec = {}
    for n, d in kernels:
        g = classify(n)
        if g:
            t = groups.setdefault(g, {"count": 0, "dur_us": 0.0, "names": set()})
            t["count"] += 1
            t["dur_us"] += d
            t["names"].add(short(n, 70))
        if SPEC_KERNEL.search(n):
            spec[short(n, 70)] = spec.get(short(n, 70), 0) + 1
    for cat, n in host:
        if host_spec_evidence(cat, n):
            spec[n[:70]] = spec.get(n[:70], 0) + 1
    return {"format": fmt, "kernels": len(kernels),
            "moe": {g: {"count": t["count"], "dur_us": rnd(t["dur_us"]), "names": sorted(t["names"])[:8]}
                    for g, t in groups.items()},
            "speculative": spec}


def trace_files(root):
    out = []
    for d, _, files in os.walk(root):
        if os.sep + "gold" in d + os.sep:
            continue
        for f in files:
            if re.search(r"\.(json|sqlite)(\.(gz|xz))?$", f):
                out.append(os.path.join(d, f))
    return sorted(out)


def is_trace_json(path):
    """A Kineto/Chrome trace (a traceEvents object or an event list), not e.g. a model config."""
    try:
        data = json.loads(read_bytes(path).decode("utf-8", errors="replace"))
    except (OSError, ValueError):
        return False
    return (isinstance(data, dict) and "traceEvents" in data) or isinstance(data, list)


# --------------------------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------------------------
def print_trace(r):
    print("=" * 100)
    print(r["trace"])
    print("  GPU kernels: %d, %.1f us (sum of Kineto dur)" % (r["kernels"]["count"], r["kernels"]["dur_us"]))
    print("  %-62s %6s %12s %7s" % ("group", "count", "dur_us", "share%"))
    for g in GROUP_ORDER:
        t = r["groups"][g]
        print("  %-62s %6d %12.1f %7.2f" % (GROUP_TITLE[g], t["count"], t["dur_us"], t["share_pct"]))
    t = r["moe_all"]
    print("  %-62s %6d %12.1f %7.2f" % ("all MoE groups", t["count"], t["dur_us"], t["share_pct"]))
    for g, rows in r["names"].items():
        print("  [%s]" % g)
        for n, t in rows.items():
            print("    %6d %12.1f %7.2f  %s" % (t["count"], t["dur_us"], t["share_pct"], n))
    if r["ambiguous_not_classed"]:
        print("  [not classed: MoE work by context, names do not say so]")
        for n, t in r["ambiguous_not_classed"].items():
            print("    %6d %12.1f %7.2f  %s" % (t["count"], t["dur_us"], t["share_pct"], n))
    gl = r.get("graph_launches")
    if gl:
        print("  graph launches: %d, with expert GEMMs: %d, without: %s" % (gl["count"], gl["with_expert_gemm"], gl["without_expert_gemm"]))
        print("    %4s %6s %10s | %s" % ("idx", "kern", "dur_us", "  ".join("%s n/us" % g for g in GROUP_ORDER[:4])))
        for row in gl["per_launch"]:
            cells = []
            for g in GROUP_ORDER[:4]:
                t = row["groups"].get(g)
                cells.append("%s %d/%.1f" % (g, t["count"], t["dur_us"]) if t else "%s -" % g)
            print("    %4d %6d %10.1f | %s" % (row["index"], row["kernels"], row["dur_us"], "  ".join(cells)))
    for k, v in (r.get("steps") or {}).items():
        print("  step %s: %d kernels, %.1f us; %s" % (k, v["kernels"]["count"], v["kernels"]["dur_us"],
              ", ".join("%s %d/%.1f" % (g, t["count"], t["dur_us"]) for g, t in v["groups"].items())))
    for a, v in (r.get("innermost_annotation") or {}).items():
        print("  in %-12s %s" % (a, ", ".join("%s %d/%.1f" % (g, t["count"], t["dur_us"]) for g, t in v.items())))
    print("  speculative evidence: kernels %s, host names %s" % (r["speculative_kernels"] or "none",
                                                                 r["speculative_host_names"] or "none"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("traces", nargs="*", help="Kineto JSON traces (default: the two shared MoE traces)")
    ap.add_argument("--json", action="store_true", help="print the expected values as JSON")
    ap.add_argument("--shared", default=SHARED, help="folder of the shared real-world traces")
    ap.add_argument("--fixtures", nargs="?", const=os.path.join(REPO, "tests", "fixtures"),
                    help="scan every trace under this folder (default tests/fixtures) for MoE/speculative evidence")
    args = ap.parse_args()

    if args.fixtures:
        found = {}
        for p in trace_files(args.fixtures):
            if ".sqlite" not in p and not is_trace_json(p):
                continue
            try:
                found[os.path.relpath(p, REPO)] = scan_file(p)
            except Exception as e:  # a fixture that does not parse is reported, not fatal
                found[os.path.relpath(p, REPO)] = {"error": "%s: %s" % (type(e).__name__, e)}
        if args.json:
            json.dump({"fixtures": found}, sys.stdout, indent=1, sort_keys=True)
            print()
        else:
            for p, r in found.items():
                if "error" in r:
                    print("%-100s ERROR %s" % (p, r["error"]))
                    continue
                moe = ", ".join("%s %d/%.1fus" % (g, t["count"], t["dur_us"]) for g, t in r["moe"].items()) or "-"
                spec = ", ".join("%s x%d" % kv for kv in r["speculative"].items()) or "-"
                print("%-100s %-6s kernels %6d | MoE: %s | speculative: %s" % (p, r["format"], r["kernels"], moe, spec))
        return 0

    paths = args.traces or [os.path.join(args.shared, n) for n in SHARED_MOE_TRACES]
    results = [analyze_kineto(p) for p in paths]
    if args.json:
        json.dump({"traces": results}, sys.stdout, indent=1, sort_keys=True)
        print()
    else:
        for r in results:
            print_trace(r)
    return 0


if __name__ == "__main__":
    sys.exit(main())
