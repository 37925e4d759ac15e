"""A fused op's name (``conv1relu1``, what a failure block prints: its members' names joined)
given to keep_dtype is refused with the original node names ATC's keep_dtype takes, not with
the closest (unrelated) names; other unknown names keep the closest-names error, and per_op /
ignore accept the fused name (they match the dumps' names)."""
import onnx
import pytest

from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.graph.op_catalogue import (ModelOps, check_setting_names,
                                                       split_concatenated_names)
from pytest_ascend_accuracy.testing import models as tiny_models

#: conv_bn_relu's first block as the emulator names it once fused (bn1 folded into conv1)
FUSED = "conv1relu1"
MEMBERS_TEXT = "'conv1', 'relu1'"


@pytest.mark.parametrize("text, names, expected", [
    ("Conv@24Add@15Relu@9", ["Conv@49", "Conv@24", "Add@15", "Relu@9"], ["Conv@24", "Add@15", "Relu@9"]),
    # the fewest names wins over a split into more, shorter ones; among as few, the longest first
    ("abc", ["a", "b", "c", "ab", "abc_", "bc"], ["ab", "c"]),
    ("abcd", ["a", "b", "c", "d", "cd", "ab"], ["ab", "cd"]),
    ("abcd", ["ab", "a", "bcd", "c", "d"], ["a", "bcd"]),  # not the greedy ab + c + d
    # a name made of one node's name repeated is still that node twice
    ("relu1relu1", ["relu1"], ["relu1", "relu1"]),
])
def test_split_concatenated_names_finds_the_fewest_members(text, names, expected):
    assert split_concatenated_names(text, names) == expected


@pytest.mark.parametrize("text, names", [
    ("Conv@24Add@15Relu@9", ["Conv@24", "Add@15"]),  # a piece left over
    ("Conv@24", ["Conv@24", "Add@15"]),  # one name alone is no fused op
    ("Conv@2", ["Conv@24"]),
    ("", ["a"]),
    ("ab", []),
])
def test_split_concatenated_names_none_without_a_full_split(text, names):
    assert split_concatenated_names(text, names) is None


def _ops():
    return ModelOps("m", ("Conv@24", "Add@15", "Relu@9", "Conv@49", "Conv@45"),
                    ("Conv", "Add", "Relu", "Conv", "Conv"))


def test_check_keep_dtype_names_the_members_of_a_fused_name():
    with pytest.raises(ConfigError) as err:
        _ops().check_keep_dtype(["Conv@24Add@15Relu@9"], "here")
    text = str(err.value)
    assert ("keep_dtype entry 'Conv@24Add@15Relu@9' is the name of a fused op: keep_dtype takes "
            "the original node names, which that name joins: 'Conv@24', 'Add@15', 'Relu@9'") in text
    assert "closest" not in text


def test_check_keep_dtype_keeps_closest_names_for_a_typo():
    with pytest.raises(ConfigError, match="'Conv@4' is not an op of model 'm'; closest: 'Conv@49'"):
        _ops().check_keep_dtype(["Conv@4"], "here")


def test_per_op_and_ignore_accept_the_fused_name_of_the_dumps():
    dump_names = [FUSED, "conv2relu2", "gap", "flatten", "fc", "conv1", "relu1"]
    check_setting_names([FUSED], [FUSED], dump_names, "m", "here")  # no error


PY_TEST = f'''
from pytest_ascend_accuracy import accuracy, keep_dtype

M = "models/conv_bn_relu.onnx"


@accuracy(modes=[keep_dtype(["{FUSED}"])])
def test_marker_mode(ascend_model):
    ascend_model(M)


def test_fixture_argument(ascend_model):
    ascend_model(M, keep_dtype=["{FUSED}"])


def test_typo_keeps_closest(ascend_model):
    ascend_model(M, keep_dtype=["conv1x"])
'''

YAML = f'''
models:
  - model: models/conv_bn_relu.onnx
    inputs: {{seed: 0}}
    modes: [{{keep_dtype: ["{FUSED}"]}}]
'''


@pytest.fixture
def conv_bn_relu_model(pytester):
    directory = pytester.mkdir("models")
    onnx.save(tiny_models.conv_bn_relu(), str(directory / "conv_bn_relu.onnx"))
    return directory / "conv_bn_relu.onnx"


def _fused_line(where: str) -> str:
    return (f"ascend-accuracy configuration error: *{where}*keep_dtype entry '{FUSED}' is the name "
            f"of a fused op: keep_dtype takes the original node names, which that name joins: "
            f"{MEMBERS_TEXT}")


def test_python_keep_dtype_with_a_fused_name_names_its_members(pytester, conv_bn_relu_model):
    pytester.makepyfile(test_fused=PY_TEST)
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(failed=3)
    run.stdout.fnmatch_lines([_fused_line("test_marker_mode"), _fused_line("test_fixture_argument"),
                              "ascend-accuracy configuration error: *keep_dtype entry 'conv1x' is "
                              "not an op of model 'conv_bn_relu'; closest: 'conv1'*"], consecutive=False)
    assert "closest" not in "".join(line for line in run.outlines if f"'{FUSED}'" in line)


def test_yaml_keep_dtype_with_a_fused_name_names_its_members(pytester, conv_bn_relu_model):
    """Refused at collection, under the mode's key (it was refused when the item converted)."""
    pytester.makefile(".yaml", accuracy_fused=YAML)
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(errors=1)
    run.stdout.fnmatch_lines([
        f"invalid accuracy suite: accuracy_fused.yaml: models[[]0[]].modes[[]0[]].keep_dtype: "
        f"keep_dtype entry '{FUSED}' is the name of a fused op: keep_dtype takes the original "
        f"node names, which that name joins: {MEMBERS_TEXT}"])
    assert "closest" not in "".join(line for line in run.outlines if f"'{FUSED}'" in line)
