"""The FAKE atc refuses and does what a real ATC does for dynamic profiles, ``--out_nodes`` and
``--host_env_os``/``--host_env_cpu`` (a trial found it accepting all three and ignoring them).
Sources: GE's code and error registry, cited in ``testing/fake_atc_checks``."""
import platform
import re

import numpy as np
import pytest

from pytest_ascend_accuracy.testing import fake_atc, fake_runtime
from pytest_ascend_accuracy.testing.fake_om import read_fake_om


def run(capsys, *argv):
    code = fake_atc.main(list(argv))
    return code, capsys.readouterr().out


def failure(out):
    """(error line, the lines after it) of a failed run in the real ATC console layout."""
    lines = out.splitlines()
    assert lines[0] == fake_atc.START_LINE and lines[1] == fake_atc.FAILED_LINE, lines
    assert re.match(r"E[0-9A-Z]{5}: \S", lines[2])
    assert lines[-1] == "        TraceBack (most recent call last):"
    return lines[2], lines[3:]


def base(model, *extra):
    return [f"--model={model}", "--framework=5", "--output=tiny", "--soc_version=Ascend310P3",
            *extra]


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for var in ("FAKE_ATC_FAIL", "FAKE_ATC_HANG", "FAKE_ATC_REJECT", "FAKE_ATC_CALLS",
                "FAKE_ATC_VERSION", "FAKE_ATC_HOST_PLATFORM_IRRELEVANT"):
        monkeypatch.delenv(var, raising=False)


# -- 1. dynamic profiles need a -1 in --input_shape ---------------------------------------------
@pytest.mark.parametrize("args, expected", [
    (("--input_shape=x:1,3,4,4", "--dynamic_batch_size=1,2,4"),
     "E10031: --dynamic_batch_size is included, but none of the nodes specified in --input_shape "
     "has a batch size equaling -1."),
    (("--input_shape=x:1,3,4,4", "--dynamic_image_size=4,4;8,8"),
     "E10019: When --dynamic_image_size is included, only the height and width axes can be -1 in "
     "--input_shape."),
    (("--input_shape=x:1,3,4,4", "--dynamic_dims=1;2", "--input_format=ND"),
     "E10001: Value [0] for parameter [--input_shape's dynamic dim num] is invalid. Reason: at "
     "least one dim should be -1 when set dynamic_dims"),
    (("--input_shape=x:-1,3,4,4", "--dynamic_dims=1;2", "--input_format=NCHW"),
     "E10001: Value [NCHW] for parameter [--input_format] is invalid. Reason: input_format must "
     "be ND when set dynamic_dims"),
    (("--dynamic_batch_size=1,2",), "E10004: Value for --input_shape is empty."),
    (("--input_shape=x:-1,3,4,4", "--dynamic_batch_size=1,2", "--dynamic_dims=1;2"),
     "E10009: --dynamic_batch_size, --dynamic_image_size, --input_shape_range, and --dynamic_dims "
     "are mutually exclusive."),
])
def test_a_dynamic_profile_with_a_static_input_shape_is_refused(capsys, tiny_model, tmp_path,
                                                                args, expected):
    code, out = run(capsys, *base(tiny_model, *args))
    assert code == 255
    line, rest = failure(out)
    assert line == expected
    assert not (tmp_path / "tiny.om").exists()


def test_the_batch_refusal_prints_ges_solution(capsys, tiny_model):
    _, out = run(capsys, *base(tiny_model, "--input_shape=x:1,3,4,4", "--dynamic_batch_size=1,2"))
    assert failure(out)[1][0] == (
        "        Solution: 1. In static shape scenarios, remove the --dynamic_batch_size option "
        "from your command line. 2. In dynamic shape scenarios, set the corresponding axis of the "
        "dynamic-shape input in --input_shape to -1.")


def test_a_valid_dynamic_profile_is_refused_as_not_modelled(capsys, model_factory):
    model = model_factory("dyn.onnx", dynamic_batch=True)
    code, out = run(capsys, *base(model, "--input_shape=x:-1,3,4,4", "--dynamic_batch_size=1,2"))
    assert code == 255
    line, _ = failure(out)
    assert line.startswith("E10001: Value [1,2] for parameter [--dynamic_batch_size] is invalid. "
                           "Reason: the FAKE atc builds no dynamic-profile model")


# -- 2. --out_nodes: the named outputs become the om's; unknown nodes are refused ---------------
def test_out_nodes_become_the_model_outputs(capsys, tiny_model, tmp_path):
    code, out = run(capsys, *base(tiny_model, "--out_nodes=add1:0"))
    assert code == 0, out
    fake = read_fake_om(tmp_path / "tiny.om")
    assert fake.output_order() == ["a"]
    assert [n.name for n in fake.model.graph.node] == ["conv1", "relu1", "add1"]  # sig1 pruned
    code, out = run(capsys, "--mode=1", "--om=tiny.om", "--json=tiny.json")
    assert code == 0, out
    assert '"add1:0:a"' in (tmp_path / "tiny.json").read_text()


def test_out_nodes_outputs_are_what_a_run_returns(capsys, tiny_model, tmp_path, monkeypatch):
    import onnxruntime as ort

    assert run(capsys, *base(tiny_model, "--out_nodes=relu1:0;sig1:0"))[0] == 0
    npu = fake_runtime.install(monkeypatch, flavor="ais_bench")
    from ais_bench.infer.interface import InferSession

    x = np.random.default_rng(1).standard_normal((1, 3, 4, 4)).astype(np.float32)
    session = InferSession(0, str(tmp_path / "tiny.om"))
    assert [o.name for o in session.get_outputs()] == ["r", "y"]
    relu, y = session.infer([x])
    ref = ort.InferenceSession(str(tiny_model), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(y, ref.run(["y"], {"x": x})[0], rtol=1e-6)
    assert relu.shape == (1, 4, 4, 4) and (relu >= 0).all()
    assert npu.protocol_errors == []


def test_an_out_node_fused_away_by_default_stays_an_output(capsys, tiny_model, tmp_path):
    assert run(capsys, *base(tiny_model, "--out_nodes=conv1:0;sig1:0"))[0] == 0
    fake = read_fake_om(tmp_path / "tiny.om")
    assert [op.name for op in fake.plan()][:2] == ["conv1", "relu1"]  # no Conv+Relu fusion
    assert fake.output_order() == ["c", "y"]


@pytest.mark.parametrize("value, expected", [
    ("no_such_node:0",
     "E10016: Opname no_such_node specified in --out_nodes is not found in the model. Confirm "
     "whether this node name exists, or the node is not split with the specified delimiter ';'."),
    ("add1:3", "E10003: Value add1 for parameter --out_nodes is invalid. Reason: Output "
               "index:\"3\" must be smaller than output size:1 and cannot be negative."),
    ("add1:x", "E10001: Value [add1:x] for parameter [--out_nodes] is invalid. Reason: The index "
               "is not a positive integer."),
    ("add1:0;y", "E10001: Value [add1:0;y] for parameter [--out_nodes] is invalid. Reason: Only "
                 "one of index, top_name and output_name can be used."),
    ("a:b:c", "E10001: Value [a:b:c] for parameter [--out_nodes] is invalid. Reason: The "
              "parameter format is invalid. Valid format: \"node_name1:0;node_name1:1;"
              "node_name2:0\"."),
])
def test_bad_out_nodes_are_refused(capsys, tiny_model, tmp_path, value, expected):
    code, out = run(capsys, *base(tiny_model, f"--out_nodes={value}"))
    assert code == 255
    assert failure(out)[0] == expected
    assert not (tmp_path / "tiny.om").exists()


def test_out_nodes_by_output_name_keeps_a_model_output(capsys, tiny_model, tmp_path):
    assert run(capsys, *base(tiny_model, "--out_nodes=y"))[0] == 0
    assert read_fake_om(tmp_path / "tiny.om").output_order() == ["y"]
    code, out = run(capsys, *base(tiny_model, "--out_nodes=r"))  # an inner tensor, no output
    assert code == 255 and "no output of the model has this name" in failure(out)[0]


# -- 3. --host_env_os / --host_env_cpu ------------------------------------------------------------
def test_host_env_names_the_om_with_os_and_cpu(capsys, tiny_model, tmp_path):
    code, out = run(capsys, *base(tiny_model, "--host_env_os=linux", "--host_env_cpu=aarch64"))
    assert code == 0, out
    assert (tmp_path / "tiny_linux_aarch64.om").is_file() and not (tmp_path / "tiny.om").exists()
    assert read_fake_om(tmp_path / "tiny_linux_aarch64.om").meta["host_env"] == ["linux", "aarch64"]


def test_one_host_env_option_defaults_the_other_to_this_machine(capsys, tiny_model, tmp_path):
    assert run(capsys, *base(tiny_model, "--host_env_os=linux"))[0] == 0
    assert (tmp_path / f"tiny_linux_{platform.machine()}.om").is_file()


def test_a_host_platform_irrelevant_model_keeps_its_name(capsys, tiny_model, tmp_path,
                                                         monkeypatch):
    monkeypatch.setenv("FAKE_ATC_HOST_PLATFORM_IRRELEVANT", "1")
    code, out = run(capsys, *base(tiny_model, "--host_env_os=linux", "--host_env_cpu=x86_64"))
    assert code == 0 and (tmp_path / "tiny.om").is_file()
    assert ("This model is irrelevant to the host platform, parameters about host os and host cpu "
            "are ignored.") in out.splitlines()


@pytest.mark.parametrize("arg, expected", [
    ("--host_env_os=windows", "E10001: Value [windows] for parameter [--host_env_os] is invalid. "
                              "Reason: The OS windows is not within the support list of "
                              "{linux / }, and the OS type must be consistent with that of the "
                              "opp."),
    ("--host_env_cpu=arm64", "E10001: Value [arm64] for parameter [--host_env_cpu] is invalid. "
                             "Reason: The CPU arm64 is not within the support list of {aarch64 / "
                             "x86_64 / }, and the CPU type must be consistent with that of the "
                             "opp."),
])
def test_an_unsupported_host_env_is_refused(capsys, tiny_model, tmp_path, arg, expected):
    code, out = run(capsys, *base(tiny_model, arg))
    assert code == 255 and failure(out)[0] == expected
    assert not list(tmp_path.glob("*.om"))


def test_an_om_built_for_another_cpu_does_not_load_here(capsys, tiny_model, tmp_path,
                                                        monkeypatch):
    other = "aarch64" if platform.machine() != "aarch64" else "x86_64"
    assert run(capsys, *base(tiny_model, f"--host_env_cpu={other}"))[0] == 0
    fake_runtime.install(monkeypatch, flavor="ais_bench")
    from ais_bench.infer.interface import InferSession

    with pytest.raises(RuntimeError, match=f"built for linux {other}"):
        InferSession(0, str(tmp_path / f"tiny_linux_{other}.om"))


# -- keep_dtype by the type ATC's parser gives a node ---------------------------------------------
def test_keep_dtype_of_a_nearest_resize_by_its_parsed_type(capsys, tmp_path):
    """The fake matched OpType:: entries on the ONNX type's parser name alone: a nearest Resize
    is ResizeNearestNeighborV2 to ATC's parser (a4ec2ca), which the fake warned matched no node,
    and kept nothing."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    graph = helper.make_graph(
        [helper.make_node("Resize", ["x", "", "scales"], ["y"], name="up", mode="nearest")],
        "rs", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 12, 12])],
        [numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(tmp_path / "rs.onnx"))
    (tmp_path / "keep.cfg").write_text("OpType::ResizeNearestNeighborV2\n")
    code, out = run(capsys, *base(tmp_path / "rs.onnx", "--keep_dtype=keep.cfg"))
    assert code == 0 and "matches no node" not in out, out
    om = read_fake_om(tmp_path / "tiny.om")
    assert om.keeps("up", "Resize")
    (tmp_path / "keep.cfg").write_text("OpType::Resize\n")  # the linear mode's type: none here
    code, out = run(capsys, *base(tmp_path / "rs.onnx", "--keep_dtype=keep.cfg"))
    assert "keep_dtype op type [Resize] matches no node" in out
    assert not read_fake_om(tmp_path / "tiny.om").keeps("up", "Resize")
