"""A compare of a device dump with a golden whose files sanitise the model's op names
(``net/conv1.0`` -> ``net_conv1_0``) names golden ops as the model does, with or without the
om json: ``ascend-accuracy compare`` of a kept PP-OCRv4 det dump against its golden cache entry,
without ``--om-json``, listed ``439 unmatched (..., p2o_Conv_0, p2o_Conv_1, p2o_Mul_0, ...)``,
names no op of the model has, and its failure block said ``golden p2o_Clip_6 output:0`` where
the plugin says ``p2o.Clip.6``; the Conv of each fused Conv+Relu (named ``p2o.Conv.0`` or
``p2o.Conv.1p2o.Mul.0p2o.Add.2``, its header giving only the last member as the output's
origin) was counted unmatched, where the plugin counts it inside the fused op."""
import re

import onnx
import pytest

from pytest_ascend_accuracy import compare_dumps, load_dump
from pytest_ascend_accuracy.cli import main
from pytest_ascend_accuracy.compare.golden_spelling import in_actual_spelling
from pytest_ascend_accuracy.dump.model import DumpSet, OpRecord

pytest.importorskip("onnxruntime")


@pytest.fixture
def pair(tmp_path):
    """conv_bn_relu with every node named ``net/<name>.0``, dumped under the default mode
    (Conv+Relu fused, named ``net/conv1.0net/relu1.0``), its golden stored with its model."""
    from pytest_ascend_accuracy.testing import models
    from pytest_ascend_accuracy.testing.emulated_pair import emulated_pair

    proto = models.conv_bn_relu()
    for node in proto.graph.node:
        node.name = f"net/{node.name}.0"
    return emulated_pair(tmp_path, proto, name="cbr")


def _model_names(pair):
    return {n.name for n in onnx.load(str(pair.model)).graph.node}


def test_the_library_names_golden_ops_as_the_dump_does_and_counts_fused_members(pair):
    result = compare_dumps(load_dump(pair.dump), load_dump(pair.golden))
    cov = result.coverage
    real = _model_names(pair)
    assert set(cov.compared) | set(cov.fused) <= real, (cov.compared, cov.fused)
    assert {r.golden_name for r in result.rows} <= real
    # the fused ops' own names name their Convs: inside fused ops, not unmatched
    assert sorted(cov.fused) == ["net/conv1.0", "net/conv2.0"]
    # a member no name of the dump holds keeps the golden's spelling: nothing tells its real one
    assert sorted(cov.unmatched_golden) == ["net_bn1_0", "net_bn2_0"]


def test_the_cli_without_om_json_prints_only_the_models_names(pair, capsys):
    assert main(["compare", pair.dump, pair.golden, "--threshold", "1"]) == 1
    out = capsys.readouterr().out
    assert re.search(r"^  golden +net/relu\d\.0 output:0 \(matched by origin\)$", out, re.M), out
    line = next(ln for ln in out.splitlines() if ln.startswith("coverage:"))
    # the stored golden's record names its model: its unmatched ops get the model's names
    assert ("9 golden ops: 5 compared, 2 inside fused ops, 2 unmatched (net/bn1.0, net/bn2.0)"
            in line), line
    assert re.findall(r"\bnet_\w+", out) == []  # no name in the files' spelling, anywhere


def test_a_stem_two_spellings_share_or_another_op_holds_stays():
    def op(name, origin=None):
        from pytest_ascend_accuracy.dump.model import TensorRef
        t = TensorRef(kind="output", index=0, dtype="float32", shape=(1,), loader=None,
                      origin=(origin, 0) if origin else None)
        return OpRecord(name=name, op_type="Add", outputs=[t],
                        original_names=(origin,) if origin else ())

    golden = DumpSet([op("a_b"), op("c_d"), op("e.f"), op("e_f"), op("g_h")])
    actual = DumpSet([op("a.b"), op("c.d"), op("c/d"), op("e_f"), op("g.h", "g/h")])
    names = [o.name for o in in_actual_spelling(golden, actual).ops]
    # a_b -> a.b; c_d: two spellings; e_f: another golden op shares its stem; g_h: two
    assert names == ["a.b", "c_d", "e.f", "e_f", "g_h"]


def test_a_fused_name_is_cut_at_the_member_its_header_names(tmp_path):
    """Names that allow two cuts: Conv ``a`` + Relu ``bc`` fuse to ``abc`` (header: ``bc``), and
    the shortest cut read it as ``ab`` + ``c``, ops of the next layer: BN ``c`` counted inside a
    fused op it is not in, Conv ``a`` unmatched (a review). The cut ends with the header's member;
    the om json's reading is the reference."""
    import numpy as np
    from onnx import helper, numpy_helper

    from pytest_ascend_accuracy.testing.emulated_pair import emulated_pair

    rng = np.random.default_rng(0)
    nodes, inits, x = [], [], "x"
    for k, (conv, bn, relu) in enumerate([("a", None, "bc"), ("ab", "c", "cd")]):
        def add(name, shape):
            inits.append(numpy_helper.from_array(
                np.asarray(rng.standard_normal(shape) * 0.2 + (1 if name[0] == "s" else 0),
                           np.float32), name))
        for name, shape in ((f"w{k}", (4, 4, 3, 3)), (f"cb{k}", 4), (f"s{k}", 4), (f"bb{k}", 4),
                            (f"m{k}", 4)):
            add(name, shape)
        inits.append(numpy_helper.from_array(np.full(4, 0.7, np.float32), f"v{k}"))
        nodes.append(helper.make_node("Conv", [x, f"w{k}", f"cb{k}"], [f"c{k}"], name=conv,
                                      pads=[1, 1, 1, 1], kernel_shape=[3, 3]))
        y = f"c{k}"
        if bn:
            nodes.append(helper.make_node("BatchNormalization",
                                          [y, f"s{k}", f"bb{k}", f"m{k}", f"v{k}"], [f"b{k}"],
                                          name=bn))
            y = f"b{k}"
        nodes.append(helper.make_node("Relu", [y], [f"r{k}"], name=relu))
        x = f"r{k}"
    graph = helper.make_graph(nodes, "m", [helper.make_tensor_value_info("x", 1, [1, 4, 8, 8])],
                              [helper.make_tensor_value_info(x, 1, None)], initializer=inits)
    pair = emulated_pair(tmp_path, helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), name="m")
    header = compare_dumps(load_dump(pair.dump), load_dump(pair.golden)).coverage
    om = compare_dumps(load_dump(pair.dump, om_json=pair.om_json),
                       load_dump(pair.golden)).coverage
    assert "a" in om.fused and "a" in header.fused and "a" not in header.unmatched_golden
    assert set(header.fused) <= set(om.fused)  # nothing counted inside a fused op it is not in


def test_a_fused_name_no_header_member_ends_keeps_the_shortest_cut():
    """Where no member the header names ends the fused op's name, the shortest cut stands (it
    gave [] after 5a5a670: its fallback could not run, every fused op having header names)."""
    from pytest_ascend_accuracy.compare.golden_spelling import name_members
    from pytest_ascend_accuracy.graph.concatenated_names import ConcatenatedNames

    stems = ConcatenatedNames({"a", "bc", "ab", "c"})
    assert name_members(OpRecord("abc", "Fused", original_names=("a", "bc")), stems) == ["a", "bc"]
    assert name_members(OpRecord("abc", "Fused", original_names=("x_other",)), stems) == ["ab", "c"]
