#!/usr/bin/env python3
"""Steps of engine traces without their step annotations (issue 27), `kernscope report` on real traces whose
annotations are taken away.

1. A unit that repeats inside a step is not a step. Each trace below is one step: SGLang's prefill of Qwen3-8B
   (36 decoder layers), vLLM's mixed step of gpt-oss (24 layers), Hugging Face's Qwen1.5-0.5B forward under
   torch.profiler (24 layers). Their annotations (SGLang's step[...], vLLM's execute_..._context_..._generation_...
   and execute_model, torch.profiler's ProfilerStep#N) are renamed to a word that names no step, as in a
   trace of an engine kernscope does not know. Without them the work's period is a layer; each step still has
   one forward pass, whose embedding and sampling kernels (or the embedding alone where the sampler is not
   traced) the layers do not hold. Expected, from the traces' own structure (a person reads it off the
   Python functions: one model forward per trace): one step, not 36 or 24; the step is the innermost range
   holding the repeated unit (the model's forward); the report says the unit is a part of a step.
2. Text-generation-inference's step is its Python method generate_token (its OpenTelemetry span is not in GPU
   profiles): the Qwen trace's causal-LM forward renamed as TGI's generate_token (what its file and line would
   read) is found as the one step, by that name.
3. Untouched, the bundled Kineto decode trace (17 decode steps found by the period, each with its own sampling)
   keeps its 17 steps: the rule does not take steps whose units hold a step's own kernels.
Breaking check: with the rule's "most units hold none" comparison inverted (step_windows.cpp,
unit_inside_steps), the SGLang and vLLM cases report 36 and 24 steps and fail (checked 2026-11-28).
usage: steps_unannotated_test.py KERNSCOPE FIXTURES_DIR"""
import json
import pathlib

import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
from compressed import open_any  # noqa: E402



def without_step_annotations(source, out, rename=None):
    """The trace with its step annotations renamed; `rename` maps other event names to new ones."""
    with open_any(source, "rt", encoding="utf-8") as f:
        doc = json.load(f)
    renamed = 0
    for e in doc["traceEvents"]:
        name = e.get("name", "")
        if e.get("cat") in ("user_annotation", "gpu_user_annotation") or "execute_model" in name or name.startswith("ProfilerStep#"):
            e["name"] = f"region_{renamed % 3}"
            renamed += 1
        elif rename and name in rename:
            e["name"] = rename[name]
    out.write_text(json.dumps(doc))
    return renamed


def report(kernscope, path):
    r = subprocess.run([kernscope, "report", "--format", "json", str(path)], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"FAIL report {path}: exit {r.returncode}: {r.stderr.strip()}")
    return json.loads(r.stdout)["steps"]


def main():
    kernscope, fixtures = sys.argv[1], pathlib.Path(sys.argv[2]) / "kineto"
    failures = []
    qwen = "tracelens__traces__h100__Qwen_Qwen1.5-0.5B-Chat__1016005.json.xz"
    tgi = {"transformers/models/qwen2/modeling_qwen2.py(503): forward":
           "text_generation_server/models/flash_causal_lm.py(1702): generate_token"}
    cases = [("tracelens__traces__inference__sglang_prefilldecode__sglang_Qwen3-8B_prefilldecode.json.xz", None, "qwen2.py", "a part of a step"),
             ("tracelens__traces__inference__vllm_prefilldecode_piecewise__graph_execution.json.xz", None, "forward", "a part of a step"),
             (qwen, None, "modeling_qwen2.py", "a part of a step"),
             (qwen, tgi, "generate_token", "once per step")]
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, rename, step, why) in enumerate(cases):
            path = pathlib.Path(tmp) / f"{i}-{name.replace('.xz', '')}"
            renamed = without_step_annotations(fixtures / name, path, rename)
            steps = report(kernscope, path)
            ok = steps["count"] == 1 and why in steps["method"] and step in steps["method"]
            label = name + (" (as TGI)" if rename else "")
            print(f"{'ok  ' if ok else 'FAIL'} {label}: {renamed} annotations renamed; {steps['count']} step(s): {steps['method'][:240]}")
            if not ok:
                failures.append(label)
    steps = report(kernscope, fixtures / "llama_decode_h200_gen16.json.xz")
    ok = steps["count"] == 17 and "part of a step" not in steps["method"]
    print(f"{'ok  ' if ok else 'FAIL'} llama_decode_h200_gen16.json.xz: {steps['count']} steps: {steps['method'][:160]}")
    if not ok:
        failures.append("llama_decode_h200_gen16")
    if failures:
        sys.exit(1)


if __name__ == "__main__":
    main()
