"""AccuracySpec: parsing and validating @accuracy arguments (no pytest session needed)."""
import math

import pytest

from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.plugin.marker_spec import AccuracySpec, make_spec, spec_from_marker
from pytest_ascend_accuracy.core.modes import HIGH_PRECISION, keep_dtype

WHERE = "test_x.py::test_y"


def test_no_marker_gives_defaults():
    spec = spec_from_marker(None, default_threshold=0.9)
    assert spec == AccuracySpec(threshold=0.9)
    assert not spec.explicit_threshold


def test_all_arguments():
    mark = pytest.mark.accuracy(threshold=0.99, per_op={"relu1": 0.5}, ignore=["fc3/Add"],
                                modes=["default", "high_precision", keep_dtype(["norm"])]).mark
    spec = spec_from_marker(mark, where=WHERE)
    assert spec.threshold == 0.99 and spec.explicit_threshold
    assert spec.per_op == (("relu1", 0.5),)
    assert spec.ignore == ("fc3/Add",)
    assert [m.name for m in spec.modes] == ["default", "high_precision", "keep_dtype(norm)"]
    assert spec.modes[1] == HIGH_PRECISION


def test_positional_threshold():
    assert spec_from_marker(pytest.mark.accuracy(0.5).mark).threshold == 0.5


@pytest.mark.parametrize("kwargs, problem", [
    ({"threshold": 1.5}, "threshold must be within [0, 1], got 1.5"),
    ({"threshold": -0.1}, "threshold must be within [0, 1], got -0.1"),
    ({"threshold": math.nan}, "threshold must be within [0, 1], got nan"),
    ({"threshold": "high"}, "threshold must be a number, got 'high'"),
    ({"threshold": True}, "threshold must be a number, got True"),
    ({"metric": "cosin"}, "unknown metric 'cosin'; closest: 'cosine'; known: cosine, rel_l2, "
                          "max_abs, mean_abs, rmse, max_rel, mean_rel, acc_rel, kl"),
    ({"modes": ["default", "turbo"]}, "unknown mode 'turbo'; known: default, high_precision, "
                                      "buffer_off, fusion_off"),
    ({"modes": []}, "modes must be a non-empty list of mode names or Mode objects, got []"),
    ({"modes": ["default", "default"]}, "modes repeats default"),
    ({"per_op": ["relu1"]}, "per_op must be a mapping of op name to threshold, got list"),
    ({"per_op": {"relu1": 2}}, "per_op['relu1'] must be within [0, 1], got 2.0"),
    # which entry: the metric alone named no op (a trial, in a YAML suite's per_op)
    ({"per_op": {"relu1": 0.9, "fc": {"cosin": 0.9}}},
     "per_op['fc']: unknown metric 'cosin'; closest: 'cosine'; known: cosine, rel_l2, max_abs, "
     "mean_abs, rmse, max_rel, mean_rel, acc_rel, kl"),
    ({"ignore": [3]}, "ignore entries must be op names, got 3 (an int: op names are strings, "
                      "'3')"),
    ({"tolerance": 0.1}, "@accuracy got unknown argument(s) tolerance; closest: "
                         "'scale_tolerance'; known: threshold, metric, per_op, ignore, modes, "
                         "max_drop, scale_tolerance"),
    ({"metric": "max_abs"}, "metric='max_abs' needs an explicit threshold (the default threshold "
                            "0.95 is a cosine threshold)"),
    ({"metric": "max_abs", "threshold": -1}, "threshold for max_abs must be a finite number >= 0, "
                                             "got -1.0"),
])
def test_bad_arguments_name_the_test(kwargs, problem):
    with pytest.raises(ConfigError) as info:
        spec_from_marker(pytest.mark.accuracy(**kwargs).mark, where=WHERE)
    assert str(info.value) == f"{WHERE}: {problem}"


def test_two_positional_arguments_refused():
    with pytest.raises(ConfigError, match="at most one positional argument"):
        spec_from_marker(pytest.mark.accuracy(0.9, "cosine").mark, where=WHERE)


def test_error_metric_threshold_may_exceed_one():
    spec = make_spec(threshold=2.5, metric="max_abs")
    assert spec.threshold == 2.5 and spec.metric == "max_abs"


def test_merged_call_site_overrides():
    spec = make_spec(per_op={"a": 0.5, "b": 0.6}, ignore=["x"])
    merged = spec.merged({"b": 0.7, "c": 0.8}, ["y", "x"])
    assert merged.per_op_dict == {"a": 0.5, "b": 0.7, "c": 0.8}
    assert merged.ignore == ("x", "y")
    assert spec.per_op_dict == {"a": 0.5, "b": 0.6}  # unchanged (frozen)
