"""Golden ops inside an If the device runs as one operator are counted inside it, not
"unmatched" (``graph.control_flow.operator_members``, the run's ``meta["inside_ops"]``). The
golden decides such an If from its inputs and dumps the branch it takes; the device runs the If
as one operator and dumps its output only, which is compared. Trial T3: every torchvision
detector's coverage line read "31 unmatched (ReduceMax_1567, Cast_1568, ...)", the batched-NMS
If's branch, where the If's output had been compared. The plugin (the emulator's run meta) and
``ascend-accuracy compare`` (the conversion's plan beside its om json, else the stored golden's
model) count them alike; an entry naming one is refused saying so."""
import onnx
import pytest

pytest.importorskip("onnxruntime")

from pytest_ascend_accuracy.cli import app as cli  # noqa: E402
from pytest_ascend_accuracy.compare.rows import Coverage  # noqa: E402
from pytest_ascend_accuracy.testing.models import nested_if_model  # noqa: E402

COUNTED = "10 golden ops: 8 compared, 0 inside fused ops, 2 inside If operators, 0 unmatched"


def test_a_runs_coverage_counts_the_branch_ops_inside_their_if(tmp_path):
    from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend
    from pytest_ascend_accuracy.compare.engine import compare_dumps
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump
    from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

    model = tmp_path / "nif.onnx"
    onnx.save(nested_if_model(), str(model))
    cache = Cache(tmp_path / "cache")
    backend = EmulatorBackend(cache)
    inputs = make_inputs(model)
    run = backend.run(backend.convert(model, None), inputs, dump_dir=tmp_path / "dump")
    assert set(run.meta["inside_ops"].values()) == {"pick", "by_rank"}  # the Ifs it runs
    coverage = compare_dumps(run, golden_dump(model, inputs, cache=cache)).coverage
    assert coverage.describe().startswith(COUNTED), coverage.describe()
    assert set(coverage.in_ifs) <= set(run.meta["inside_ops"]) and len(coverage.in_ifs) == 2
    assert Coverage.from_dict(coverage.to_dict()) == coverage


@pytest.mark.parametrize("om_json", [True, False], ids=["plan-beside-om-json", "stored-model"])
def test_compare_counts_them_as_the_plugin_does(tmp_path, capsys, om_json):
    from pytest_ascend_accuracy.testing.emulated_pair import emulated_pair

    pair = emulated_pair(tmp_path, nested_if_model(), name="nif")
    argv = pair.compare_argv() if om_json else pair.compare_argv()[:3]
    assert cli.main(argv + ["--threshold", "0.99"]) == 0
    assert f"coverage: {COUNTED}" in capsys.readouterr().out


def test_an_entry_naming_one_is_refused_saying_where_it_is():
    text = Coverage(3, compared=("a",), in_ifs=("relu",)).judges_nothing("ignore entry", "relu")
    assert text == ("ignore entry 'relu' names only ops never compared here (relu): inside an If "
                    "the device runs as one operator, which dumps none of its branch's tensors; "
                    "name the If to judge its output")
    assert Coverage.from_dict({"golden_total": 1, "compared": ["a"]}).in_ifs == ()  # (an old
    # compare.json)
