"""``ascend-accuracy compare --om-json F`` where F does not list every op of the dump (another
model's json, or one converted with other options): the ops it lacks were paired by their dump
headers and counted with nothing said (a sweep of names a user gives); the coverage line now
names them, in the terminal and in the HTML report."""
import json

import pytest

from pytest_ascend_accuracy.cli import app as cli

pytest.importorskip("onnxruntime")


@pytest.fixture
def emulated(tmp_path, emulated_run):
    """(device dump root, om json, stored golden) of passing_mlp."""
    from pytest_ascend_accuracy.testing import models

    return emulated_run(tmp_path, models.passing_mlp())


def _renamed(om_json, tmp_path):
    """The om json with its second op renamed (``fc2/MatMulrelu2`` -> ``...relu9``)."""
    doc = json.loads(open(om_json).read())
    ops = doc["graph"][0]["op"]
    old = ops[1]["name"]
    ops[1]["name"] = old[:-1] + "9"
    path = tmp_path / "other.json"
    path.write_text(json.dumps(doc))
    return str(path), old


def test_ops_the_om_json_lacks_are_named(emulated, tmp_path, capsys):
    dump, om_json, golden = emulated
    assert cli.main(["compare", dump, golden, "--om-json", om_json]) == 0
    assert "not in the om json" not in capsys.readouterr().out
    other, old = _renamed(om_json, tmp_path)
    assert cli.main(["compare", dump, golden, "--om-json", other]) == 0  # the values still agree
    out = capsys.readouterr().out
    assert (f"; 1 dump op not in the om json ({old}): paired by its dump header instead (an om "
            f"json of another model, or of other options, lists other ops)") in out


def test_the_html_report_names_them_too(emulated, tmp_path, capsys):
    dump, om_json, golden = emulated
    other, old = _renamed(om_json, tmp_path)
    html = tmp_path / "report.html"
    assert cli.main(["compare", dump, golden, "--om-json", other, "--html", str(html)]) == 0
    assert f"1 dump op not in the om json ({old})" in html.read_text()
