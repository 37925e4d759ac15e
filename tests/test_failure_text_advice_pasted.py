"""``failure_text.default_hint``'s advice for dumps that do not pair, pasted as printed (audit
H325), for each caller that gets it: ``assert_accuracy`` (the Python API) and ``ascend-accuracy
compare`` (``cli=True``). The dumps: a device dump converted to .npy by msaccucmp (its files
name the fused op only, ``fc_MatMulrelu``) against the golden of the ONNX ops it fused
(``test_problem_advice_pasted.dumped``).

* no tensor compared: assert_accuracy printed ``pass the om json (om_json= / --om-json)``, and
  assert_accuracy has no om_json= (pasted: ``TypeError: unexpected keyword argument
  'om_json'``); it now says to read the dump with ``load_dump(DIR, om_json="model.json")`` and
  pass that to assert_accuracy, or to map names with ``assert_accuracy(..., mapping=...)``:
  each passes. The command line's ``--om-json F`` and ``--mapping F``: each passes.
* the fused op not compared beside an op that is (``sig``): the same om json advice, in the
  Python API's spelling and the command line's (``--om-json F``); each passes, and so does
  accepting the op unchecked with ``ignore=``."""
import json
import re

import pytest
from test_problem_advice_pasted import dumped

import pytest_ascend_accuracy as api
from pytest_ascend_accuracy.cli import main
from pytest_ascend_accuracy.report.assertion import AccuracyFailure

pytest.importorskip("onnxruntime")

#: the dump's op and the golden op whose output it is
PAIRS = {"fc_MatMulrelu": "relu"}
LOAD_DUMP = re.compile(r"read the device dump with (load_dump\(DIR, .*?\)) \(the om json of atc "
                       r"--mode=1; from pytest_ascend_accuracy import (load_dump)\) so fused ops "
                       r"find their original names, and pass that to (\w+)")


@pytest.fixture
def unpaired(tmp_path, monkeypatch):
    """No tensor compares: (dump folder, golden folder), cwd holding the om json as
    ``model.json``."""
    monkeypatch.chdir(dumped(tmp_path))
    return "npy", "golden"


@pytest.fixture
def half_paired(tmp_path, monkeypatch):
    """``sig`` compares, the fused op is not compared: as ``unpaired``."""
    monkeypatch.chdir(dumped(tmp_path, tail=True))
    return "npy", "golden"


def _python_advice(actual, golden) -> str:
    """The next step assert_accuracy's failure prints."""
    with pytest.raises(AccuracyFailure) as info:
        api.assert_accuracy(api.load_dump(actual), golden, 0.99)
    return next(line for line in str(info.value).splitlines() if line.startswith("next step:"))


def _load_dump_pasted(advice: str, actual, golden) -> None:
    said = LOAD_DUMP.search(advice)
    assert said, advice
    call, imported, check = said.groups()
    namespace = {}
    exec(f"from pytest_ascend_accuracy import {imported}", namespace)  # as printed
    dump = eval(call.replace("DIR", repr(actual)), namespace)
    assert check == "assert_accuracy"
    getattr(api, check)(dump, golden, 0.99)  # passes: raises nothing


def test_assert_accuracys_no_pairs_advice_pasted_passes(unpaired):
    actual, golden = unpaired
    advice = _python_advice(actual, golden)
    assert "no tensor was compared" in api.compare_dumps(actual, golden).judge(0.99).problem
    _load_dump_pasted(advice, actual, golden)
    keyword = re.search(r"or map op names with assert_accuracy\(\.\.\., (\w+)=\{DUMP_OP: "
                        r"GOLDEN_OP\}\)$", advice)
    assert keyword, advice
    api.assert_accuracy(api.load_dump(actual), golden, 0.99, **{keyword.group(1): PAIRS})


def test_assert_accuracys_not_compared_advice_pasted_passes(half_paired):
    actual, golden = half_paired
    advice = _python_advice(actual, golden)
    assert advice.startswith("next step: the golden holds no tensor for fc_MatMulrelu: "), advice
    _load_dump_pasted(advice, actual, golden)
    ignore = re.search(r"or accept them unchecked with (\w+)= / --ignore NAME$", advice)
    assert ignore, advice
    api.assert_accuracy(api.load_dump(actual), golden, 0.99,
                        **{ignore.group(1): ["fc_MatMulrelu"]})


def _cli_advice(actual, golden, capsys) -> str:
    assert main(["compare", actual, golden]) == 1
    out = capsys.readouterr().out
    return next(line for line in out.splitlines() if line.startswith("next step:"))


def _cli_passes(argv, capsys) -> None:
    assert main(argv) == 0
    assert "accuracy PASSED" in capsys.readouterr().out


def test_the_commands_no_pairs_advice_pasted_passes(unpaired, capsys):
    actual, golden = unpaired
    advice = _cli_advice(actual, golden, capsys)
    om_json = re.search(r"pass the om json \((--\S+) F, from atc --mode=1\)", advice)
    mapping = re.search(r"or map op names with (--\S+) F$", advice)
    assert om_json and mapping, advice
    _cli_passes(["compare", actual, golden, om_json.group(1), "model.json"], capsys)
    with open("pairs.json", "w") as f:
        json.dump(PAIRS, f)
    _cli_passes(["compare", actual, golden, mapping.group(1), "pairs.json"], capsys)


def test_the_commands_not_compared_advice_pasted_passes(half_paired, capsys):
    actual, golden = half_paired
    advice = _cli_advice(actual, golden, capsys)
    om_json = re.search(r"where the dump names ATC's fused ops, pass the om json \((--\S+) F, "
                        r"from atc --mode=1\)", advice)
    assert om_json, advice
    _cli_passes(["compare", actual, golden, om_json.group(1), "model.json"], capsys)
