"""The HTML report in a real headless browser (Debian ``chromium`` + ``chromium-driver`` driven
by selenium; ``.ci/run`` installs them): it loads without console errors, the chart renders,
every link resolves, nothing scrolls sideways in a 1,400 px window, and the first failure is
in view when the page opens. Skips, saying why, where no browser is installed."""
import os
import shutil
from pathlib import Path
from urllib.parse import unquote, urlparse

import numpy as np
import pytest

from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.dump.model import DumpSet
from pytest_ascend_accuracy.report.csv_report import write_csv
from pytest_ascend_accuracy.report.html_report import write_html
from pytest_ascend_accuracy.report.json_report import write_json
from pytest_ascend_accuracy.report.tensor_copies import copy_failing_tensors

WIDTH, HEIGHT = 1400, 900
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def _browser():
    """(browser binary, chromedriver) or a pytest.skip naming what is missing."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        pytest.skip("selenium is not installed (pip install -e '.[test]')")
    binary = os.environ.get("CHROMIUM") or next(filter(None, map(shutil.which, BROWSERS)), None)
    driver = os.environ.get("CHROMEDRIVER") or shutil.which("chromedriver")
    if not binary or not driver:
        pytest.skip("no headless browser: install Debian's chromium and chromium-driver "
                    "(.ci/run does: apt-get install -y chromium chromium-driver)")
    return binary, driver


@pytest.fixture(scope="module")
def browser():
    binary, driver_path = _browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = binary
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--window-size={WIDTH},{HEIGHT}", "--hide-scrollbars"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=opts)
    try:
        yield driver
    finally:
        driver.quit()


def _failing_report(directory: Path) -> Path:
    """A report as ``--accuracy-report`` writes it for a failing check: 80 ops with long
    names, the first failure at op 30, the CSV, the JSON and the failing tensors next to it."""
    rng = np.random.default_rng(0)
    golden, actual = {}, {}
    for i in range(80):
        name = f"backbone/stage{i // 10}/block{i}/" + "very_long_module_name_" * 6 + f"Conv_{i}"
        g = rng.standard_normal((1, 16, 8, 8)).astype(np.float32)
        a = g.astype(np.float16)
        if i >= 30:  # the fault and what it spreads to
            noise = rng.standard_normal(g.shape).astype(np.float32) * (0.2 + i / 40)
            a = (g + noise).astype(np.float16)
        golden[name], actual[name] = [g], [a]
    actual_dump = DumpSet.from_arrays(actual, op_types={k: "Conv2D" for k in actual})
    golden_dump = DumpSet.from_arrays(golden)
    result = compare_dumps(actual_dump, golden_dump)
    verdict = result.judge(0.99)
    assert not verdict.passed and verdict.first.row.order == 30
    directory.mkdir(parents=True, exist_ok=True)
    write_csv(result, directory / "compare.csv", verdict)
    write_json(result, directory / "compare.json", verdict)
    links = copy_failing_tensors(actual_dump, golden_dump, verdict, directory)
    (directory / "diagnosis").mkdir()  # --accuracy-diagnose's page, linked from the report
    (directory / "diagnosis" / "diagnosis.html").write_text("<!DOCTYPE html><title>d</title>")
    return Path(write_html(result, directory / "report.html", verdict, title="test_model[default]",
                           hint="keep the first failing ops in float32", links=links,
                           files=["compare.csv", "compare.json"],
                           diagnosis="diagnosis/diagnosis.html"))


def test_report_in_a_headless_browser(browser, tmp_path):
    page = _failing_report(tmp_path / "report")
    browser.get(page.as_uri())
    browser.get_log("browser")  # (an empty page load before it logs nothing of ours)
    browser.get(page.as_uri())
    errors = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
    assert errors == []

    svg = browser.execute_script(
        "const s = document.querySelector('svg'); const r = s.getBoundingClientRect();"
        "return [r.width, r.height, s.querySelectorAll('circle').length,"
        "        s.querySelectorAll('polyline').length];")
    assert svg[0] > 400 and svg[1] > 200 and svg[2] == 160 and svg[3] >= 2

    sizes = browser.execute_script(
        "return [document.documentElement.scrollWidth, document.documentElement.clientWidth,"
        "        window.innerWidth];")
    assert sizes[2] == WIDTH and sizes[0] <= sizes[1], sizes  # no horizontal scroll

    first = browser.execute_script(
        "const e = document.getElementById('first-failure'); const r = e.getBoundingClientRect();"
        "return [r.top, r.bottom, window.innerHeight, e.textContent];")
    assert 0 <= first[0] < first[1] <= first[2], first
    assert "block30/" in first[3] and "first failure" in first[3]

    hrefs = browser.execute_script(
        "return Array.from(document.querySelectorAll('a[href]'))"
        "  .map(a => [a.getAttribute('href'), a.href]);")
    files = [h for h, _ in hrefs if not h.startswith("#")]
    assert {"compare.csv", "compare.json", "diagnosis/diagnosis.html"} <= set(files)
    assert any(h.endswith(".actual.npy") for h in files)
    assert any(h.endswith(".golden.npy") for h in files)
    index = browser.execute_script("return document.querySelectorAll('#failing-ops li').length;")
    assert index == 50  # every failing op (30..79) in the index
    for raw, absolute in hrefs:
        if raw.startswith("#"):
            found = browser.execute_script("return !!document.getElementById(arguments[0]);", raw[1:])
            assert found, raw
        else:
            url = urlparse(absolute)
            assert url.scheme == "file" and Path(unquote(url.path)).is_file(), raw

    cut = browser.execute_script(  # every entry's op in view, whole (entries were one line
        "return Array.from(document.querySelectorAll('#failing-ops li')).filter(li =>"  # cut
        "  li.querySelector('a').getBoundingClientRect().right"  # at the edge, the op's name
        "    > li.getBoundingClientRect().right + 0.5 || li.scrollWidth > li.clientWidth"  # last
        ").length;")
    assert cut == 0

    browser.find_element("css selector", "#failing-ops li:nth-child(5) a[href^='#']").click()
    row = browser.execute_script(
        "const e = document.querySelector(':target'); const r = e.getBoundingClientRect();"
        "return [e.id, r.top, window.innerHeight];")
    # the index jumps to the row (scrolled to the top: within a pixel, subpixel layout)
    assert row[0].startswith("r") and -1 < row[1] < row[2], row
    shot = os.environ.get("PYTEST_ASCEND_SCREENSHOT")
    if shot:  # PYTEST_ASCEND_SCREENSHOT=/tmp/report.png: look at the page yourself
        browser.get(page.as_uri())
        browser.save_screenshot(shot)


def test_dataset_page_opens_on_the_traced_first_failure(browser, tmp_path):
    """A failing dataset check's page: the figures, then the traced sample's first failure in
    view, the index of its failing ops, its tensors beside the page (``dataset-tensors/``)."""
    from pytest_ascend_accuracy.report.html_report import dataset_html_text

    rng = np.random.default_rng(1)
    golden = {f"stage{i}/" + "long_block_name_" * 8 + f"Conv_{i}":
              [rng.standard_normal((1, 8, 4, 4)).astype(np.float32)] for i in range(40)}
    actual = {k: [(v[0] + (rng.standard_normal(v[0].shape) * (i >= 12))).astype(np.float16)]
              for i, (k, v) in enumerate(golden.items())}
    actual_dump = DumpSet.from_arrays(actual)
    golden_dump = DumpSet.from_arrays(golden)
    result = compare_dumps(actual_dump, golden_dump)
    verdict = result.judge(0.99)
    links = copy_failing_tensors(actual_dump, golden_dump, verdict, tmp_path,
                                 folder="dataset-tensors")
    from pytest_ascend_accuracy.plugin.dataset_page import _first_ids

    ids = [f"ILSVRC2012_val_{i:08d}" for i in range(300)]  # 200 such ids hid the first failure
    figures = [("model", "m"), ("flipped", _first_ids(ids)),
               ("traced", "first flipped sample 000: first operator below the threshold: ...")]
    page = tmp_path / "dataset.html"
    page.write_text(dataset_html_text("dataset accuracy FAILED: top1 0.4 vs 0.5", False, figures,
                                      result=result, verdict=verdict, links=links,
                                      traced="first flipped sample 000, every operator compared",
                                      flipped=ids))
    sizes, errors = _fits(browser, page)
    assert errors == [] and sizes[2] == WIDTH and sizes[0] <= sizes[1], sizes
    first = browser.execute_script(
        "const e = document.getElementById('first-failure'); const r = e.getBoundingClientRect();"
        "return [r.top, r.bottom, window.innerHeight, e.textContent,"
        "        document.querySelectorAll('#failing-ops li').length];")
    assert 0 <= first[0] < first[1] <= first[2], first
    assert "Conv_12" in first[3] and first[4] == 28
    listed = browser.execute_script("return document.getElementById('flipped').nextElementSibling"
                                    "  .textContent;")
    assert listed.split(", ") == ids  # every flipped sample, at the end
    hrefs = browser.execute_script(
        "return Array.from(document.querySelectorAll('a[href]')).map(a => [a.getAttribute('href'),"
        "  a.href]);")
    assert any(h.startswith("dataset-tensors/") for h, _ in hrefs)
    for raw, absolute in hrefs:
        if raw.startswith("#"):
            assert browser.execute_script("return !!document.getElementById(arguments[0]);",
                                          raw[1:]), raw
        else:
            assert Path(unquote(urlparse(absolute).path)).is_file(), raw


def _fits(browser, page: Path):
    """[scrollWidth, clientWidth, innerWidth] of ``page``, and its console errors."""
    browser.get(page.as_uri())
    errors = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
    return browser.execute_script(
        "return [document.documentElement.scrollWidth, document.documentElement.clientWidth,"
        "        window.innerWidth];"), errors


def test_diagnosis_page_fits_the_window(browser, tmp_path):
    """``--accuracy-diagnose``'s diagnosis.html: a step's "what it showed" never wrapped
    (PP-OCRv4 det: 2,157 px wide in a 1,400 px window; a tiny model's 1,408 px)."""
    from pytest_ascend_accuracy.triage.report import html_page
    from pytest_ascend_accuracy.triage.result import Diagnosis, StepResult

    ops = [f"backbone.stage{i}.block{i}.conv{i}/Conv2D_{i}" for i in range(40)]
    steps = (StepResult("default", "default", False, "fails at op " + ops[0] + "; below the "
                        "threshold: " + ", ".join(ops), first_failure=ops[0], failing=tuple(ops)),
             StepResult("precision", "keep_dtype(" + ",".join(ops[:12]) + ")", True,
                        "keep_dtype {" + ", ".join(ops[:12]) + "} restores cosine 0.999 under "
                        "fp16"))
    page = tmp_path / "diagnosis.html"
    page.write_text(html_page(Diagnosis(model="det.onnx", backend="emulator", threshold=0.99,
                                        metric="cosine", restored_by="precision",
                                        verdict="keep_dtype restores it", steps=steps)))
    sizes, errors = _fits(browser, page)
    assert errors == [] and sizes[2] == WIDTH and sizes[0] <= sizes[1], sizes


def test_run_index_fits_the_window(browser, tmp_path):
    """index.html with a test id that holds no break point ran 2,206 px wide."""
    from pytest_ascend_accuracy.report.run_index import index_data, index_html

    nodeid = ("test_m.py::test_model[" + "backbone.stage3.block12.attention.qkv_projection_" * 4
              + "]")
    entry = {"folder": "f", "kind": "accuracy", "nodeid": nodeid, "check": "m, default",
             "passed": False, "first_failing_op": "block12." * 20 + "Conv", "baseline": None,
             "written": None, "page": "f/report.html"}
    page = tmp_path / "index.html"
    page.write_text(index_html(index_data({"id": "r1", "started": "now"}, [entry],
                                          ["other_" * 60])))
    sizes, errors = _fits(browser, page)
    assert errors == [] and sizes[2] == WIDTH and sizes[0] <= sizes[1], sizes
