"""The diagnosis's progress lines stay readable: a keep_dtype mode's name lists every op kept,
and a PP-OCRv4 rec diagnosis printed lines of 3,870 characters (a trial)."""
from pytest_ascend_accuracy.core.modes import keep_dtype
from pytest_ascend_accuracy.triage.runner import _short_name


def test_a_long_keep_dtype_mode_is_cut_with_its_count():
    mode = keep_dtype([f"p2o.Conv.{k}" for k in range(200)])
    assert len(mode.name) > 2000
    line = _short_name(mode)
    assert len(line) <= 120 and line.endswith("... (200 ops kept)")
    assert line.startswith(mode.name[:50])


def test_a_short_name_is_kept():
    assert _short_name(keep_dtype(["a", "b"])) == keep_dtype(["a", "b"]).name
