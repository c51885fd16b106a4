"""`kernscope report --format html` opened in a real headless Chromium: it loads with no console
error and no outside request, its charts are drawn (coloured pixels inside every plot area of a
screenshot), its tables sort, and kernel names (full of <, > and &) come out as the trace spells
them. Skipped only where no Chromium is installed (make deps installs Debian's `chromium`).

Proven able to fail (each broken once on purpose): the class chart's bars given fill="none"
(bar_chart.cpp): "chart-classes plot 0: 0 coloured pixels"; the sort script's order reversed
(page.cpp): the sort check; escape() passing '<' through (html_text.cpp): the page's structure
broke (a plot frame with negative width)."""
import sys
import io
import json
import os
import pathlib
import re
import shutil
import sqlite3
import subprocess
from decimal import Decimal

import pytest

from chromium_cdp import Browser, find_chromium
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "support"))
from compressed import decompress_any, open_any  # noqa: E402  (gzip, xz or plain by magic)

FIXTURES = pathlib.Path(__file__).resolve().parents[2] / "tests" / "fixtures"
LLAMA = FIXTURES / "nsys" / "llama_decode_h200" / "trace.sqlite.xz"
KINETO = FIXTURES / "kineto" / "llama_decode_h200_gen16.json.xz"  # the same workload, by PyTorch's profiler
NO_KERNELS = FIXTURES / "kineto" / "cupti_profiler__benchmark_result_924719_1679055439_trace.json.xz"
STEP_AND_KERNEL_CHARTS = ("chart-accounting-summary", "chart-accounting-groups", "chart-accounting-steps", "chart-step-duration", "chart-step-busy-idle",
                          "chart-classes", "chart-kernel-tails", "chart-kernel-histograms")

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (Debian package 'chromium'; make deps installs it)")

# A pixel is part of a data mark when it is coloured: axes, grid lines and text are grey.
COLOURFUL = 40          # max(r, g, b) - min(r, g, b)
MIN_MARK_PIXELS = 30    # per plot area


def colourful_pixels(image):
    from PIL import ImageChops

    r, g, b = image.split()
    spread = ImageChops.subtract(ImageChops.lighter(ImageChops.lighter(r, g), b), ImageChops.darker(ImageChops.darker(r, g), b))
    return sum(spread.histogram()[COLOURFUL + 1:])


def kernscope_cli():
    cli = os.environ.get("KERNSCOPE_CLI")
    assert cli, "set KERNSCOPE_CLI to the kernscope binary (make test does)"
    return cli


def top_kernels_nsys(path, n):
    """The n kernels with the most total time, read from the export with sqlite3."""
    raw = decompress_any(path.read_bytes())
    con = sqlite3.connect(":memory:")
    con.deserialize(raw)
    rows = con.execute("SELECT s.value, SUM(k.end - k.start) AS total FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                       "JOIN StringIds s ON s.id = k.demangledName GROUP BY s.value ORDER BY total DESC, s.value").fetchall()
    return rows[:n]


def top_kernels_kineto(path, n):
    """The same from the PyTorch-profiler JSON, with Python's json module (durations as exact decimals)."""
    with open_any(path, "rt") as f:
        events = json.load(f, parse_float=Decimal)["traceEvents"]
    totals = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "kernel":
            totals[e["name"]] = totals.get(e["name"], 0) + Decimal(e["dur"])
    return sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))[:n]


def flame_charts(trace):
    """The report's host flame graphs: one per group of steps that `kernscope host --format collapsed` gives stacks for."""
    run = subprocess.run([kernscope_cli(), "host", "--format", "collapsed", str(trace)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    groups = {line.split(";", 1)[0] for line in run.stdout.splitlines()}
    return tuple(f"chart-host-flame-{i}" for i in range(len(groups)))


@pytest.fixture(scope="module")
def browser():
    b = Browser(CHROMIUM)
    yield b
    b.close()


def check_page_in_browser(browser, page, charts_expected):
    """The checks every kernscope HTML page passes; returns nothing, fails on the first problem."""
    from PIL import Image

    html = page.read_text(encoding="utf-8")
    # Self-contained: nothing names another resource, and the page's policy forbids fetching.
    assert not re.search(r"""(?:src|href|action|srcset|poster|data)\s*=\s*["']?\s*(?:https?:|//)""", html, re.I)
    assert not re.search(r"""url\(\s*["']?\s*(?:https?:|//)|@import""", html, re.I)
    assert not re.search(r"<link\b|<script\b[^>]*\bsrc\s*=|<img\b|<iframe\b", html, re.I)
    assert "Content-Security-Policy" in html and "default-src 'none'" in html

    browser.events.clear()
    browser.open(page.as_uri())
    # The detail sections are folded: the page's own button opens them all, so every chart is drawn.
    browser.evaluate("document.getElementById('open-all')?.click()")
    browser.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")

    # No console error, no uncaught exception, no request leaving the file.
    problems = []
    for e in browser.events:
        p = e["params"]
        if e["method"] == "Runtime.consoleAPICalled" and p["type"] in ("error", "assert", "warning"):
            problems.append(f"console.{p['type']}: {[a.get('value', a.get('description')) for a in p['args']]}")
        elif e["method"] == "Runtime.exceptionThrown":
            problems.append(f"exception: {p['exceptionDetails'].get('text')} {p['exceptionDetails'].get('exception', {}).get('description')}")
        elif e["method"] == "Log.entryAdded" and p["entry"]["level"] in ("error", "warning"):
            problems.append(f"log {p['entry']['level']}: {p['entry']['text']}")
        elif e["method"] == "Network.requestWillBeSent" and not p["request"]["url"].startswith(("file:", "data:", "about:")):
            problems.append(f"outside request: {p['request']['url']}")
    assert problems == []
    assert any(e["method"] == "Network.requestWillBeSent" for e in browser.events), "the network was not watched"

    # Every chart is on the page, and every plot area in it holds coloured marks in the screenshot.
    charts = browser.evaluate("""Array.from(document.querySelectorAll('svg.chart')).map(svg => ({
        id: svg.id,
        frames: Array.from(svg.querySelectorAll('rect.plot-frame')).map(f => {
          const r = f.getBoundingClientRect();
          return [r.left + window.scrollX, r.top + window.scrollY, r.width, r.height];
        })}))""")
    assert sorted(c["id"] for c in charts) == sorted(charts_expected)
    shot = Image.open(io.BytesIO(browser.screenshot_png())).convert("RGB")
    for chart in charts:
        assert chart["frames"], chart["id"]
        for i, (x, y, w, h) in enumerate(chart["frames"]):
            # 2 px inside the frame: the axis lines lie on its edges.
            box = shot.crop((round(x) + 2, round(y) + 2, round(x + w) - 2, round(y + h) - 2))
            marks = colourful_pixels(box)
            assert marks >= MIN_MARK_PIXELS, f"{chart['id']} plot {i}: {marks} coloured pixels in {w:.0f}x{h:.0f}"


@pytest.mark.parametrize("trace, charts_expected, top_kernels", [
    (LLAMA, STEP_AND_KERNEL_CHARTS + ("chart-classes-by-phase",), top_kernels_nsys),
    (KINETO, STEP_AND_KERNEL_CHARTS + ("chart-classes-by-phase",), top_kernels_kineto),
    (NO_KERNELS, (), None),  # API calls only: a page without charts that says so, still without errors
], ids=["llama-nsys", "llama-kineto", "no-kernels"])
def test_report_html_in_headless_chromium(trace, charts_expected, top_kernels, browser, tmp_path):
    page = tmp_path / "report.html"
    run = subprocess.run([kernscope_cli(), "report", "--format", "html", "-o", str(page), str(trace)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "" and f"wrote {page}" in run.stderr
    check_page_in_browser(browser, page, tuple(charts_expected) + flame_charts(trace))

    if top_kernels is None:
        assert "No kernels in this trace." in browser.evaluate("document.body.innerText")
        return

    # Names as the trace spells them (escaping undone by the browser, not done twice or skipped),
    # in the order of their total time from an independent reading of the trace.
    want = top_kernels(trace, 10)
    drawn = browser.evaluate("Array.from(document.querySelectorAll('#chart-kernel-tails text[data-name]')).map(t => t.dataset.name)")
    assert drawn == [name for name, _ in want]
    listed = browser.evaluate("Array.from(document.querySelectorAll('#table-kernels tbody tr')).map(r => r.cells[0].textContent)")
    assert listed[:len(want)] == [name for name, _ in want]

    # Tables sort by a column's numbers when its header is clicked, descending then ascending.
    values = """Array.from(document.querySelectorAll('#table-kernels tbody tr')).map(r => Number(r.cells[1].dataset.v))"""
    browser.evaluate("document.querySelectorAll('#table-kernels th')[1].click()")
    calls = browser.evaluate(values)
    assert calls == sorted(calls, reverse=True) and len(calls) > 1
    browser.evaluate("document.querySelectorAll('#table-kernels th')[1].click()")
    assert browser.evaluate(values) == sorted(calls)


def test_roofline_html_in_headless_chromium(browser, tmp_path):
    # The MI300X Qwen trace has PyTorch's shapes (record_shapes): rows with FLOPs and bytes. The
    # roofs are grey, so the coloured pixels counted are the rows' dots.
    trace = FIXTURES / "kineto" / "tracelens__traces__mi300__Qwen_Qwen1.5-0.5B-Chat__1016005.json.xz"
    run = subprocess.run([kernscope_cli(), "roofline", "--format", "html", str(trace)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    page = tmp_path / "roofline.html"
    page.write_text(run.stdout, encoding="utf-8")
    check_page_in_browser(browser, page, ("chart-roofline",))
    assert browser.evaluate("document.querySelectorAll('#chart-roofline circle').length") > 0


def test_diff_html_in_headless_chromium(browser, tmp_path):
    # HTA's trace_diff pair (tests/fixtures/kineto): waterfalls by class and by kernel, tables.
    a = FIXTURES / "kineto" / "trace_diff__control__control.json.xz"
    b = FIXTURES / "kineto" / "trace_diff__test__test.json.xz"
    run = subprocess.run([kernscope_cli(), "diff", "--format", "html", str(a), str(b)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    page = tmp_path / "diff.html"
    page.write_text(run.stdout, encoding="utf-8")
    check_page_in_browser(browser, page, ("chart-diff-classes", "chart-diff-kernels"))
    # The waterfall starts at A's total and ends at B's, with the changes between.
    rows = browser.evaluate("Array.from(document.querySelectorAll('#chart-diff-classes text[data-name]')).map(t => t.dataset.name)")
    assert rows[0].startswith("A: ") and rows[-1].startswith("B: ") and len(rows) >= 3


PYSAMPLE = FIXTURES / "nsys" / "llama_decode_pysample_h200" / "trace.sqlite.xz"  # nsys's Python samples of the Llama decode


def collapsed_frames(text):
    """Every frame of `kernscope host --format collapsed` as its path from its group's root, with its samples
    (a frame holds the samples of every line that passes through it)."""
    out = {}
    for line in text.splitlines():
        stack, _, count = line.rpartition(" ")
        frames = tuple(stack.split(";"))
        for depth in range(1, len(frames) + 1):
            out[frames[:depth]] = out.get(frames[:depth], 0) + int(count)
    return out


def drawn_flame_frames(browser, chart_id):
    """The frames of one flame graph as drawn, each given its path by geometry alone: a frame's caller is the
    frame one row below whose span holds its left edge. {path: samples the tooltip states}."""
    rects = browser.evaluate(f"""Array.from(document.querySelectorAll('#{chart_id} rect[data-name]')).map(r => [
        r.dataset.name, Number(r.getAttribute('x')), Number(r.getAttribute('y')), Number(r.getAttribute('width')),
        r.querySelector('title').textContent])""")
    by_row = {}
    for name, x, y, w, title in rects:
        samples = int(re.search(r"\n(\d+) samples \(", title).group(1))
        by_row.setdefault(round(y), []).append((x, w, name, samples))
    rows = sorted(by_row, reverse=True)  # the root's row is the lowest on the page
    assert len(by_row[rows[0]]) == 1, "one root frame"
    paths = {}
    below = []  # (x, w, path) of the row under the current one
    for y in rows:
        current = []
        for x, w, name, samples in sorted(by_row[y]):
            parents = [p for px, pw, p in below if px - 0.2 <= x + w / 2 <= px + pw + 0.6] if below else [()]
            assert len(parents) == 1, f"{name}: {len(parents)} frames under it"
            path = parents[0] + (name,)
            assert path not in paths
            paths[path] = samples
            current.append((x, w, path))
        below = current
    return paths


@pytest.mark.parametrize("trace", [PYSAMPLE, LLAMA], ids=["python-samples", "native-cpu-samples"])
def test_report_html_host_flame_graphs(trace, browser, tmp_path):
    """The report's flame graphs hold the stacks `kernscope host --format collapsed` writes: one chart per
    group of steps, each drawn frame at its place in the tree with that many samples, and every frame wide
    enough to see (2 px or more of the 940 px plot) drawn. Two nsys exports of the Llama decode: Python
    frames (--python-sampling) and native ones (--sample=cpu, many unresolved: shown by address)."""
    page = tmp_path / "report.html"
    run = subprocess.run([kernscope_cli(), "report", "--format", "html", "-o", str(page), str(trace)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    collapsed = subprocess.run([kernscope_cli(), "host", "--format", "collapsed", str(trace)], capture_output=True, text=True)
    assert collapsed.returncode == 0, collapsed.stderr
    want = collapsed_frames(collapsed.stdout)
    roots = [path for path in want if len(path) == 1]
    flames = tuple(f"chart-host-flame-{i}" for i in range(len(roots)))
    assert roots, "the fixture has sampled stacks"
    check_page_in_browser(browser, page, STEP_AND_KERNEL_CHARTS + ("chart-classes-by-phase",) + flames)

    drawn_roots = []
    for chart in flames:
        drawn = drawn_flame_frames(browser, chart)
        (root,) = [p for p in drawn if len(p) == 1]
        drawn_roots.append(root)
        for path, samples in drawn.items():
            assert want.get(path) == samples, f"{chart}: {' ; '.join(path)} drawn with {samples} samples, collapsed says {want.get(path)}"
        px_per_sample = 940 / want[root]
        visible = {p for p, n in want.items() if p[0] == root[0] and n * px_per_sample >= 2 and len(p) <= 64}
        assert visible - set(drawn) == set(), f"{chart}: frames 2 px wide or more not drawn"
        assert len(drawn) > 5, f"{chart}: only {len(drawn)} frames"
        # Labels are the frames' names (cut with an ellipsis where the frame is narrow).
        labels = browser.evaluate(f"Array.from(document.querySelectorAll('#{chart} text')).map(t => t.textContent.replace(t.querySelector('title')?.textContent ?? '', ''))")
        names = {p[-1] for p in drawn}
        assert labels and all(l in names or (l.endswith("…") and any(n.startswith(l[:-1]) for n in names)) for l in labels)
    assert sorted(drawn_roots) == sorted(roots)
    # Unresolved frames (stripped libraries: an address each) are grouped by module, a run of them
    # one frame: no address is drawn, and no unresolved frame calls another of its module.
    for path in want:
        assert not any(re.match(r"0x[0-9a-f]+\b", frame) for frame in path), path
        assert not any(a == b and a.startswith("[unresolved]") for a, b in zip(path, path[1:])), path


SHARED = pathlib.Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "realworld"
SCREEN = 900  # the browser's window height (chromium_cdp.Browser)


@pytest.mark.parametrize("trace", [
    LLAMA,  # the trace `make run` diagnoses
    SHARED / "tracelens__traces__inference__vllm_prefilldecode_piecewise__graph_execution.json.gz",
    SHARED / "tracelens__traces__inference__sglang_prefilldecode__sglang_Qwen3-8B_prefilldecode.json.gz",
], ids=["llama-nsys", "vllm-shared", "sglang-shared"])
def test_report_page_answers_first(trace, browser, tmp_path):
    """Issue 32, item 3: the first 1,400 px hold the accounting and the ranked actions, and with the
    detail sections folded (as the page opens) it is under 4 screens tall. The screenshot is kept
    (KERNSCOPE_SCREENSHOTS names a folder; else the test's temporary one)."""
    if not trace.exists():
        pytest.skip(f"{trace.name} is not here (../shared)")
    page = tmp_path / "report.html"
    run = subprocess.run([kernscope_cli(), "report", "--format", "html", "-o", str(page), str(trace)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    browser.open(page.as_uri())
    browser.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    box = "(e => { if (!e) return null; const r = e.getBoundingClientRect(); return [r.top + window.scrollY, r.bottom + window.scrollY, r.width]; })"
    accounting = browser.evaluate(f"{box}(document.getElementById('chart-accounting-summary'))")
    first_action = browser.evaluate(f"{box}(document.querySelector('#actions li'))")
    height = browser.evaluate("document.documentElement.scrollHeight")
    shots = pathlib.Path(os.environ.get("KERNSCOPE_SCREENSHOTS", str(tmp_path)))
    shots.mkdir(parents=True, exist_ok=True)
    (shots / f"report_{trace.name.split('.')[0][:60]}.png").write_bytes(browser.screenshot_png())
    assert accounting and accounting[2] > 0, "the accounting chart is on the first screen"
    assert accounting[1] <= 1400, f"the accounting ends at {accounting[1]:.0f} px"
    assert first_action and first_action[0] < 1400, f"the first action starts at {first_action and first_action[0]} px"
    assert height < 4 * SCREEN, f"the page is {height} px tall with its details folded"
    # Folded is not gone: every section opens, and then the page holds the detail.
    browser.evaluate("document.getElementById('open-all').click()")
    assert browser.evaluate("Array.from(document.querySelectorAll('details.fold')).every(d => d.open)")
    assert browser.evaluate("document.documentElement.scrollHeight") > height
