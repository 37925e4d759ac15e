"""A baseline records and judges the cosine the threshold judges (``TensorMetrics.value``), not
msaccucmp's plain one: for a float16 tensor of values below float16's smallest normal
(``compare/tiny_values.py``) the plain figure measures float16's subnormal grid, and a baseline
flagged a "drop" of it that the verdict forgives. A version 1 file, which recorded the plain
figure, is still read and judged by it, as before, and says so; it is never relabelled.
"""
import numpy as np

from pytest_ascend_accuracy.baseline.check import PASSED, REGRESSED, check_baseline
from pytest_ascend_accuracy.baseline.file import (Baseline, ops_from_result, read_baseline,
                                                  render, round_error)
from pytest_ascend_accuracy.baseline.writing import write_baseline
from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.dump.model import DumpSet
from test_baseline_helpers import HEADER, SPEC

TINY = "p2o.Sigmoid.0"


def _run(lo=-30.0, hi=-14.6, fault=False):
    """A comparison of a float32 row and a sigmoid's tail (every value below float16's smallest
    normal, the device's output the golden correctly rounded to float16): deeper logits (``lo``,
    ``hi``) lower msaccucmp's cosine, not the judged one; ``fault`` puts 100 values at 0.01."""
    golden = (1.0 / (1.0 + np.exp(-np.linspace(lo, hi, 4096)))).astype(np.float32)
    device = golden.astype(np.float16)
    if fault:
        device[:100] = 0.01
    conv = np.random.default_rng(0).standard_normal(64).astype(np.float32)
    return compare_dumps(DumpSet.from_arrays({"conv": [conv], TINY: [device]}),
                         DumpSet.from_arrays({"conv": [conv], TINY: [golden]}))


def _check(result, path, **kw):
    return check_baseline(result, path, header=HEADER, inputs=SPEC, **kw)


def _line(path, op=TINY):
    return next(line for line in path.read_text().splitlines() if f'op: "{op}"' in line)


def test_the_baseline_records_the_cosine_judged(tmp_path):
    path = tmp_path / "default.yaml"
    r = _run()
    m = r.row(TINY).metrics
    assert m.cosine < 0.995 and m.value("cosine") == 1.0
    # a cosine check: its judged rel_l2 differs here, so version 3 all the same (a rel_l2 test
    # of the same model, mode and inputs shares the file: the plain figure hid a fault from it)
    _check(r, path)
    assert "version: 3" in path.read_text().splitlines()
    assert "cosine: 1.000000," in _line(path)
    assert read_baseline(path).by_key()[(TINY, "output:0")].cosine == 1.0
    path.unlink()
    _check(r, path, max_rel_l2_rise=0.002)  # its judged rel_l2 differs here: version 3
    assert "version: 3" in path.read_text().splitlines()


def test_a_drop_of_msaccucmps_cosine_on_float16s_subnormal_grid_passes_a_real_fault_regresses(
        tmp_path):
    path = tmp_path / "default.yaml"
    _check(_run(), path)
    deeper = _run(-31.0, -15.6)
    m = deeper.row(TINY).metrics
    assert _run().row(TINY).metrics.cosine - m.cosine > 0.02  # msaccucmp's figure dropped
    out = _check(deeper, path)
    assert (out.status, out.passed) == (PASSED, True), out.message
    out = _check(_run(fault=True), path)
    assert out.status == REGRESSED
    assert out.message.splitlines()[1].startswith(f"  {TINY}: cosine 1.000000 -> 0.0000")


def _version_1(path, result):
    """The baseline of ``result`` as a version 1 file recorded it: msaccucmp's plain cosine."""
    write_baseline(path, Baseline(environment=HEADER, inputs=SPEC, info={}, version=1,
                                  ops=ops_from_result(result, plain_cosine=True)))


def test_a_version_1_file_is_judged_by_msaccucmps_cosine_as_it_recorded_and_says_so(tmp_path):
    path = tmp_path / "default.yaml"
    _version_1(path, _run())
    text = path.read_text()
    assert "version: 1" in text.splitlines() and "cosine: 0.993869," in _line(path)
    assert "cosine is the one the threshold judges" not in text  # its own comment
    note = (f"note: {path} is a version 1 baseline, whose cosine is msaccucmp's plain one: "
            "judged against this run's plain cosine, as recorded; the threshold judges a "
            "higher cosine (float16 values below its smallest normal counted as equal) for 1 "
            f"operator line: {TINY}; --accuracy-regen-all records that one (baseline version 3)")
    out = _check(_run(), path)
    assert out.passed and note in out.message.splitlines()
    out = _check(_run(-31.0, -15.6), path)  # judged as before: the plain figure dropped
    assert out.status == REGRESSED and note in out.message.splitlines()
    assert f"  {TINY}: cosine 0.993869 -> 0.966059 (drop 0.027810 > 0.002)" in out.message
    assert path.read_text() == text  # not rewritten, not relabelled
    _check(_run(), path, regen="all")  # the note's advice: the version it names is written
    assert "version: 3" in path.read_text().splitlines()


def test_a_version_1_file_rendered_again_stays_version_1_and_a_rewrite_records_version_3(
        tmp_path):
    path = tmp_path / "default.yaml"
    _version_1(path, _run())
    text = path.read_text()
    old = read_baseline(path)
    assert old.version == 1 and render(old) == text
    out = _check(_run(-31.0, -15.6), path, regen="failing", max_rel_l2_rise=0.002)
    assert out.status == REGRESSED and out.written == path
    assert "version: 3" in path.read_text().splitlines()
    assert "cosine: 1.000000," in _line(path)
    assert _check(_run(-31.0, -15.6), path).passed


def test_a_version_2_file_is_judged_by_msaccucmps_rel_l2_as_it_recorded_and_says_so(tmp_path):
    """Version 2 recorded the judged cosine and msaccucmp's plain rel_l2; version 3 the judged
    rel_l2 too. A version 2 file is judged plain against plain, says so, keeps its version
    rendered again, and a rewrite records version 3 (the judged figure: 0 on this tail)."""
    path = tmp_path / "default.yaml"
    m = _run().row(TINY).metrics
    assert m.rel_l2 > 0.01 and m.value("rel_l2") < m.rel_l2  # the plain figure is the noise
    write_baseline(path, Baseline(environment=HEADER, inputs=SPEC, info={}, version=2,
                                  ops=ops_from_result(_run(), version=2)))
    text = path.read_text()
    assert "version: 2" in text.splitlines() and "rel_l2: 0.000e+00" not in _line(path)
    out = _check(_run(), path, max_rel_l2_rise=0.002)  # a rel_l2 test's check
    assert out.passed
    assert (f"note: {path} is a version 2 baseline, whose rel_l2 is msaccucmp's plain one: "
            f"judged against this run's plain rel_l2, as recorded; the threshold judges a lower "
            f"rel_l2 (float16 values below its smallest normal counted as equal) for 1 operator "
            f"line: {TINY}; --accuracy-regen-all records that one (baseline version 3)"
            ) in out.message.splitlines()
    # a check that judges no rel_l2 (a cosine test) is not urged to rewrite for it (a review)
    assert "version 2 baseline" not in _check(_run(), path).message
    assert render(read_baseline(path)) == text  # not relabelled
    assert _check(_run(), path, regen="all", max_rel_l2_rise=0.002).written == path
    assert "version: 3" in path.read_text().splitlines()
    assert read_baseline(path).by_key()[(TINY, "output:0")].rel_l2 == round_error(
        m.value("rel_l2"))
