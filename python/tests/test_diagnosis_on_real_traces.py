"""The diagnosis on traces other people made (tests/fixtures/README.md gives their provenance).

Each expectation is what a person reading the trace concludes, as the fixtures' README states it,
never what kernscope printed: a kernel benchmark is not LLM inference and its NVTX names
(resolveForwardedInputs) are not steps; a video-diffusion inference trace has thousands of ranges
whose names contain "forward" and none of them is a step; the FastVideo windows are training;
the Llama decode is LLM inference, with 1 prefill and 64 decode steps per phase.
"""
import pathlib

import pytest

import kernscope

NSYS = pathlib.Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "nsys"


def report(name):
    return kernscope.open(str(NSYS / name / "trace.sqlite.gz")).report()


def test_llama_decode_is_llm_inference_with_its_steps():
    r = report("llama_decode_h200")
    assert r["workload"]["kind"] == "llm_inference"
    assert r["workload"]["evidence"]
    groups = {g["name"]: g for g in r["steps"]["groups"]}
    assert groups[":measure:decode_step"]["wall"]["count"] == 64
    assert r["steps"]["tpot"]["count"] == 64 and r["steps"]["ttft"]["count"] == 1


def test_kernel_benchmark_is_not_llm_and_its_names_are_not_steps():
    r = report("fuser_h200")
    assert r["workload"]["kind"] != "llm_inference"
    assert not any("resolveForwardedInputs" in g["name"] for g in r["steps"]["groups"])
    assert r["steps"]["tpot"]["count"] == 0 and r["steps"]["ttft"]["count"] == 0
    assert not any(f["rule"].startswith("llm_") for f in r["findings"])


def test_forward_ranges_of_a_video_model_are_not_steps():
    r = report("nsysai_h100_2gpu_1s")
    assert r["workload"]["kind"] != "llm_inference"
    for g in r["steps"]["groups"]:
        assert "forward" not in g["name"].lower(), g["name"]
    assert r["steps"]["count"] < 200


@pytest.mark.parametrize("name", ["nsysai_mfu_2gpu_before", "nsysai_mfu_2gpu_after"])
def test_training_windows_are_training(name):
    r = report(name)
    assert r["workload"]["kind"] == "training"
    assert not any(a.lower().startswith(("capture the decode", "measure the bandwidth efficiency of the decode"))
                   for a in r["next_actions"])


def test_a_database_join_benchmark_has_no_llm_phases():
    r = report("mordred_quadro_rtx6000")
    assert r["workload"]["kind"] in ("benchmark", "unknown")
    assert all(g["phase"] == "unknown" for g in r["steps"]["groups"])


def test_an_export_with_tables_but_no_events_says_so(tmp_path):
    # A 2021-style export: nsys's string and enum tables, no metadata table, no event table.
    import sqlite3

    path = tmp_path / "no_events.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL)")
    con.execute("CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER PRIMARY KEY, name TEXT, label TEXT)")
    con.commit()
    con.close()
    info = kernscope.open(str(path)).info
    assert any("nothing was traced" in n for n in info["notes"])
    assert all(c in (0, None) for c in info["counts"].values())
