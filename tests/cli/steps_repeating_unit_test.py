#!/usr/bin/env python3
"""A unit that repeats inside a step is not a step (issue 27): `kernscope report` on real engine traces whose
step annotations are taken away.

Each trace below is one engine step: SGLang's prefill of Qwen3-8B (36 decoder layers) and vLLM's mixed step of
gpt-oss (24 layers). Their annotations (SGLang's step[...], vLLM's execute_..._context_..._generation_...) are
renamed to a word that names no step, as in a trace of an engine kernscope does not know. Without them the
work's period is a layer; each step still has one forward pass, whose embedding and sampling kernels (or the
embedding alone where the sampler is not traced) the layers do not hold. Expected, from the traces' own
structure (a person reads it off the Python functions: one model forward per trace):
  - one step, not 36 or 24; the step is the innermost range holding the repeated unit (the model's forward);
  - the report says the unit is a part of a step.
Untouched, the bundled Kineto decode trace (17 decode steps found by the period, each with its own sampling)
keeps its 17 steps: the rule does not take steps whose units hold a step's own kernels.
Breaking check: with the rule's "most units hold none" comparison inverted (step_windows.cpp,
unit_inside_steps), the first two cases report 36 and 24 steps and fail (checked 2026-11-28).
usage: steps_repeating_unit_test.py KERNSCOPE FIXTURES_DIR"""
import json
import pathlib

import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
from compressed import open_any  # noqa: E402



def without_step_annotations(source, out):
    with open_any(source, "rt", encoding="utf-8") as f:
        doc = json.load(f)
    renamed = 0
    for e in doc["traceEvents"]:
        if e.get("cat") in ("user_annotation", "gpu_user_annotation") or (e.get("cat") == "python_function" and "execute_model" in e.get("name", "")):
            e["name"] = f"region_{renamed % 3}"
            renamed += 1
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
    cases = [("tracelens__traces__inference__sglang_prefilldecode__sglang_Qwen3-8B_prefilldecode.json.xz", "qwen2.py"),
             ("tracelens__traces__inference__vllm_prefilldecode_piecewise__graph_execution.json.xz", "forward")]
    with tempfile.TemporaryDirectory() as tmp:
        for name, forward in cases:
            path = pathlib.Path(tmp) / name.replace(".xz", "")
            renamed = without_step_annotations(fixtures / name, path)
            steps = report(kernscope, path)
            ok = steps["count"] == 1 and "a part of a step" in steps["method"] and forward in steps["method"]
            print(f"{'ok  ' if ok else 'FAIL'} {name}: {renamed} annotations renamed; {steps['count']} step(s): {steps['method'][:240]}")
            if not ok:
                failures.append(name)
    steps = report(kernscope, fixtures / "llama_decode_h200_gen16.json.xz")
    ok = steps["count"] == 17 and "part of a step" not in steps["method"]
    print(f"{'ok  ' if ok else 'FAIL'} llama_decode_h200_gen16.json.xz: {steps['count']} steps: {steps['method'][:160]}")
    if not ok:
        failures.append("llama_decode_h200_gen16")
    if failures:
        sys.exit(1)


if __name__ == "__main__":
    main()
