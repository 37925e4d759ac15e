"""A detector's tail as ATC's ONNX parser types and refuses it (a trial, H35):

* keep_dtype ``OpType::NonMaxSuppressionV6``, ``OpType::ArgMaxV2``, ``OpType::GatherNd`` (the
  types CANN's ONNX plugins give NonMaxSuppression, ArgMax and GatherND) were refused ("no op
  of type ..., closest: 'OpType::NonMaxSuppression'"), and the ONNX spellings went to ATC's
  keep_dtype file unchanged, where they match nothing. Now the parser's types are taken, the
  ONNX spellings are written as them, and a finished name (``NonMaxSuppressionV7``) is refused
  naming the parser's, pasteable. The closest type is found ignoring case (``OpType::Lstm``
  got none).
* an ArgMax/ArgMin with ``select_last_index=1``, which CANN's plugins refuse ("Only support
  select_last_index=0, but 1 is obtained now"; GE's E11010), converted in the emulator and
  passed. The emulator and the fake ATC refuse it now, and the advised rewrites convert."""
import re

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

from pytest_ascend_accuracy import keep_dtype
from pytest_ascend_accuracy.core.ascend_optypes import (ascend_type, finished_types,
                                                        parser_type, to_ascend_entry)
from pytest_ascend_accuracy.errors import ConfigError, ConversionError
from pytest_ascend_accuracy.graph.op_catalogue import check_mode

#: well separated values: float16 rounding moves no box, score or index
BOXES = np.array([[[0, 0, 10, 10], [1, 1, 11, 11], [50, 50, 60, 60], [100, 0, 110, 10],
                   [0, 100, 10, 110], [51, 51, 61, 61]]], np.float32)
SCORES = np.array([[[0.9, 0.8, 0.7, 0.6, 0.3, 0.2], [0.1, 0.95, 0.15, 0.85, 0.75, 0.05]]],
                  np.float32)
INPUTS = {"boxes": BOXES, "scores": SCORES}


def _vi(name, elem, shape):
    return h.make_tensor_value_info(name, elem, shape)


def detector_model(path, *, argmax_sli=0, argmin_sli=0, flipped=False):
    """boxes [1,6,4], scores [1,2,6] -> NonMaxSuppression ('nms'), a Slice of its class/box
    columns ('sel_cb'), GatherND of the scores ('det_scores'), ArgMax and ArgMin over the
    classes ('best_cls', 'worst_cls'). ``flipped``: the ArgMax rewritten as the refusal advises
    (the classes reversed, the index taken from the axis length minus 1)."""
    consts = [nh.from_array(np.array([3], np.int64), "max_out"),
              nh.from_array(np.array([0.5], np.float32), "iou"),
              nh.from_array(np.array([0.1], np.float32), "sthr"),
              nh.from_array(np.array([1], np.int64), "c1"),
              nh.from_array(np.array([3], np.int64), "c3"),
              nh.from_array(np.array([0], np.int64), "c0"),
              nh.from_array(np.array([-1], np.int64), "back_start"),
              nh.from_array(np.array([-(2 ** 62)], np.int64), "back_end"),
              nh.from_array(np.array(1, np.int64), "last")]
    nodes = [
        h.make_node("NonMaxSuppression", ["boxes", "scores", "max_out", "iou", "sthr"], ["sel"],
                    name="nms"),
        h.make_node("Slice", ["sel", "c1", "c3", "c1"], ["cb"], name="sel_cb"),
        h.make_node("Squeeze", ["scores", "c0"], ["s2"], name="squeeze"),
        h.make_node("GatherND", ["s2", "cb"], ["det"], name="det_scores"),
        h.make_node("ArgMin", ["scores"], ["worst"], name="worst_cls", axis=1, keepdims=0,
                    select_last_index=argmin_sli)]
    if flipped:  # last index of the max == (n - 1) - first index of the max, classes reversed
        nodes += [h.make_node("Slice", ["scores", "back_start", "back_end", "c1", "back_start"],
                              ["rev"], name="reverse_cls"),
                  h.make_node("ArgMax", ["rev"], ["rbest"], name="best_cls", axis=1, keepdims=0),
                  h.make_node("Sub", ["last", "rbest"], ["best"], name="unflip")]
    else:
        nodes.append(h.make_node("ArgMax", ["scores"], ["best"], name="best_cls", axis=1,
                                 keepdims=0, select_last_index=argmax_sli))
    graph = h.make_graph(nodes, "det", [_vi("boxes", TP.FLOAT, [1, 6, 4]),
                                        _vi("scores", TP.FLOAT, [1, 2, 6])],
                         [_vi("sel", TP.INT64, ["K", 3]), _vi("det", TP.FLOAT, ["K"]),
                          _vi("best", TP.INT64, [1, 6]), _vi("worst", TP.INT64, [1, 6])],
                         consts)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, str(path))
    return path


@pytest.fixture
def det_path(tmp_path):
    return detector_model(tmp_path / "det.onnx")


def test_the_parser_and_finished_types_of_a_detectors_tail():
    assert [parser_type(t) for t in ("NonMaxSuppression", "ArgMax", "GatherND")] == [
        "NonMaxSuppressionV6", "ArgMaxV2", "GatherNd"]
    assert [ascend_type(t) for t in ("NonMaxSuppression", "ArgMax", "GatherND")] == [
        "NonMaxSuppressionV6", "ArgMaxV2", "GatherNd"]
    assert finished_types("NonMaxSuppression") == ("NonMaxSuppressionV6", "NonMaxSuppressionV7")
    for same in ("ArgMin", "NonZero", "TopK"):  # their plugins keep the ONNX name
        assert (parser_type(same), ascend_type(same)) == (same, same)


@pytest.mark.parametrize("entry, written", [
    ("OpType::NonMaxSuppressionV6", "OpType::NonMaxSuppressionV6"),
    ("OpType::NonMaxSuppression", "OpType::NonMaxSuppressionV6"),
    ("OpType::ArgMaxV2", "OpType::ArgMaxV2"), ("OpType::ArgMax", "OpType::ArgMaxV2"),
    ("OpType::GatherNd", "OpType::GatherNd"), ("OpType::GatherND", "OpType::GatherNd"),
    ("OpType::ArgMin", "OpType::ArgMin")])
def test_the_parsers_types_are_taken_and_the_onnx_spellings_written_as_them(
        det_path, entry, written):
    mode = keep_dtype([entry])
    check_mode(mode, det_path, "test")  # before: the parser's spellings were refused
    assert mode.keep_dtype == (written,)  # before: OpType::ArgMax went to ATC as is
    assert to_ascend_entry(entry) == written


def test_the_kept_ops_are_the_ones_named():
    mode = keep_dtype(["OpType::NonMaxSuppression", "OpType::ArgMaxV2", "OpType::GatherND"])
    ops = (("nms", "NonMaxSuppression"), ("best_cls", "ArgMax"), ("det_scores", "GatherND"),
           ("worst_cls", "ArgMin"))
    assert [mode.keeps_fp32(n, t) for n, t in ops] == [True, True, True, False]


def test_a_finished_name_is_refused_with_the_parsers_pasteable(det_path):
    with pytest.raises(ConfigError) as info:
        check_mode(keep_dtype(["OpType::NonMaxSuppressionV7"]), det_path, "test")
    text = str(info.value)
    assert "a finished graph's name for ONNX NonMaxSuppression" in text
    closest = re.search(r"closest: '([^']+)'", text).group(1)
    assert closest == "OpType::NonMaxSuppressionV6"
    check_mode(keep_dtype([closest]), det_path, "test")


@pytest.mark.parametrize("entry, expected", [("OpType::Gathernd", "OpType::GatherNd"),
                                             ("OpType::argmaxv2", "OpType::ArgMaxV2")])
def test_the_closest_type_ignores_case(det_path, entry, expected):
    with pytest.raises(ConfigError) as info:
        check_mode(keep_dtype([entry]), det_path, "test")
    assert re.search(r"closest: '([^']+)'", str(info.value)).group(1) == expected


def test_an_lstm_spelt_lstm_is_offered_the_parsers_type(tmp_path):
    """H37: ``OpType::Lstm`` got no closest (difflib weighs 'Lstm' against 'LSTM' by case)."""
    from test_rnn_optypes import rnn_model

    path = tmp_path / "lstm.onnx"
    onnx.save(rnn_model("LSTM"), path)
    with pytest.raises(ConfigError) as info:
        check_mode(keep_dtype(["OpType::Lstm"]), path, "test")
    closest = re.search(r"closest: '([^']+)'", str(info.value)).group(1)
    assert closest == "OpType::CommonLSTM"
    check_mode(keep_dtype([closest]), path, "test")


def _emulator(tmp_path):
    from pytest_ascend_accuracy.backends.emulator import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache

    return EmulatorBackend(Cache(tmp_path / "cache"))


def test_the_emulator_dumps_the_tail_by_its_ascend_types(tmp_path, det_path):
    pytest.importorskip("onnxruntime")
    backend = _emulator(tmp_path)
    converted = backend.convert(det_path, keep_dtype(["OpType::ArgMax"]))
    dump = backend.run(converted, INPUTS, dump=True, dump_dir=tmp_path / "dump")
    types = {op.name: op.op_type for op in dump.ops}
    assert {k: types[k] for k in ("nms", "det_scores", "best_cls", "worst_cls")} == {
        "nms": "NonMaxSuppressionV6", "det_scores": "GatherNd", "best_cls": "ArgMaxV2",
        "worst_cls": "ArgMin"}


@pytest.mark.parametrize("which, op, said", [
    ("argmax_sli", "best_cls (ArgMax)", "Only support select_last_index=0, but 1 is obtained now"),
    ("argmin_sli", "worst_cls (ArgMin)", "select_last_index should be 0, but now it's 1")])
def test_the_emulator_refuses_select_last_index_as_atc_does(tmp_path, which, op, said):
    path = detector_model(tmp_path / "sli.onnx", **{which: 1})
    with pytest.raises(ConversionError) as info:
        _emulator(tmp_path).convert(path)
    name, op_type = op.split(" ")
    op_type = op_type.strip("()")
    assert str(info.value) == (
        f"model 'sli' has 1 operator with select_last_index=1: {name!r} ({op_type}). CANN's ONNX "
        f"parser refuses it (\"{said}\"; ATC stops with E11010 for Op [{name}], optype "
        f"[ai.onnx::13::{op_type}]), so the model cannot be converted; export it with "
        f"select_last_index=0 (the first of equal values is taken), or, where the last one "
        f"matters, reverse the axis before it (Slice with starts=[-1], ends=[-2**62], "
        f"axes=[axis], steps=[-1]: ends=[0] would drop element 0) and take the axis length "
        f"minus 1 minus the index")


def test_an_argmax_inside_an_if_branch_is_refused_too(tmp_path):
    from pytest_ascend_accuracy.graph.parser_refusals import parser_refusal

    then = h.make_graph([h.make_node("ArgMax", ["x"], ["t"], name="then/am", axis=1,
                                     select_last_index=1)], "then", [],
                        [_vi("t", TP.INT64, [1, 1])])
    other = h.make_graph([h.make_node("ArgMin", ["x"], ["e"], name="else/am", axis=1)], "else",
                         [], [_vi("e", TP.INT64, [1, 1])])
    graph = h.make_graph([h.make_node("If", ["c"], ["y"], name="branch", then_branch=then,
                                      else_branch=other)], "ifam",
                         [_vi("x", TP.FLOAT, [1, 4]), _vi("c", TP.BOOL, [])],
                         [_vi("y", TP.INT64, [1, 1])])
    text = parser_refusal("ifam", h.make_model(graph, opset_imports=[h.make_opsetid("", 13)]))
    assert text.startswith("model 'ifam' has 1 operator with select_last_index=1: 'then/am' "
                           "(ArgMax in the then_branch of 'branch').")


def test_the_advised_rewrites_convert_and_the_flip_takes_the_last_index(tmp_path):
    """Both fixes the refusal prints convert; the flipped ArgMax gives what select_last_index=1
    gives, on scores with ties (onnxruntime, the reference)."""
    ort = pytest.importorskip("onnxruntime")
    backend = _emulator(tmp_path)
    first = detector_model(tmp_path / "first.onnx")
    flipped = detector_model(tmp_path / "flipped.onnx", flipped=True)
    last = detector_model(tmp_path / "last.onnx", argmax_sli=1)
    for path in (first, flipped):
        backend.convert(path)  # no ConversionError
    ties = {"boxes": BOXES, "scores": np.array([[[0.5, 0.1, 0.7, 0.2, 0.4, 0.3],
                                                 [0.5, 0.9, 0.7, 0.2, 0.4, 0.3]]], np.float32)}

    def best(path):
        sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        return sess.run(["best"], ties)[0]

    assert best(flipped).tolist() == best(last).tolist() == [[1, 1, 1, 1, 1, 1]]
    assert best(first).tolist() == [[0, 1, 0, 0, 0, 0]]  # the first of equal values


def _fake_atc(tmp_path, capsys, monkeypatch, model, *extra):
    from pytest_ascend_accuracy.testing import fake_atc

    monkeypatch.chdir(tmp_path)
    rc = fake_atc.main(["--framework=5", f"--model={model}", f"--output={tmp_path / 'out'}",
                        "--soc_version=Ascend310P3", *extra])
    return rc, capsys.readouterr().out


def test_the_fake_atc_refuses_select_last_index_with_e11010(tmp_path, capsys, monkeypatch):
    path = detector_model(tmp_path / "sli.onnx", argmax_sli=1)
    rc, out = _fake_atc(tmp_path, capsys, monkeypatch, path)
    assert rc == 255
    assert ("E11010: Failed to parse the parameters of Op [best_cls], optype "
            "[ai.onnx::13::ArgMax]. Only support select_last_index=0, but 1 is obtained now."
            in out.splitlines())


def test_the_fake_atc_matches_keep_dtype_on_the_parsers_types(tmp_path, capsys, monkeypatch):
    """The parser's types match the parsed graph's nodes (before: "matches no node" for each),
    and they are what the plugin writes for the ONNX spellings."""
    path = detector_model(tmp_path / "det.onnx")
    entries = ("OpType::NonMaxSuppressionV6", "OpType::ArgMaxV2", "OpType::GatherNd")
    assert keep_dtype(["OpType::NonMaxSuppression", "OpType::ArgMax",
                       "OpType::GatherND"]).keep_dtype == entries
    (tmp_path / "keep.cfg").write_text("\n".join(entries) + "\n")
    rc, out = _fake_atc(tmp_path, capsys, monkeypatch, path, "--keep_dtype=keep.cfg")
    assert rc == 0 and "WARNING" not in out, out
