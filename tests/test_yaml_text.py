"""Every YAML snippet the product prints loads back as exactly the names and values it means
(``core.yaml_text``). An audit (H325) pasted them: ``input_shape: {on: [1, 4]}`` loaded as
``{True: [1, 4]}``, ``inputs: {x: data/x,a_float32.npy}`` as two keys, ``{x: data/x #1.npy}``
was no YAML at all, ``per_op: {on: ...}`` (the tiny-float32 hint) named an op ``True``, and
``ignore: [...]`` spelled one character outside the BMP as two (JSON's surrogate escapes)."""
import math

import numpy as np
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

#: names a model, an op or a file may have that plain YAML reads otherwise
NAMES = ["on", "Yes", "NULL", "~", "1e5", "0x10", "a: b", "a,b", "x #1", "[x]", "{x}", "-x",
         "? x", "*x", "&x", "!x", "%x", "@x", "`x`", '"x"', "'x'", "x'y", "é", "名前", "😀", "",
         "/attn/q/MatMul", "onnx::MatMul_12", "off", "y", "N", "true", "False", "<<", "=",
         ".inf", ".NaN", "...", "---", "1_000", "1:20", "x\x7f", "a\u2028b", "a\nb", "a\tb",
         " x", "x ", "data/x,a_float32.npy", "data/x #1_float32.npy", "~/x.npy", "x\\y"]


def _loads(snippet: str):
    return yaml.safe_load(snippet)


def _wrong(cases):
    return [(name, snippet, got) for name, snippet, got, want in cases if got != want]


def test_every_awkward_name_loads_back_from_the_helpers():
    from pytest_ascend_accuracy.core.yaml_text import (yaml_flow_list, yaml_flow_map,
                                                       yaml_scalar)

    cases = []
    for name in NAMES:
        snippet = "inputs: " + yaml_flow_map({name: f"data/{name}.npy", "k": [1, 4]})
        cases.append((name, snippet, _loads(snippet),
                      {"inputs": {name: f"data/{name}.npy", "k": [1, 4]}}))
        snippet = "ignore: " + yaml_flow_list([name, name])
        cases.append((name, snippet, _loads(snippet), {"ignore": [name, name]}))
        snippet = f"name: {yaml_scalar(name)}"  # in block context too
        cases.append((name, snippet, _loads(snippet), {"name": name}))
    assert not _wrong(cases), _wrong(cases)


def test_plain_where_plain_is_right_and_lists_of_ints_stay_as_they_were():
    from pytest_ascend_accuracy.core.yaml_text import yaml_flow_map

    assert yaml_flow_map({"x": "data/x_1.npy", "z": [1, 4]}) == "{x: data/x_1.npy, z: [1, 4]}"
    assert yaml_flow_map({"/attn/q/MatMul": "../d/q.npy"}) == "{/attn/q/MatMul: ../d/q.npy}"
    assert yaml_flow_map({"on": [1, 4], "a,b": "x #1.npy", "y": 1e-7}) == (
        '{"on": [1, 4], "a,b": "x #1.npy", "y": 1.0e-07}')


def test_the_input_shape_advice_loads_back_each_input_name():
    """``graph.shape_advice.yaml_form``: ``add to the entry: input_shape: {...}``."""
    from pytest_ascend_accuracy.graph.shape_advice import yaml_form

    cases = []
    for name in NAMES:
        snippet = yaml_form({name: (1, 4), "x": (2,)})
        cases.append((name, snippet, _loads(snippet), {"input_shape": {name: [1, 4], "x": [2]}}))
    assert not _wrong(cases), _wrong(cases)
    assert yaml_form({"x": (1, 3, 1, 1)}) == "input_shape: {x: [1, 3, 1, 1]}"


def test_the_ignore_list_loads_back_each_op_name_all_quoted():
    """``report.ignore_spelling.yaml_list``: quoted as before, each name loading back."""
    from pytest_ascend_accuracy.report.ignore_spelling import yaml_list

    cases = []
    for name in NAMES:
        snippet = f"ignore: {yaml_list([name, 'Relu_1'])}"
        cases.append((name, snippet, _loads(snippet), {"ignore": [name, "Relu_1"]}))
    assert not _wrong(cases), _wrong(cases)
    assert yaml_list(["a", "b c"]) == '["a", "b c"]'


def _tiny_advice(name, own):
    """The tiny-float32 hint's per_op advice for op ``name`` (a tiny float32 output off by
    2**-24), the check's own per_op entries ``own`` (ops that pass) kept."""
    from pytest_ascend_accuracy.compare.engine import compare_dumps
    from pytest_ascend_accuracy.dump.model import DumpSet
    from pytest_ascend_accuracy.report.tiny_float32 import advice

    golden = np.arange(1, 65, dtype=np.float32) * np.float32(2.0 ** -24)
    off = golden.copy()
    off[::2] += np.float32(2.0 ** -24)
    ones = np.ones(64, np.float32)
    types = {n: "Sigmoid" for n in (*own, name)}
    result = compare_dumps(
        DumpSet.from_arrays({**{n: [ones] for n in own}, name: [off]}, op_types=types),
        DumpSet.from_arrays({**{n: [ones] for n in own}, name: [golden]}, op_types=types))
    verdict = result.judge(0.95, per_op=own)
    rows = [r for r in result.rows if r.op_name == name]
    text = advice(verdict, rows)
    return text.split("(YAML: per_op: ", 1)[1].rsplit("; check_accuracy(", 1)[0]


def test_the_tiny_float32_per_op_advice_loads_back_each_op_name_and_threshold():
    """``report.tiny_float32.advice``'s YAML form: its own ``_yaml_key`` left ``on`` plain, and
    a check's own entry of 1e-7 was written ``1e-07``, a string to PyYAML."""
    cases = []
    for name in NAMES:
        if not name.strip() or "\n" in name or "\u2028" in name:
            continue  # (no op of a dump is named so)
        own = {"own op": 1e-7, "Yes": 0.5}
        if name in own:
            continue
        snippet = _tiny_advice(name, own)
        want = {**own, name: {"max_abs": 1.2e-07}}
        cases.append((name, snippet, _loads(snippet), want))
    assert not _wrong(cases), _wrong(cases)


@settings(max_examples=300, deadline=None)
@given(st.text(), st.lists(st.integers(1, 4096), max_size=4))
def test_any_text_loads_back_as_a_key_and_a_value(name, dims):
    from pytest_ascend_accuracy.core.yaml_text import yaml_flow_list, yaml_flow_map

    snippet = f"a: {yaml_flow_map({name: dims, 'v': name})}\nb: {yaml_flow_list([name])}"
    assert _loads(snippet) == {"a": {name: dims, "v": name}, "b": [name]}, snippet


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False) | st.integers(-10 ** 20, 10 ** 20) | st.booleans())
def test_any_number_loads_back_as_that_number(value):
    from pytest_ascend_accuracy.core.yaml_text import yaml_number

    got = _loads(f"t: {yaml_number(value)}")["t"]
    assert got == value and type(got) is type(value), (value, yaml_number(value))


def test_nan_loads_back_as_nan():
    from pytest_ascend_accuracy.core.yaml_text import yaml_number

    assert math.isnan(_loads(f"t: {yaml_number(float('nan'))}")["t"])
