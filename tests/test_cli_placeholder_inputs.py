"""``ascend-accuracy compare`` against a golden that names no model (a folder of ``.npy`` files,
as msit writes them) prints ``ascend-accuracy diagnose MODEL.onnx ...``: the model is a
placeholder, and so are the dump's inputs, which nothing records. Pasted with MODEL.onnx
replaced, the command ran diagnose on seeded random inputs and said PASSES of a mode the dump's
own inputs fail in (review 32). The hint now says to give the arrays the dump ran on; pasted
with them, the verdict is the dump's."""
import os
import re
import shlex

import numpy as np
import pytest

from pytest_ascend_accuracy.cli import app as cli
from pytest_ascend_accuracy.report.cli_commands import CLI_MODEL, PLACEHOLDER_INPUTS

pytest.importorskip("onnxruntime")


@pytest.fixture
def loud_dump(tmp_path):
    """An emulated dump of ``passing_mlp`` on inputs 2e5 times its seeded ones (past float16's
    range inside), and its golden as bare ``.npy`` files without a record."""
    import onnx

    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump
    from pytest_ascend_accuracy.golden.stored import store_golden
    from pytest_ascend_accuracy.graph.onnx_graph import make_inputs
    from pytest_ascend_accuracy.testing import models

    model = tmp_path / "mlp.onnx"
    onnx.save(models.passing_mlp(), str(model))
    cache = Cache(tmp_path / "cache")
    backend = EmulatorBackend(cache)
    inputs = {k: v * 2e5 for k, v in make_inputs(model).items()}
    np.save(tmp_path / "x.npy", inputs["x"])
    dump = backend.run(backend.convert(model, None), inputs, dump_dir=tmp_path / "dump")
    golden = store_golden(tmp_path / "npy", golden_dump(model, inputs, cache=cache))
    os.remove(golden / "golden.json")
    return model, str(dump.root), str(golden)


def test_the_hint_asks_for_the_dumps_inputs_and_pasted_with_them_gives_its_verdict(
        loud_dump, tmp_path, capsys):
    model, dump, golden = loud_dump
    assert cli.main(["compare", dump, golden]) == 1
    step = [line for line in capsys.readouterr().out.splitlines()
            if line.startswith("next step: ")][0]
    assert step.endswith(PLACEHOLDER_INPUTS)
    command = re.search(r"(ascend-accuracy diagnose [^()]+?)(?: \([^()]*\))? passes with "
                        r"exit status 0", step)
    argv = [str(model) if a == CLI_MODEL else a for a in shlex.split(command.group(1))[1:]]
    argv += ["--cache-dir", str(tmp_path / "cache2")]
    assert cli.main(argv) == 0  # seeded: the mode passes as given, on inputs the dump never ran
    assert capsys.readouterr().out.splitlines()[0].endswith(": PASSES")
    assert cli.main(argv + ["--inputs", f"x={tmp_path / 'x.npy'}"]) == 0  # as the note says
    first = capsys.readouterr().out.splitlines()[0]
    assert first.endswith(": RESTORED"), first  # the dump's inputs fail in the mode as given


def test_a_golden_that_names_its_model_gets_no_placeholder_note(tmp_path, capsys):
    from pytest_ascend_accuracy.testing import models
    from pytest_ascend_accuracy.testing.emulated_pair import emulated_pair

    pair = emulated_pair(tmp_path, models.passing_mlp(), name="mlp")
    assert cli.main(pair.compare_argv() + ["--threshold", "0.9999999"]) == 1
    out = capsys.readouterr().out
    assert "ascend-accuracy diagnose mlp.onnx" in out or "mlp.onnx" in out
    assert PLACEHOLDER_INPUTS not in out
