"""Names a user gives that were dropped silently or refused with the wrong words (a sweep, playing
a user in a scratch project): an input name in ``golden_dump(..., input_shape=...)`` (dropped),
in ``accuracy_inputs(inputs=...)`` (recorded as given), in ``ascend_model``'s ``input_shape`` of a
model with dynamic dimensions (refused only at its first run) and in a YAML suite's
``input_shape:`` / ``inputs.shapes:`` (refused when the item ran, naming neither file nor key); a
misspelled metric of ``assert_accuracy``/``judge`` ('needs an explicit threshold'); the
``ASCEND_ACCURACY_NUMPY_KERNEL``/``_LAYOUT`` switches set to 'yes' (read as 0: the compiled pass
ran) and ``ASCEND_ACCURACY_ORT_THREADS`` below 0 (read as 0). Each is refused now, naming what was
given, where, and the closest real name."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.testing import models as tiny_models

X = {"x": np.ones((1, 16), np.float32)}


def two_dynamic_inputs():
    """``s = x + z; y = s @ w``, x and z ``[N, 8]``."""
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, ["N", 8]) for n in ("x", "z")]
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])
    w = numpy_helper.from_array(np.random.default_rng(0).random((8, 4), dtype=np.float32), "w")
    nodes = [helper.make_node("Add", ["x", "z"], ["s"], name="add"),
             helper.make_node("MatMul", ["s", "w"], ["y"], name="mm")]
    model = helper.make_model(helper.make_graph(nodes, "dyn2", inputs, [out], [w]),
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def test_golden_dump_refuses_an_input_shape_name_the_model_lacks(tmp_path):
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump

    with pytest.raises(ConfigError) as info:  # the arrays' shapes were taken, 'xx' dropped
        golden_dump(tiny_models.passing_mlp(), X, cache=Cache(tmp_path),
                    input_shape={"xx": [1, 16]})
    assert str(info.value) == "input_shape: no model input named 'xx'; closest: 'x'; inputs: x"


def test_accuracy_inputs_refuses_array_and_shape_names_the_model_lacks():
    from pytest_ascend_accuracy.baseline import inputs_for_baseline

    model = tiny_models.passing_mlp()
    with pytest.raises(ConfigError) as info:
        inputs_for_baseline(model, None, inputs={"xx": X["x"]})
    assert str(info.value) == ("accuracy_inputs(inputs=...) of 'passing_mlp': no model input "
                               "named 'xx'; closest: 'x'; inputs: x")
    with pytest.raises(ConfigError, match="input_shape: no model input named 'xx'; closest: 'x'"):
        inputs_for_baseline(model, None, inputs=X, input_shape={"xx": [1, 16]})
    # raw images of another shape (an AIPP model's) are not judged here: names only
    frames = {"x": np.zeros((1, 20, 24, 3), np.uint8)}
    given = inputs_for_baseline(model, None, inputs=frames)
    assert given.arrays["x"].shape == (1, 20, 24, 3)


@pytest.mark.parametrize("suite, key", [
    ("models: [{model: m.onnx, input_shape: {zz: [2, 8]}}]",
     "models[0].input_shape.zz (model m.onnx)"),
    ("models: [{model: m.onnx, inputs: {seed: 0, shapes: {zz: [2, 8]}}}]",
     "models[0].inputs.shapes.zz (model m.onnx)"),
    ("defaults: {input_shape: {zz: [2, 8]}}\nmodels: [{model: m.onnx}]",
     "defaults.input_shape.zz (model m.onnx)"),
])
def test_a_yaml_input_shape_name_is_refused_at_collection_with_its_key(tmp_path, suite, key):
    from pytest_ascend_accuracy.plugin.yaml_suite import load_suite

    onnx.save(two_dynamic_inputs(), str(tmp_path / "m.onnx"))
    path = tmp_path / "accuracy_s.yaml"
    path.write_text(suite + "\n")
    with pytest.raises(ConfigError) as info:
        load_suite(path)
    assert str(info.value).endswith(
        f"accuracy_s.yaml: {key}: no model input named 'zz'; closest: 'z'; inputs: x, z")


def test_a_dynamic_models_input_shape_name_is_refused_at_the_call(pytester):
    onnx.save(two_dynamic_inputs(), str(pytester.path / "dyn2.onnx"))
    pytester.makepyfile(test_dyn='''
        def test_convert(ascend_model):
            ascend_model("dyn2.onnx", input_shape={"x": [2, 8], "zz": [2, 8]})
    ''')
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(failed=1)  # it passed: 'zz' waited for a run(inputs) to be refused
    run.stdout.fnmatch_lines(["*ascend-accuracy configuration error: input_shape: no model input "
                              "named 'zz'; closest: 'z'; inputs: x, z*"])


def test_a_misspelled_metric_is_said_unknown_not_wanting_a_threshold(dump_pair):
    from pytest_ascend_accuracy import assert_accuracy, compare_dumps

    actual, golden = dump_pair(1.0)
    for call, where in ((lambda: assert_accuracy(actual, golden, metric="cosin"),
                         "assert_accuracy"),
                        (lambda: assert_accuracy(actual, golden, metric="cosin", threshold=0.9),
                         "assert_accuracy"),
                        (lambda: compare_dumps(actual, golden).judge(metric="rel_12"), "judge")):
        with pytest.raises(ConfigError) as info:
            call()
        assert str(info.value).startswith(f"{where}: unknown metric '")
        assert any(f"; closest: {m!r};" in str(info.value) for m in ("cosine", "rel_l2"))


@pytest.mark.parametrize("env", ["ASCEND_ACCURACY_NUMPY_KERNEL", "ASCEND_ACCURACY_NUMPY_LAYOUT"])
def test_an_extension_switch_takes_1_or_0_only(monkeypatch, env):
    from pytest_ascend_accuracy.compare.pair_sums import NUMPY_KERNEL_ENV
    from pytest_ascend_accuracy.core.compiled_modules import OFF_SWITCHES, check_switches
    from pytest_ascend_accuracy.dump.channel_blocks import NUMPY_LAYOUT_ENV

    assert set(OFF_SWITCHES) == {NUMPY_KERNEL_ENV, NUMPY_LAYOUT_ENV}
    for fine in ("1", "0", ""):
        monkeypatch.setenv(env, fine)
        check_switches()
    monkeypatch.setenv(env, "yes")  # the compiled pass ran: only "1" turned it off
    with pytest.raises(ConfigError) as info:
        check_switches()
    assert str(info.value) == (f"{env}: expected 1 (the numpy path instead of the compiled "
                               f"extension) or 0 (the extension where it is built), got 'yes'")


@pytest.mark.parametrize("env, value, said", [
    ("ASCEND_ACCURACY_NUMPY_LAYOUT", "on", "ASCEND_ACCURACY_NUMPY_LAYOUT: expected 1 "),
    ("ASCEND_ACCURACY_ORT_THREADS", "-3", "ASCEND_ACCURACY_ORT_THREADS: expected a number of "
                                          "threads >= 0 (0: onnxruntime's own default), got '-3'"),
])
def test_a_bad_environment_value_is_a_usage_error_of_the_session(pytester, monkeypatch, env,
                                                                 value, said):
    # a small model's run never looks the layout extension up: it passed with 'on'
    onnx.save(tiny_models.passing_mlp(), str(pytester.path / "mlp.onnx"))
    pytester.makepyfile(test_one='''
        from pytest_ascend_accuracy import accuracy

        @accuracy()
        def test_one(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
            x = accuracy_inputs("mlp.onnx", seed=0)
            check_accuracy(ascend_model("mlp.onnx").run(x), golden_dump("mlp.onnx", x))
    ''')
    monkeypatch.setenv(env, value)
    run = pytester.runpytest("-p", "no:cacheprovider")
    assert run.ret == pytest.ExitCode.USAGE_ERROR
    run.stderr.fnmatch_lines([f"ERROR: pytest-ascend-accuracy: {said}*"])


def test_a_fault_kind_or_effect_names_the_closest():
    from pytest_ascend_accuracy.backends.emulator.faults import Fault

    with pytest.raises(ConfigError, match=r"unknown fault effect 'nann'; closest: 'nan'; known:"):
        Fault.on_op("relu1", effect="nann")
    with pytest.raises(ConfigError, match=r"unknown fault kind 'rul'; closest: 'rule'; known:"):
        Fault("rul", "X")
