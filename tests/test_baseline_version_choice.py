"""Which version a baseline file is written as (``baseline.older_versions.written_lines``), and
the false verdicts of choosing version 2 where a rel_l2 rise is judged (a review): msaccucmp's
plain rel_l2 of float16 subnormal outputs is rounding noise, which the threshold's rel_l2 does
not count."""
import numpy as np

from pytest_ascend_accuracy.baseline.check import check_baseline
from pytest_ascend_accuracy.compare.engine import compare_dumps
from pytest_ascend_accuracy.core.regen import Regen
from pytest_ascend_accuracy.dump.model import DumpSet
from test_baseline_helpers import HEADER, SPEC

TINY = "p2o.Sigmoid.0"
ULP = 2.0 ** -24  # float16's smallest subnormal step
GOLDEN = ((np.arange(4096) % 8 + 1) * ULP).astype(np.float32)  # a sigmoid tail, subnormal
CONV = np.random.default_rng(0).standard_normal(64).astype(np.float32)
REL = dict(max_rel_l2_rise=0.002, rel_l2_lines=frozenset({(TINY, "output:0")}))  # a rel_l2 test


def _run(device):
    return compare_dumps(DumpSet.from_arrays({"conv": [CONV], TINY: [device.astype(np.float16)]}),
                         DumpSet.from_arrays({"conv": [CONV], TINY: [GOLDEN]}))


def _exact():
    return GOLDEN.copy()


def _noisy():  # 3 subnormal steps off on every other value: within the threshold's closeness
    return GOLDEN + 3 * ULP * (np.arange(4096) % 2 == 0)


def _faulty():  # a real fault: 1 value in 160 has its sign flipped
    d = _noisy()
    flip = np.arange(4096) % 160 == 0
    d[flip] = -GOLDEN[flip]
    return d


def _version(path):
    return [line for line in path.read_text().splitlines() if line.startswith("version:")]


def test_the_figures_behind_these_tests():
    noisy, faulty = _run(_noisy()).row(TINY).metrics, _run(_faulty()).row(TINY).metrics
    assert noisy.value("rel_l2") == 0 < noisy.rel_l2  # plain noise, nothing judged
    assert faulty.rel_l2 < noisy.rel_l2  # the fault's plain figure is below the noise's
    assert faulty.value("rel_l2") > 0.02  # what the threshold judges: a real rise


def test_a_rel_l2_tests_file_is_version_3_even_where_its_recording_run_had_no_noise(tmp_path):
    """It was version 2 (no line differed), then judged plain against plain: the next run's
    subnormal noise failed a correct device (rel_l2 0.000e+00 -> 1.803e-01)."""
    path = tmp_path / "default.yaml"
    assert check_baseline(_run(_exact()), path, header=HEADER, inputs=SPEC, **REL).status == \
        "missing"
    assert _version(path) == ["version: 3"]
    out = check_baseline(_run(_noisy()), path, header=HEADER, inputs=SPEC, **REL)
    assert out.passed, out.message
    out = check_baseline(_run(_faulty()), path, header=HEADER, inputs=SPEC, **REL)
    assert not out.passed and "rel_l2 0.000e+00 -> 3.155e-02" in out.message, out.message


def test_a_cosine_tests_file_shared_with_a_rel_l2_test_keeps_the_judged_figure(tmp_path):
    """The cosine test recorded version 2 (msaccucmp's plain rel_l2, swollen by noise): the
    rel_l2 test judged a real fault plain against plain and passed it."""
    path = tmp_path / "default.yaml"
    check_baseline(_run(_noisy()), path, header=HEADER, inputs=SPEC)  # the cosine test records
    assert _version(path) == ["version: 3"]
    assert check_baseline(_run(_noisy()), path, header=HEADER, inputs=SPEC, **REL).passed
    out = check_baseline(_run(_faulty()), path, header=HEADER, inputs=SPEC, **REL)
    assert not out.passed and "rel_l2 0.000e+00 -> 3.155e-02" in out.message, out.message


def test_a_cosine_test_without_noise_writes_what_earlier_releases_wrote(tmp_path):
    path = tmp_path / "default.yaml"
    check_baseline(_run(_exact()), path, header=HEADER, inputs=SPEC)
    assert _version(path) == ["version: 2"]


def test_a_rewrite_never_turns_a_version_3_file_into_version_2(tmp_path):
    """The rel_l2 test wrote version 3; the cosine test sharing the file rewrote it as version 2
    under --accuracy-regen-all (the last writer won) and the note's promise of version 3 failed."""
    path = tmp_path / "default.yaml"
    check_baseline(_run(_exact()), path, header=HEADER, inputs=SPEC, **REL)
    assert _version(path) == ["version: 3"]
    written = path.read_bytes()
    out = check_baseline(_run(_exact()), path, header=HEADER, inputs=SPEC,
                         regen=Regen.ALL)  # the cosine test, no noise in its run
    assert out.status == "rewritten" and path.read_bytes() == written
    check_baseline(_run(_exact()), path, header=HEADER, inputs=SPEC, regen=Regen.FAILING)
    assert _version(path) == ["version: 3"]
