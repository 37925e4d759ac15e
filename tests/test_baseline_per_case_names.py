"""``baseline.cases``: which file is the baseline of a model x mode on given inputs. Each inputs
case its own (the cases of a parametrized test shared ``<mode>.yaml`` and failed each other,
finding 1 of the PP-OCRv4 recogniser trial); the default inputs keep ``<mode>.yaml``; a
``<mode>.yaml`` from before cases is read by the case whose inputs it records."""
import numpy as np

from pytest_ascend_accuracy.baseline import Baseline, input_spec, write_baseline
from pytest_ascend_accuracy.baseline.cases import (case_name, case_path, is_default_case,
                                                   locate_case, other_cases_note)
from pytest_ascend_accuracy.testing import models as tiny_models

ENV = {"backend": "emulator", "toolkit_version": "t", "soc_version": "s", "atc_args": []}
X1, X2 = np.zeros((1, 4), np.float32), np.ones((2, 4), np.float32)


def _seeded(seed=0, shape=None, arrays=X1):
    return input_spec({"x": arrays}, seed=seed, input_shape=shape)


def _stored(arrays=X1, **more):
    return input_spec({"x": arrays, **more}, stored=True)


def test_case_names_say_how_the_inputs_are_made():
    assert case_name(_seeded()) == "seed0"
    assert case_name(_seeded(3, {"x": [2, 4]}, X2)) == "seed3_x=2x4"
    both = input_spec({"x": X1, "m": X2}, seed=0, input_shape={"x": [1, 4], "m": [2, 4]})
    assert case_name(both) == "seed0_m=2x4,x=1x4"
    # the same recipe is the same case whatever its bytes (another numpy: rebaseline required)
    assert case_name(_seeded(0, {"x": [1, 4]}, X1)) == case_name(_seeded(0, {"x": [1, 4]}, X1 + 1))
    stored = case_name(_stored())
    assert stored.startswith("arrays-") and stored.endswith("_x=1x4")
    assert case_name(_stored(X1 + 1)) != stored  # other arrays of the same shape: another case
    assert case_name(_stored()) == stored
    assert is_default_case(_seeded()) and not is_default_case(_seeded(1))
    assert not is_default_case(_seeded(0, {"x": [1, 4]})) and not is_default_case(_stored())


def test_names_made_file_safe_stay_apart():
    a = input_spec({"in:0": X1}, seed=0, input_shape={"in:0": [1, 4]})
    b = input_spec({"in_0": X1}, seed=0, input_shape={"in_0": [1, 4]})
    assert case_name(a) != case_name(b) and "/" not in case_name(a) and ":" not in case_name(a)
    assert case_path("r/m/default.yaml", b).as_posix() == "r/m/default/seed0_in_0=1x4.yaml"


def _record(path, spec):
    write_baseline(path, Baseline(environment=ENV, inputs=spec, ops=()))


def test_each_case_its_file_and_the_default_keeps_mode_yaml(tmp_path, mlp_onnx_file):
    root = tmp_path / "bl"
    home = root / "models" / "mlp" / "default.yaml"
    assert locate_case(root, mlp_onnx_file, "default", tmp_path, _seeded()).path == home
    assert locate_case(root, mlp_onnx_file, "default", tmp_path,
                       _seeded(0, {"x": [2, 4]}, X2)).path \
        == home.with_suffix("") / "seed0_x=2x4.yaml"
    assert locate_case(root, mlp_onnx_file, "fusion_off", tmp_path, _stored()).path == \
        home.with_name("fusion_off") / f"{case_name(_stored())}.yaml"


def test_a_mode_yaml_from_before_cases_belongs_to_the_case_it_records(tmp_path, mlp_onnx_file):
    root = tmp_path / "bl"
    home = root / "models" / "mlp" / "default.yaml"
    two = _seeded(0, {"x": [2, 4]}, X2)
    _record(home, two)  # what the old code left: one shared file, recording the last case
    assert locate_case(root, mlp_onnx_file, "default", tmp_path, two).path == home
    one = _seeded(0, {"x": [1, 4]})
    located = locate_case(root, mlp_onnx_file, "default", tmp_path, one)
    assert located.path == home.with_suffix("") / "seed0_x=1x4.yaml"
    # even the default inputs get a file of their own when <mode>.yaml records another case
    assert locate_case(root, mlp_onnx_file, "default", tmp_path, _seeded()).path == \
        home.with_suffix("") / "seed0.yaml"
    assert other_cases_note(located, one) == (
        f"note: a model and mode keep one baseline per inputs case (these inputs: seed0_x=1x4); "
        f"its other cases: {home} (seed0_x=2x4). A file no test uses any more (its seed, shapes "
        f"or arrays changed) can be deleted")
    _record(located.path, one)
    assert locate_case(root, mlp_onnx_file, "default", tmp_path, one).path == located.path
    alone = locate_case(tmp_path / "other", mlp_onnx_file, "default", tmp_path, one)
    assert other_cases_note(alone, one) == ""  # the only case: nothing to add


def test_an_unreadable_mode_yaml_is_reported_not_skipped(tmp_path, mlp_onnx_file):
    home = tmp_path / "bl" / "models" / "mlp" / "default.yaml"
    home.parent.mkdir(parents=True)
    home.write_text("format: [unclosed\n")
    # its error (and --accuracy-regen, which rewrites it) is what the check reports
    assert locate_case(tmp_path / "bl", mlp_onnx_file, "default", tmp_path,
                       _seeded(0, {"x": [1, 4]})).path == home


def test_in_memory_models_get_cases_under_their_key(tmp_path):
    from pytest_ascend_accuracy.baseline.env import model_key

    model = tiny_models.passing_mlp()
    key = model_key(model, tmp_path, "t.py::test_x")
    located = locate_case(tmp_path, model, "default", tmp_path, _seeded(1), "t.py::test_x")
    assert located.path == tmp_path / key / "default" / "seed1.yaml"
