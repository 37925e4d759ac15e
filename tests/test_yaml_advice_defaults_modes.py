"""The last YAML the product printed with its own quoting now goes through ``core.yaml_text``
(F16's review): a mode's ``yaml_form`` (in hints, ``--mode``, triage) wrote keep_dtype and
extra names with ``json.dumps``, so an op named with a character outside the BMP loaded back
as two surrogates (``keep_dtype`` then named no op); the ``defaults.per_op`` fix wrote with
``repr`` (``1e-07``, a string to YAML; ``'a\\\\b'``, two backslashes to YAML). And a baseline
file, whose strings and floats ``core.yaml_text`` now writes too (one implementation, where
``baseline.yaml_text`` had a copy), keeps its bytes."""
import math

import pytest
import yaml

#: op and option names YAML or JSON quoting can get wrong
NAMES = ["😀/MatMul", "層/MatMul", "a\\b", 'a"b', "on", "a: b", "x #1", "a\u2028b", "x\x7f",
         "onnx::MatMul_12", "p2o.Conv.0", "\U0010fffd", "'q'"]


@pytest.mark.parametrize("name", NAMES)
def test_a_modes_yaml_form_loads_back_its_keep_dtype_and_extra_names(name):
    from pytest_ascend_accuracy.core.modes import Mode, keep_dtype, mode_from_spec

    mode = Mode(fusion=False, extra=(("modify_mixlist", f"{name}.json"),)) | keep_dtype([name])
    spec = yaml.safe_load(mode.yaml_form())
    assert spec["keep_dtype"] == [name], mode.yaml_form()
    assert spec["extra"] == {"modify_mixlist": f"{name}.json"}, mode.yaml_form()
    assert mode_from_spec(spec) == mode
    alone = keep_dtype([name, "b"]).yaml_form()  # a preset's keep_dtype (hints print it)
    assert yaml.safe_load(alone) == {"keep_dtype": [name, "b"]}, alone


def test_a_modes_yaml_form_keeps_its_double_quoted_spelling():
    """Printed hints and tests read ``keep_dtype: ["norm"]``: only what JSON got wrong moved."""
    from pytest_ascend_accuracy.core.modes import FUSION_OFF, Mode, keep_dtype

    assert (FUSION_OFF | keep_dtype(["p2o.Conv.0"])).yaml_form() == (
        '{base: fusion_off, keep_dtype: ["p2o.Conv.0"]}')
    assert Mode(fusion=False, extra=(("log", "error"),)).yaml_form() == (
        '{fusion: false, extra: {"log": "error"}}')
    assert keep_dtype(["😀"]).yaml_form() == '{keep_dtype: ["😀"]}'


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("kept, refused", [(1e-07, 1.5), (0.5, 1e16), ({"max_abs": 1e-30}, 2)])
def test_the_defaults_per_op_fix_loads_back_as_its_names_and_numbers(name, kept, refused):
    from pytest_ascend_accuracy.plugin.yaml_defaults import _other_metric_fix

    fix = _other_metric_fix({name: kept, "fc2/MatMul": refused}, "defaults", "cosine", "rel_l2")
    assert yaml.safe_load(f"per_op: {fix}") == {
        "per_op": {name: kept, "fc2/MatMul": {"rel_l2": refused}}}, fix


def test_a_baseline_file_keeps_its_bytes():
    """The text the baseline code rendered before its quoting and float spelling moved to
    ``core.yaml_text`` (awkward keys, strings, every kind of float)."""
    from pytest_ascend_accuracy.baseline.file import (Baseline, InputSpec, OpBaseline,
                                                      TensorSpec, render)

    odd = '😀\\"\x7f'
    baseline = Baseline(
        environment={"backend": "emulator", "toolkit_version": "x", "on": 1e-07,
                     "null": [1e16, -0.0, math.nan, math.inf, -math.inf, True, None, 3]},
        inputs=InputSpec(seed=0, tensors=(TensorSpec(odd, "float32", (1, 4), "ab" * 32),),
                         input_shape=((odd, (1, 4)),)),
        ops=(OpBaseline("a\\b", cosine=0.9999995, rel_l2=1e-07, max_abs=math.inf, nan=1),
             OpBaseline("😀\u2028", cosine=math.nan, rel_l2=12345.678, max_abs=5e-324),
             OpBaseline("x", compared=False)),
        info={"model": "m", "y": 1.5e300})
    text = "".join(line for line in render(baseline).splitlines(True)
                   if not line.startswith("#"))
    assert text == EXPECTED
    back = yaml.safe_load(text)
    assert back["environment"]["on"] == 1e-07 and back["ops"][0]["op"] == "a\\b"


EXPECTED = (
    'format: "pytest-ascend-accuracy/baseline"\n'
    "version: 3\n"
    "environment:\n"
    '  backend: "emulator"\n'
    '  toolkit_version: "x"\n'
    '  "null": [1.0e+16, -0.0, .nan, .inf, -.inf, true, null, 3]\n'
    '  "on": 1.0e-07\n'
    "info:\n"
    '  model: "m"\n'
    "  y: 1.5e+300\n"
    "inputs:\n"
    "  seed: 0\n"
    '  input_shape: {"😀\\\\\\"\\u007f": [1, 4]}\n'
    "  stored: false\n"
    "  tensors:\n"
    '  - {name: "😀\\\\\\"\\u007f", dtype: "float32", shape: [1, 4], sha256: "'
    + "ab" * 32 + '"}\n'
    "ops:\n"
    '- {op: "a\\\\b", slot: "output:0", cosine: 1.000000, rel_l2: 1.000e-07, max_abs: .inf, '
    "nan: 1, inf: 0}\n"
    '- {op: "😀\\u2028", slot: "output:0", cosine: .nan, rel_l2: 1.235e+04, '
    "max_abs: 4.941e-324, nan: 0, inf: 0}\n"
    '- {op: "x", slot: "output:0", compared: false}\n')
