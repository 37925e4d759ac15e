"""The finished-graph op types (core.ascend_optypes) against the real ATC om jsons in
../shared/realdata, and keep_dtype ``OpType::`` entries spelled as those files show them."""
import re
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from pytest_ascend_accuracy import keep_dtype
from pytest_ascend_accuracy.core.ascend_optypes import ascend_type, finished_types
from pytest_ascend_accuracy.dump.om_json import read_om_json
from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.graph.op_catalogue import check_mode

REAL = Path(__file__).resolve().parents[3] / "shared" / "realdata" / "msit" / "msit" / "test" / \
    "UT" / "resource"
ATC6 = REAL / "analyze" / "dataset" / "model" / "test.om.json"
ATC51 = REAL / "msquickcmp" / "om" / "model.json"


def test_the_atc_6_types_are_the_tables_first_names():
    assert [ascend_type(t) for t in ("BatchNormalization", "ReduceMin", "Transpose")] == [
        "BNInferenceD", "ReduceMinD", "Transpose"]
    assert finished_types("Transpose") == ("Transpose", "TransposeD")  # ATC 5.1's


@pytest.mark.skipif(not ATC6.is_file(), reason="../shared/realdata not present")
@pytest.mark.parametrize("path", [ATC6, ATC51], ids=["atc6.0", "atc5.1"])
def test_every_real_op_of_one_onnx_node_has_a_type_the_table_knows(path):
    """An op made of one ONNX node ``<OnnxType>_<n>`` has a type ``finished_types`` lists for
    that ONNX type (the emulator's dumps and the overflow rules use these names)."""
    checked = 0
    for op in read_om_json(path).ops:
        if len(op.original_names) != 1 or op.type == "Const":  # a plugin's weight (Gather's)
            continue
        m = re.fullmatch(r"([A-Za-z]+)_\d+", op.original_names[0])
        if not m or m.group(1) in ("Constant", "RandomNormalLike"):
            continue
        onnx_type = m.group(1)
        assert op.type in finished_types(onnx_type), (op.name, op.type, onnx_type)
        checked += 1
    assert checked >= 3


def _model(tmp_path):
    c = 4
    inits = [numpy_helper.from_array(np.ones(c, np.float32), n) for n in ("s", "b", "m", "v")]
    g = helper.make_graph([
        helper.make_node("Transpose", ["x"], ["t"], name="Transpose_55", perm=[0, 2, 1]),
        helper.make_node("BatchNormalization", ["t", "s", "b", "m", "v"], ["y"],
                         name="BatchNormalization_60"),
        helper.make_node("ReduceMin", ["y"], ["z"], name="ReduceMin_328")],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, c])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)], inits)
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


@pytest.mark.parametrize("entry, onnx_type, parser", [
    ("OpType::BNInferenceD", "BatchNormalization", "BatchNorm"),
    ("OpType::BNInference", "BatchNormalization", "BatchNorm"),
    ("OpType::TransposeD", "Transpose", "Transpose"),
    ("OpType::ReduceMinD", "ReduceMin", "ReduceMin")])
def test_a_type_copied_from_a_real_om_json_names_the_parsers(tmp_path, entry, onnx_type, parser):
    with pytest.raises(ConfigError) as info:
        check_mode(keep_dtype([entry]), _model(tmp_path), "test")
    text = str(info.value)
    assert f"a finished graph's name for ONNX {onnx_type}" in text
    assert f"closest: 'OpType::{parser}'" in text
