"""Three refusals that said something untrue or nothing (an odd-graphs trial, a transformer
trial):

* D2: an IR 3 model lists its weights W and B as graph inputs; giving W was refused as "no
  model input named 'W'; inputs: x", untrue of the file. It says W is an initializer the model
  also lists as an input, taken as a constant (as ATC's ONNX parser takes it), not fed.
* D3: two nodes named 'dup' (onnxruntime refuses the model, real exporters write it) were
  accepted and the second renamed 'dup_1', a name in no file the user has. ATC's ONNX parser
  refuses ops that share a name (its pre-check, E19009); so does preparation now, naming the
  nodes and the renames that fix it.
* D6: keep_dtype(["OpType::Trilu"]) on a model whose only Trilu is folded at conversion passed
  without a word, where naming that Trilu was refused. It is refused alike.
"""
import re

import numpy as np
import onnx
import pytest

from pytest_ascend_accuracy import keep_dtype
from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
from pytest_ascend_accuracy.backends.emulator.folded_keeps import folded_keep_problem
from pytest_ascend_accuracy.core.cache import Cache
from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump
from pytest_ascend_accuracy.graph.input_names import check_input_names, listed_initializers
from pytest_ascend_accuracy.graph.names import atc_op_names, repeated_names
from pytest_ascend_accuracy.graph.onnx_graph import check_inputs
from pytest_ascend_accuracy.graph.parser_refusals import atc_parse_error, name_refusal
from pytest_ascend_accuracy.graph.prepare import prepare_model
from pytest_ascend_accuracy.testing import odd_graph_models
from pytest_ascend_accuracy.testing.odd_graph_models import dup_model, ir3_model

X = np.ones((2, 8), np.float32)


# -- D2 ------------------------------------------------------------------------------------
def test_an_initializer_listed_as_an_input_is_refused_as_what_it_is():
    model = ir3_model()
    assert listed_initializers(model) == ["W", "B"]
    with pytest.raises(ConfigError) as info:
        check_inputs(model, {"x": X, "W": np.eye(8, dtype=np.float32)}, "inputs of 'ir3'")
    text = str(info.value)
    assert ("inputs of 'ir3': 'W' is an initializer the model also lists as a graph input (as "
            "IR version < 4 exports list every weight): it is taken as a constant, as ATC takes "
            "it, so it is not fed; leave it out; the inputs: x") in text
    assert "no model input named" not in text
    assert set(check_inputs(model, {"x": X})) == {"x"}  # left out, as it says: taken


def test_a_name_the_model_does_not_list_is_refused_as_before():
    with pytest.raises(ConfigError, match=r"no model input named 'xx'.*; inputs: x"):
        check_input_names({"xx": 1}, ["x"], "inputs", constants=["W"])


def test_golden_dump_and_input_shape_say_it_too(tmp_path):
    with pytest.raises(ConfigError, match="'W' is an initializer the model also lists"):
        golden_dump(ir3_model(), {"x": X, "W": np.eye(8, dtype=np.float32)},
                    cache=Cache(tmp_path))
    with pytest.raises(ConfigError, match="input_shape: 'B' is an initializer"):
        prepare_model(ir3_model(), input_shape={"B": [8]})


def test_the_emulator_run_says_it_on_a_cache_miss_and_a_hit(tmp_path):
    path = tmp_path / "ir3.onnx"
    onnx.save(ir3_model(), str(path))
    for _ in range(2):
        backend = EmulatorBackend(Cache(tmp_path / "cache"))
        om = backend.convert(path)
        with pytest.raises(ConfigError, match="'W' is an initializer the model also lists"):
            backend.outputs(om, {"x": X, "W": np.eye(8, dtype=np.float32)})
        assert set(backend.outputs(om, {"x": X})) == {"y"}  # without it: runs


# -- D3 ------------------------------------------------------------------------------------
def test_atc_names_the_ops_it_makes_of_a_graph():
    """Nodes (unnamed ones counted alone), a Data op per input, a Const op per initializer
    named {name}_{k} in the order of the names (onnx_parser.cc ParseInput/ParseInitializer)."""
    names = [n for n, _, _ in atc_op_names(dup_model().graph)]
    assert names == ["MatMul_0", "dup", "dup", "Add_1", "Add_3", "x", "W_0"]


def test_two_nodes_of_one_name_are_refused_as_atc_refuses_them():
    model = dup_model()
    assert repeated_names(model.graph) == {
        "dup": [("node[1] (Relu)", 1), ("node[2] (Sigmoid)", 2)]}
    text = name_refusal("dups", model.graph)
    assert text.startswith("model 'dups' has ops that share a name: 'dup' names node[1] (Relu) "
                           "and node[2] (Sigmoid). ATC's ONNX parser refuses it (its pre-check "
                           "stops with E19009 \"Op [dup] has a name conflict in the graph.\"), "
                           "and onnxruntime refuses to load it too")
    assert text.endswith("(m.graph.node[2].name = 'dup_1')")
    assert atc_parse_error(model) == ("E19009", "Op [dup] has a name conflict in the graph.")
    with pytest.raises(ConfigError, match="E19009"):
        prepare_model(model)  # the golden's and the emulator's preparation


def _apply(text, model):
    """The renames the refusal prints, applied to ``model`` as ``m``."""
    m = model
    for line in re.search(r"\(([^()]*= '[^']*'(?:; [^()]*)*)\)$", text).group(1).split("; "):
        exec(line, {"m": m})
    return m


@pytest.mark.parametrize("make, clash", [
    (lambda: dup_model(), "'dup' names node[1] (Relu) and node[2] (Sigmoid)"),
    # a named node and an unnamed one ATC names alike: the named one is renamed (naming the
    # unnamed one would shift the names ATC gives the unnamed nodes after it)
    (lambda: dup_model(first="Add_1", second="sig"),
     "'Add_1' names node[1] (Relu) and node[3] (Add)"),
    # a node named as a graph input (ATC's Data op) and as an initializer's Const op
    (lambda: dup_model(first="x", second="W_0"),
     "'x' names node[1] (Relu) and graph input 'x' (its Data op); 'W_0' names node[2] "
     "(Sigmoid) and initializer 'W' (its Const op)"),
])
def test_the_printed_renames_leave_no_name_shared_and_the_model_runs(make, clash, tmp_path):
    model = make()
    text = name_refusal("dups", model.graph)
    assert clash in text
    renamed = _apply(text, model)
    assert repeated_names(renamed.graph) == {}
    assert atc_parse_error(renamed) is None
    dump = golden_dump(renamed, {"x": X}, cache=Cache(tmp_path))
    assert len(dump.names) == 5


def test_a_data_or_const_clash_does_not_claim_onnxruntime_refuses_it():
    text = name_refusal("dups", dup_model(first="x", second="sig").graph)
    assert "E19009 \"Op [x] has a name conflict" in text and "onnxruntime" not in text


def test_unique_names_are_not_refused():
    assert name_refusal("ok", dup_model(second="sig").graph) == ""
    assert atc_parse_error(dup_model(second="sig")) is None


def test_the_fake_atc_stops_with_e19009(tmp_path, capsys, monkeypatch):
    from pytest_ascend_accuracy.testing import fake_atc

    path = tmp_path / "dups.onnx"
    onnx.save(dup_model(), str(path))
    monkeypatch.chdir(tmp_path)
    rc = fake_atc.main(["--framework=5", f"--model={path}", f"--output={tmp_path / 'out'}",
                        "--soc_version=Ascend310P3"])
    assert rc == 255
    assert "E19009: Op [dup] has a name conflict in the graph." in capsys.readouterr().out


# -- D6 ------------------------------------------------------------------------------------
def trilu_model(path, running_trilu=False):
    onnx.save(odd_graph_models.trilu_model(running_trilu), str(path))
    return path


def test_an_optype_entry_whose_every_op_is_folded_is_refused_on_every_conversion(tmp_path):
    path = trilu_model(tmp_path / "trilu_folded.onnx")
    backend = EmulatorBackend(Cache(tmp_path / "cache"))
    for _ in range(2):  # a cache miss, then a hit
        with pytest.raises(ConfigError) as info:
            backend.convert(path, keep_dtype(["OpType::Trilu"]))
        assert ("keep_dtype entry 'OpType::Trilu' of model 'trilu_folded' names only ops folded "
                "at conversion (its Trilu ops: 'causal_mask'; ATC computes them") in str(info.value)
        assert str(info.value).endswith("remove it")
    backend.convert(path, keep_dtype(["OpType::Mul"]))  # a type that runs: taken


def test_an_optype_entry_with_one_op_that_runs_is_taken(tmp_path):
    path = trilu_model(tmp_path / "two.onnx", running_trilu=True)
    backend = EmulatorBackend(Cache(tmp_path / "cache"))
    backend.convert(path, keep_dtype(["OpType::Trilu"]))
    assert folded_keep_problem(["OpType::Trilu"], ["causal_mask"], ["tri_of_x"], "two",
                               path) == ""


def test_names_and_types_refused_together_and_no_model_read_without_a_type_entry(tmp_path):
    path = trilu_model(tmp_path / "m.onnx")
    text = folded_keep_problem(["causal_mask", "OpType::Trilu", "apply_mask"], ["causal_mask"],
                               ["apply_mask", "softmax"], "m", path)
    assert text.startswith("keep_dtype entries 'causal_mask', 'OpType::Trilu' of model 'm' name "
                           "only ops folded at conversion (its Trilu ops: 'causal_mask'; ")
    assert text.endswith("remove them; closest ops that run: 'apply_mask'")
    # names only: the model is not read (a path that is no file would be refused)
    assert folded_keep_problem(["apply_mask"], ["causal_mask"], [], "m", tmp_path / "none") == ""


def test_a_refusal_names_the_model_by_its_path_below_where_pytest_ran(tmp_path, monkeypatch):
    """An upgrade trial: '/tmp/t48/proj/tests/../models/dup.onnx', absolute and with '..',
    where the README says printed paths are relative to where pytest ran."""
    (tmp_path / "models").mkdir()
    (tmp_path / "tests").mkdir()
    onnx.save(dup_model(), str(tmp_path / "models" / "dup.onnx"))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as info:
        prepare_model(str(tmp_path / "tests" / ".." / "models" / "dup.onnx"))
    assert str(info.value).startswith("models/dup.onnx: model 'dup' has ops that share a name")
