"""docs/python.md runs as written: its ```python blocks, in order, in one namespace, from the
repository root (issue 32, item 2: the page walks a trace from load to diagnosis to diff)."""
import os
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_python_page_runs_top_to_bottom(capsys):
    page = (ROOT / "docs" / "python.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", page, flags=re.S)
    assert len(blocks) >= 5
    here = os.getcwd()
    os.chdir(ROOT)
    try:
        namespace = {}
        for i, block in enumerate(blocks):
            exec(compile(block, f"docs/python.md block {i + 1}", "exec"), namespace)
    finally:
        os.chdir(here)
    out = capsys.readouterr().out
    assert "predicted with CUDA graphs" in out and "nsys-sqlite" in out
