"""``ascend-accuracy compare --inputs``: op inputs paired with the golden outputs feeding them
through the om json (a golden of op outputs only, the plugin's stored default, serves), and a
note when nothing could be compared (it compared nothing without a word); ``--workers`` takes
1 or more."""
import csv

import pytest

from pytest_ascend_accuracy.cli import app as cli

pytest.importorskip("onnxruntime")


@pytest.fixture
def emulated(tmp_path, emulated_run):
    """(device dump root, om json, stored golden of op outputs only) of conv_bn_relu."""
    from pytest_ascend_accuracy.testing import models

    return emulated_run(tmp_path, models.conv_bn_relu())


def _input_rows(path):
    with open(path, newline="") as f:
        return [r["TensorIndex"] for r in csv.DictReader(f) if ":input:" in r["TensorIndex"]]


def test_inputs_are_compared_through_the_om_json(emulated, tmp_path, capsys):
    dump, om_json, golden = emulated
    code = cli.main(["compare", dump, golden, "--om-json", om_json, "--inputs",
                     "--csv", str(tmp_path / "r.csv")])
    assert code == 0
    assert "--inputs" not in capsys.readouterr().out
    rows = _input_rows(tmp_path / "r.csv")
    assert "conv2relu2:input:0" in rows and len(rows) >= 3


def test_inputs_without_a_golden_for_them_say_how_to_get_one(emulated, capsys):
    dump, _, golden = emulated
    assert cli.main(["compare", dump, golden, "--inputs"]) == 0  # the outputs' verdict stands
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == ("--inputs: no op input was compared: no golden tensor for them: pass the "
                       "actual model's om json (--om-json F) to pair each input with the golden "
                       "output feeding it, as msaccucmp does, or a golden that holds op inputs "
                       "(input_*.npy)")


def test_inputs_of_a_dump_without_any_say_so(dump_pair, capsys):
    actual, golden = dump_pair(1.0)
    assert cli.main(["compare", str(actual), str(golden), "--inputs"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith(
        "--inputs: no op input was compared: the actual dump holds no op inputs")


@pytest.mark.parametrize("value", ["0", "-3"])
def test_workers_below_one_are_refused(dump_pair, capsys, value):
    actual, golden = dump_pair(1.0)
    assert cli.main(["compare", str(actual), str(golden), "--workers", value]) == 2
    assert f"argument --workers: expected 1 or more, got {int(value)}" in capsys.readouterr().err
