"""``ascend-accuracy compare`` of a device dump against a golden whose file names sanitise the
model's op names (msit's ``p2o_BatchNormalization_1`` for node ``p2o.BatchNormalization.1``)
names ops in its keep_dtype hint as the model does, as the plugin's hint does: the command it
printed, pasted, was refused ("keep_dtype entry 'p2o_BatchNormalization_1' is not an op of
model ...", a YAML trial with the PP-OCRv4 detector). Without the dump's om json the mode the
dump was converted with is not known, and the hint says so (a fusion-off dump's command left
its mode out without a word)."""
import re
import shlex

import pytest

from pytest_ascend_accuracy.cli import main
from pytest_ascend_accuracy.core.modes import FUSION_OFF

pytest.importorskip("onnxruntime")

DOTTED = "p2o.BatchNormalization.1"
UNKNOWN = "(the mode the dump was converted with is not known without its om json, --om-json F"


@pytest.fixture
def pair(tmp_path):
    """The overflow model with its BatchNormalization named as paddle2onnx names it, dumped
    fusion-off on the emulator, its golden stored with op inputs (the 1e9 variance)."""
    from pytest_ascend_accuracy.testing import models
    from pytest_ascend_accuracy.testing.emulated_pair import emulated_pair

    proto = models.overflow_model()
    next(n for n in proto.graph.node if n.name == "norm").name = DOTTED
    return emulated_pair(tmp_path, proto, FUSION_OFF, name="det", store_inputs=True)


def _pasted(out, tmp_path):
    command = re.search(r"(ascend-accuracy diagnose \S+ --mode '[^']*')", out).group(1)
    return shlex.split(command)[1:] + ["--cache-dir", str(tmp_path / "cache"), "--budget", "2"]


def test_the_keep_dtype_hint_names_the_models_op_and_says_the_mode_is_unknown(
        pair, tmp_path, capsys):
    assert main(["compare", pair.dump, pair.golden]) == 1
    out = capsys.readouterr().out
    # the model's spelling (the dump's headers), not the file's p2o_BatchNormalization_1
    assert f"golden         {DOTTED} output:0" in out and "p2o_Batch" not in out
    hint = out[out.index("next step: "):]
    assert f"({DOTTED} input:4 reaches |1e+09|)" in hint
    assert f"--mode '{{keep_dtype: [\"{DOTTED}\"]}}'" in hint and "p2o_Batch" not in hint
    assert UNKNOWN in hint, hint
    argv = _pasted(hint, tmp_path)
    assert main(argv) == 0, capsys.readouterr()  # pasted: the model's op, kept, passes
    # the note's example, the dump's own mode added, pasted: passes too
    argv[argv.index("--mode") + 1] = f'{{base: fusion_off, keep_dtype: ["{DOTTED}"]}}'
    assert main(argv) == 0
    assert "PASSES" in capsys.readouterr().out


def test_with_the_om_json_the_mode_is_carried_and_no_note(pair, tmp_path, capsys):
    assert main(pair.compare_argv()) == 1
    hint = capsys.readouterr().out.split("next step: ")[1]
    assert f"--mode '{{base: fusion_off, keep_dtype: [\"{DOTTED}\"]}}'" in hint
    assert UNKNOWN not in hint
