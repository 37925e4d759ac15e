"""Each fixture as a user meets it (pytester, in-process, emulator backend)."""
import json
import xml.etree.ElementTree as ET
import re

import pytest

from conftest import ACCURACY_TESTS


def test_fixtures_have_docstrings(pytester):
    result = pytester.runpytest("--fixtures")
    result.stdout.fnmatch_lines([
        "ascend_device [[]session scope[]] -- *",
        "    The Ascend device id this test process uses, as listed in ``--ascend-device`` (with",
    ])
    for name in ("atc_convert [[]session scope[]]", "ascend_model", "golden_dump", "check_accuracy"):
        result.stdout.fnmatch_lines([f"{name} -- *", "    *"])


def test_ascend_device_is_none_on_the_emulator(pytester):
    pytester.makepyfile("def test_dev(ascend_device):\n    assert ascend_device is None\n")
    pytester.runpytest().assert_outcomes(passed=1)


def test_atc_convert_and_ascend_model(pytester, models_dir):
    pytester.makepyfile("""
        from pytest_ascend_accuracy import accuracy, keep_dtype
        from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

        def test_convert(atc_convert):
            a = atc_convert("models/overflow.onnx", "high_precision")
            b = atc_convert("models/overflow.onnx", "high_precision")
            assert a == b and a.mode.name == "high_precision" and a.backend == "emulator"
            c = atc_convert("models/overflow.onnx", keep_dtype(["norm"]), log="info")
            assert c.key != a.key

        @accuracy(modes=["default", "fusion_off"])
        def test_bound_mode(ascend_model, golden_dump, check_accuracy, request):
            m = ascend_model("models/passing_mlp.onnx")
            assert m.mode.name == request.node.callspec.id
            assert m.converted.mode == m.mode
            out = m.run(make_inputs("models/passing_mlp.onnx"), dump=False)
            assert [op.name for op in out] == ["y"] and out.ops[0].outputs[0].shape == (1, 8)
            dumped = m.run(make_inputs("models/passing_mlp.onnx"))
            assert len(dumped) > 1 and dumped.meta["mode"] == m.mode.name
            # a marked test checks (one that only runs fails: test_checks_that_judge_nothing)
            check_accuracy(dumped, golden_dump("models/passing_mlp.onnx",
                                               make_inputs("models/passing_mlp.onnx")))

        def test_explicit_mode_and_keep_dtype(ascend_model):
            assert ascend_model("models/passing_mlp.onnx").mode.name == "default"
            m = ascend_model("models/overflow.onnx", "high_precision", keep_dtype=["norm"])
            assert m.mode.precision_mode == "allow_fp32_to_fp16" and m.mode.keep_dtype == ("norm",)

        def test_missing_model(ascend_model):
            ascend_model("models/nope.onnx")
    """)
    result = pytester.runpytest("-q")
    result.assert_outcomes(passed=4, failed=1)
    # a setup mistake reads as one paragraph, not a traceback through the plugin
    # the places looked at, relative to where pytest ran (a CI trial found them absolute)
    # (rootdir, test folder and working directory one folder: which one is said, H112)
    result.stdout.fnmatch_lines(["ascend-accuracy configuration error: *ascend_model: ONNX model "
                                 "'models/nope.onnx' not found (looked for models/nope.onnx in "
                                 f"{pytester.path}, which is pytest's rootdir, the test file's "
                                 "folder and the working directory)"])


def test_golden_dump_is_cached(pytester, models_dir):
    pytester.makepyfile("""
        from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

        def test_golden(golden_dump):
            inputs = make_inputs("models/passing_mlp.onnx")
            g1 = golden_dump("models/passing_mlp.onnx", inputs)
            g2 = golden_dump("models/passing_mlp.onnx", inputs)
            assert g1.names == g2.names and "relu1" in g1.names
            assert g1["relu1"].outputs[0].load().min() >= 0
    """)
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["no accuracy checks ran", "cache: 1 hit, 1 miss"])


def test_check_accuracy_and_summary(pytester, models_dir):
    pytester.makepyfile(test_acc=ACCURACY_TESTS)
    result = pytester.runpytest()
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.re_match_lines([
        r"=+ ascend-accuracy =+",
        r"backend: emulator backend \(CPU stand-in for ATC \+ NPU numerics.*",
        r"4 accuracy checks: 3 passed, 1 failed \(2 models x 3 modes\)",
        r"  model        default  high_precision  keep_dtype\(norm\)",
        r"  passing_mlp  passed   -               -",
        r"  overflow     FAILED   passed          passed",
        r"FAILED test_acc.py::test_overflow\[default\] \[overflow, default\]: first failing op norm "
        r"\(cosine 0\.\d{6} < 0\.95\)",
        r"cache: 2 hits, 6 misses",
    ])


def test_failure_block_is_shown_exactly(pytester, models_dir):
    """The failure shows the compare report block, then the test line; no traceback noise."""
    from pytest_ascend_accuracy.report.assertion import AccuracyFailure, assert_accuracy
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump
    from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

    model = str(models_dir / "overflow.onnx")
    cache = Cache(pytester.path / "outer-cache")
    backend = EmulatorBackend(cache)
    inputs = make_inputs(model)
    actual = backend.run(backend.convert(model, "default"), inputs, dump_dir=pytester.path / "d")
    with pytest.raises(AccuracyFailure) as info:
        assert_accuracy(actual, golden_dump(model, inputs, cache=cache), 0.95)
    expected = str(info.value).splitlines()

    pytester.makepyfile(test_acc=ACCURACY_TESTS)
    result = pytester.runpytest("-k", "test_overflow and default")
    lines = result.stdout.lines
    start = lines.index(expected[0])
    assert lines[start - 1].startswith("_") and "test_overflow[default]" in lines[start - 1]
    # the same block; the next step differs (in a test it carries the test's mode), and how to
    # get the CSV is the plugin's option (check_accuracy takes no csv_path)
    report = expected.index("full report: not written (pass csv_path=...)")
    expected[report] = "full report: not written (rerun with --accuracy-report=DIR)"
    # and the test says where its dump stays (kept: it failed); assert_accuracy prints none
    kept = next(x for x in lines if x.startswith("dump kept: "))
    assert re.fullmatch(r"dump kept: \S*/test_overflow_default_0/ascend-dumps/dump-\d+", kept)
    expected.insert(report + 1, kept)
    # then how long it stays: pytester gives the run a --basetemp
    expected.insert(report + 2, "  (under --basetemp, which the next pytest session given the "
                                "same --basetemp empties: copy it elsewhere to compare it later)")
    # and the command that compares the kept dump with its golden again (test_compare_again)
    again = next(x for x in lines if x.startswith("  compare them again: "))
    assert again.startswith(f"  compare them again: ascend-accuracy compare {kept[11:]} ")
    expected.insert(report + 3, again)
    cut = next(i for i, line in enumerate(expected) if line.startswith("next step:"))
    assert lines[start:start + cut] == expected[:cut]
    end = lines.index("test_acc.py:16: AccuracyFailure")
    assert lines[start + cut].startswith("next step:") and lines[end - 1] == ""
    assert "  modes=[keep_dtype(['norm'])]" in lines[start + cut:end]
    assert expected[0].startswith("accuracy FAILED: ") and expected[2] == (
        "first failing operator (#2 in graph order):")
    assert "  dump name      norm" in expected
    # --tb=native keeps pytest's own rendering (the block is still in the exception text)
    native = pytester.runpytest("-k", "test_overflow and default", "--tb=native")
    native.stdout.fnmatch_lines(["*AccuracyFailure: accuracy FAILED: *", "  dump name      norm"])


def test_call_site_per_op_and_ignore(pytester, models_dir):
    pytester.makepyfile("""
        from pytest_ascend_accuracy import accuracy
        from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

        M = "models/overflow.onnx"

        @accuracy(threshold=0.95, ignore=["norm", "to_flat"])
        def test_ignore_from_marker_and_call(ascend_model, golden_dump, check_accuracy):
            inputs = make_inputs(M)
            outcome = check_accuracy(ascend_model(M).run(inputs), golden_dump(M, inputs),
                                     ignore=["fc2*"])
            assert outcome.verdict.passed and outcome.verdict.ignored >= 3

        @accuracy(threshold=0.95, per_op={"norm": 0.0})
        def test_per_op_only_relaxes_norm(ascend_model, golden_dump, check_accuracy):
            inputs = make_inputs(M)
            check_accuracy(ascend_model(M).run(inputs), golden_dump(M, inputs))
    """)
    result = pytester.runpytest()
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["FAILED test_call_site_per_op_and_ignore.py::"
                                 "test_per_op_only_relaxes_norm [[]overflow, default[]]: first failing op "
                                 "to_flat (cosine 0.* < 0.95)"])


def test_junit_properties(pytester, models_dir):
    pytester.makepyfile(test_acc=ACCURACY_TESTS)
    pytester.runpytest("--junitxml=out.xml")
    root = ET.parse(pytester.path / "out.xml").getroot()
    props = {}
    for case in root.iter("testcase"):
        props[case.get("name")] = {p.get("name"): p.get("value") for p in case.iter("property")}
    failed = props["test_overflow[default]"]
    assert failed["accuracy_passed"] == "false"
    assert failed["accuracy_model"] == "overflow" and failed["accuracy_mode"] == "default"
    assert failed["accuracy_first_failing_op"] == "norm"
    assert 0 < float(failed["accuracy_first_failing_cosine"]) < 0.95
    assert float(failed["accuracy_coverage"]) == 1.0
    passed = props["test_overflow[high_precision]"]
    assert passed["accuracy_passed"] == "true" and "accuracy_first_failing_op" not in passed


def test_accuracy_report_dir(pytester, models_dir):
    pytester.makepyfile(test_acc=ACCURACY_TESTS)
    result = pytester.runpytest("--accuracy-report=reports")
    # relative to where pytest ran, as every printed path (they were absolute)
    result.stdout.fnmatch_lines(["full report: reports/test_acc.py--test_overflow_default-*/"
                                 "compare.csv", "reports: reports (this run's folders: "
                                 "reports/index.html)"])
    failed = next((pytester.path / "reports").glob("test_acc.py--test_overflow_default-*"))
    assert sorted(p.name for p in failed.iterdir()) == ["compare.csv", "compare.json", "report.html",
                                                        "tensors"]  # the failing ops' tensors
    header = (failed / "compare.csv").read_text().splitlines()[0]
    assert header.startswith("Index,OpType,NPUDump,DataType,Address,GroundTruth,DataType,TensorIndex")
    data = json.loads((failed / "compare.json").read_text())
    assert data["verdict"]["passed"] is False
    html = (failed / "report.html").read_text()
    assert "<svg" in html and "<script" not in html and "http" not in html.replace("http://www.w3.org", "")
    assert len([p for p in (pytester.path / "reports").iterdir() if p.is_dir()]) == 4
    index = json.loads((pytester.path / "reports" / "index.json").read_text())
    assert [f["passed"] for f in index["folders"]].count(False) == 1 and index["checks"] == 4


SLUG_TESTS = '''
import pytest
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


@pytest.mark.parametrize("name", ["overflow", "passing_mlp"], ids=["a+b", "a b"])
@accuracy(threshold=0.9999999)
def test_models(name, ascend_model, golden_dump, check_accuracy):
    model = f"models/{name}.onnx"
    inputs = make_inputs(model)
    check_accuracy(ascend_model(model).run(inputs), golden_dump(model, inputs))
'''


@pytest.mark.filterwarnings("ignore:Benchmarks are automatically disabled")  # pytest-benchmark
@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_two_tests_whose_ids_differ_only_in_other_characters_get_two_report_dirs(
        pytester, models_dir, workers):
    """``test_models[a+b]`` and ``test_models[a b]`` both wrote ``..._a_b``: under ``-n 2``,
    where each worker kept its own count, one report overwrote the other (review helper)."""
    if workers:
        pytest.importorskip("xdist")
    pytester.makepyfile(test_slug=SLUG_TESTS)
    pytester.runpytest("-p", "no:cacheprovider", "--accuracy-report=rep", *workers
                       ).assert_outcomes(failed=2)
    dirs = sorted(p for p in (pytester.path / "rep").iterdir() if p.is_dir())
    assert len(dirs) == 2 and all(d.name.startswith("test_slug.py--test_models_a_b-") for d in dirs)
    titles = sorted(re.search(r"<title>([^<]*)", (d / "report.html").read_text()).group(1)
                    for d in dirs)
    assert [t.split(" [")[0] for t in titles] == ["test_slug.py::test_models[a b]",
                                                  "test_slug.py::test_models[a+b]"]


def test_report_slugs_stay_readable_and_never_collide():
    from pytest_ascend_accuracy.plugin.accuracy_check import report_slug

    assert report_slug("test_acc.py::T::test_overflow") == "test_acc.py--T--test_overflow"
    assert report_slug("tests/test_acc.py::T::test_overflow").startswith(
        "tests_test_acc.py--T--test_overflow-")
    assert report_slug("tests/test_acc.py::test_overflow[default]").startswith(
        "tests_test_acc.py--test_overflow_default-")
    ids = ["t.py::f[a+b]", "t.py::f[a b]", "t.py::f[a_b]", f"t.py::f[{'x' * 200}1]",
           f"t.py::f[{'x' * 200}2]", "t.py::f[a]", "t.py::f_a", "t.py::f[m/a.onnx]",
           "t.py::f[m_a.onnx]", "t.py::f[x:y]", "t.py::f[x/y]", "t.py::test_f", "t.py::test_f_",
           "tests/a_b.py::test_x", "tests/a/b.py::test_x"]
    slugs = [report_slug(i) for i in ids]
    assert len(set(slugs)) == len(ids) and all(len(s) <= 150 for s in slugs)


def test_the_summary_names_a_dotted_model_as_its_file_does(pytester, models_dir):
    """``ch_ppocr_mobile_v2.0_cls_infer.onnx`` showed as ``ch_ppocr_mobile_v2_0_cls_infer`` in
    the grid, the FAILED line and JUnit (the dump directory's sanitized name), a name no file,
    baseline or diagnosis used (a user trial)."""
    import shutil

    shutil.copy(models_dir / "passing_mlp.onnx", models_dir / "mlp_v2.0.onnx")
    pytester.makepyfile("""
        from pytest_ascend_accuracy import accuracy
        from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

        @accuracy(threshold=1.0)
        def test_dotted(ascend_model, golden_dump, check_accuracy):
            m = "models/mlp_v2.0.onnx"
            check_accuracy(ascend_model(m).run(make_inputs(m)), golden_dump(m, make_inputs(m)))
    """)
    result = pytester.runpytest("--junitxml=j.xml")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["  mlp_v2.0  FAILED",
                                 "FAILED test_the_summary_names*.py::test_dotted "
                                 "[[]mlp_v2.0, default]*"])
    assert 'name="accuracy_model" value="mlp_v2.0"' in (pytester.path / "j.xml").read_text()
