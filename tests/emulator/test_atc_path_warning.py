"""A model whose resolved path ATC refuses (GE CheckInputPathValid, E10001) passed on the
emulator without a word, where the fake ATC stops and the ascend backend refuses it up front
(H337: ext/with spaces/my model/resnet18_bn.onnx). The path is where the model lies on this
machine, not a property of the model, so each emulator conversion warns (AtcPathWarning, a
cache hit too) at the test's line; the filters the warning names silence it, pasted."""
import os
import re
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h

from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
from pytest_ascend_accuracy.core.atc_paths import ATC_PATH_RULE, AtcPathWarning
from pytest_ascend_accuracy.core.cache import Cache


def _model(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    graph = h.make_graph([h.make_node("Relu", ["x"], ["y"], name="relu")], "g",
                         [h.make_tensor_value_info("x", TP.FLOAT, [1, 4])],
                         [h.make_tensor_value_info("y", TP.FLOAT, [1, 4])])
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 13)]), str(path))
    return path


def _filter(text, flag):
    """The filter the warning tells to use for ``flag`` ("-W", "ini" or "PYTHONWARNINGS")."""
    pattern = {"-W": r"-W '([^']+)'", "ini": r"filterwarnings = ([^;]+);",
               "PYTHONWARNINGS": r"PYTHONWARNINGS='([^']+)'"}[flag]
    return re.search(pattern, text).group(1)


def test_each_conversion_warns_at_the_test_s_line_a_cache_hit_too(tmp_path):
    path = _model(tmp_path / "with spaces" / "my model" / "m.onnx")
    backend = EmulatorBackend(Cache(tmp_path / "cache"))
    for _ in range(2):
        with pytest.warns(AtcPathWarning) as caught:
            backend.convert(path)
        assert caught[0].filename == __file__  # the test's line, not the backend's
        text = str(caught[0].message)
        assert text.startswith("model path ATC refuses, in model 'm': its resolved path ")
        assert f"{os.path.realpath(path)!r} holds ' '" in text and ATC_PATH_RULE in text
        assert "move or copy the model" in text


def test_a_path_atc_takes_and_a_model_given_as_a_proto_do_not_warn(tmp_path):
    import warnings

    path = _model(tmp_path / "ok_dir" / "m.onnx")
    backend = EmulatorBackend(Cache(tmp_path / "cache"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", AtcPathWarning)
        backend.convert(path)
        backend.convert(onnx.load(str(_model(tmp_path / "a b" / "p.onnx"))))


@pytest.mark.parametrize("flag", ["-W", "ini"])
def test_the_filter_it_names_silences_it_under_filterwarnings_error(pytester, flag):
    _model(pytester.path / "my models" / "m.onnx")
    pytester.makepyfile(test_p="""
        import numpy as np
        from pytest_ascend_accuracy import accuracy

        @accuracy(threshold=0.95)
        def test_p(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
            m = "my models/m.onnx"
            inputs = accuracy_inputs(m, inputs={"x": np.ones((1, 4), np.float32)})
            check_accuracy(ascend_model(m).run(inputs), golden_dump(m, inputs))
    """)
    pytester.makeini("[pytest]\nfilterwarnings =\n    error\n")
    failed = pytester.runpytest("-p", "no:cacheprovider")
    failed.assert_outcomes(failed=1)
    text = "\n".join(failed.outlines)
    assert "AtcPathWarning: model path ATC refuses" in text
    with pytest.warns(AtcPathWarning) as caught:
        EmulatorBackend(Cache(pytester.path / "c2")).convert(pytester.path / "my models/m.onnx")
    given = _filter(str(caught[0].message), flag)
    if flag == "-W":
        pytester.runpytest("-p", "no:cacheprovider", "-W", given).assert_outcomes(passed=1)
    else:
        pytester.makeini(f"[pytest]\nfilterwarnings =\n    error\n    {given}\n")
        pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_the_cli_prints_it_and_pythonwarnings_as_named_silences_it(tmp_path):
    """The CLI's conversions on the emulator show it as Python shows a warning (as the
    emulator's other ATC warnings); the PYTHONWARNINGS the text names silences it."""
    path = _model(tmp_path / "a b" / "m.onnx")
    np.save(tmp_path / "x.npy", np.ones((1, 4), np.float32))
    run = [sys.executable, "-c", "import sys; from pytest_ascend_accuracy.cli.app import main;"
           " sys.exit(main(sys.argv[1:]))", "diagnose", str(path),
           "--inputs", f"x={tmp_path / 'x.npy'}", "--cache-dir", str(tmp_path / "cache")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("PYTHONWARNINGS", None)
    shown = subprocess.run(run, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert "AtcPathWarning: model path ATC refuses, in model 'm'" in shown.stderr, shown.stderr
    given = _filter(shown.stderr, "PYTHONWARNINGS")
    quiet = subprocess.run(run, capture_output=True, text=True, cwd=tmp_path,
                           env={**env, "PYTHONWARNINGS": given})
    assert quiet.returncode == shown.returncode and "AtcPathWarning" not in quiet.stderr
