"""AtcQuantWarning once per model in a warnings scope (an audit: ``ascend-accuracy diagnose``
of ddddocr's quantised ``common_old.onnx`` printed the ~1000-character warning 64 times, once
per conversion, cache hits included: the compare's worker start enters ``catch_warnings``,
which clears Python's once-per-location registry). Each pytest test, and each ``pytest.warns``
block, is a scope of its own, so every test converting such a model still shows it."""
import warnings

import pytest

from pytest_ascend_accuracy.backends.emulator.atc_quant import AtcQuantWarning
from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
from pytest_ascend_accuracy.core.cache import Cache

from .test_atc_quant import _qdq_model


def _quant_warnings(caught):
    return [w for w in caught if issubclass(w.category, AtcQuantWarning)]


def test_one_warning_per_model_though_a_catch_warnings_block_runs_between(tmp_path):
    path = _qdq_model(tmp_path / "qdq.onnx")
    backend = EmulatorBackend(Cache(tmp_path / "cache"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        for _ in range(3):  # the first converts, the others are cache hits
            backend.convert(path)
            with warnings.catch_warnings():  # as compare/parallel.py's worker start
                warnings.simplefilter("ignore", DeprecationWarning)
    assert len(_quant_warnings(caught)) == 1
    assert "'x_quant' (QuantizeLinear)" in str(_quant_warnings(caught)[0].message)


def test_another_model_warns_in_the_same_scope(tmp_path):
    first = _qdq_model(tmp_path / "qdq.onnx")
    (tmp_path / "b").mkdir()
    second = _qdq_model(tmp_path / "b" / "other.onnx")
    backend = EmulatorBackend(Cache(tmp_path / "cache"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        backend.convert(first)
        backend.convert(second)
        backend.convert(first)
    assert [str(w.message).split(": ")[0] for w in _quant_warnings(caught)] == [
        "ONNX quantisation ops no CANN ONNX parser converts, in model 'qdq'",
        "ONNX quantisation ops no CANN ONNX parser converts, in model 'other'"]


def test_each_new_scope_warns_again(tmp_path):
    path = _qdq_model(tmp_path / "qdq.onnx")
    backend = EmulatorBackend(Cache(tmp_path / "cache"))
    for _ in range(2):
        with pytest.warns(AtcQuantWarning):
            backend.convert(path)


def test_cli_diagnose_prints_it_once(tmp_path, monkeypatch, capsys):
    """The audit's case: the diagnosis's compares fork workers (forced here for a tiny model),
    each worker start a catch_warnings block."""
    import numpy as np
    import onnx
    from onnx import TensorProto as TP
    from onnx import helper as h
    from onnx import numpy_helper as nh

    from pytest_ascend_accuracy.cli.app import main
    from pytest_ascend_accuracy.compare import parallel
    from pytest_ascend_accuracy.core import cpu_share

    inits = [nh.from_array(np.array(0.02, np.float32), "s"),
             nh.from_array(np.array(0, np.int8), "zp"),
             nh.from_array(np.eye(4, dtype=np.float32) * 1e5, "w")]
    nodes = [h.make_node("QuantizeLinear", ["x", "s", "zp"], ["q"], name="x_quant"),
             h.make_node("DequantizeLinear", ["q", "s", "zp"], ["dq"], name="x_dequant"),
             h.make_node("MatMul", ["dq", "w"], ["m"], name="mm"),
             h.make_node("MatMul", ["m", "w"], ["y"], name="mm2")]
    graph = h.make_graph(nodes, "qdq", [h.make_tensor_value_info("x", TP.FLOAT, [1, 4])],
                         [h.make_tensor_value_info("y", TP.FLOAT, [1, 4])], inits)
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 13)]),
              str(tmp_path / "qdq.onnx"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(parallel, "MIN_BYTES", 0)
    monkeypatch.setattr(cpu_share, "core_share", lambda: 2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        main(["diagnose", "qdq.onnx", "--threshold", "0.99", "--out", "diag"])
    err = capsys.readouterr().err
    assert err.count("converting and running mode") >= 3, err
    assert len(_quant_warnings(caught)) == 1


def test_pytest_s_summary_shows_it_once_for_each_test_converting_the_model(pytester):
    """The warnings summary keeps naming every test of such a model (each test is a scope),
    at the test's line, the text whole; a test converting it again after a catch_warnings
    block (as a compare's worker start) counts one."""
    _qdq_model(pytester.path / "qdq.onnx")
    pytester.makepyfile(test_q='''
        import warnings

        def _convert_twice(ascend_model):
            ascend_model("qdq.onnx")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
            ascend_model("qdq.onnx", mode="high_precision")

        def test_one(ascend_model):
            _convert_twice(ascend_model)

        def test_two(ascend_model):
            _convert_twice(ascend_model)
        ''')
    result = pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, warnings=2)
    result.stdout.fnmatch_lines(["test_q.py::test_one", "test_q.py::test_two",
                                 "*test_q.py:4: AtcQuantWarning: ONNX quantisation ops no CANN "
                                 "ONNX parser converts, in model 'qdq': 'x_quant' "
                                 "(QuantizeLinear); 'x_dequant' (DequantizeLinear). CANN's AMCT*"
                                 "neither a pass nor a failure here says what the deployed "
                                 "model does*"])
