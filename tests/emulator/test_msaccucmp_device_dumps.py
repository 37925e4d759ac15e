"""msaccucmp converts and compares the emulator's device-format dumps as we do (issue 11.3).

Its own ``convert`` (NC1HWC0 / FRACTAL_Z -> NCHW, FRACTAL_NZ -> ND, cropped to the header's
``original_shape``) must give exactly the tensors our reader gives, and its ``compare`` (dumps +
the emulator's om json as fusion rule + the golden as a stored npy directory) must agree with our metrics
and verdict. See ``msaccucmp_peer`` for how it runs without CANN's header-parsing library.
"""
import csv
import math

import numpy as np
import pytest

pytest.importorskip("onnxruntime")

from pytest_ascend_accuracy.backends.emulator.backend import EmulatorBackend  # noqa: E402
from pytest_ascend_accuracy.backends.emulator.faults import Fault  # noqa: E402
from pytest_ascend_accuracy.compare.engine import compare_dumps  # noqa: E402
from pytest_ascend_accuracy.golden.onnxruntime_golden import golden_dump  # noqa: E402
from pytest_ascend_accuracy.golden.stored import store_golden  # noqa: E402
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs  # noqa: E402
from pytest_ascend_accuracy.testing import models  # noqa: E402

from .msaccucmp_peer import msaccucmp as _msaccucmp  # noqa: E402


@pytest.fixture
def msaccucmp(monkeypatch):
    return _msaccucmp(monkeypatch)


def _emulate(cache, tmp_path, model, faults=()):
    backend = EmulatorBackend(cache, faults=faults)
    converted = backend.convert(model)
    return converted, backend.run(converted, make_inputs(model), dump_dir=tmp_path / "dump")


@pytest.mark.parametrize("build", [models.conv_bn_relu, models.transformer_block])
def test_msaccucmp_converts_our_device_format_dumps(build, msaccucmp, cache, tmp_path):
    _, dump = _emulate(cache, tmp_path, build())
    converted = {}
    for target in ("NCHW", "ND"):  # NC1HWC0/FRACTAL_Z -> NCHW, FRACTAL_NZ -> ND
        out = tmp_path / target
        out.mkdir()
        # exit code 22 (some tensors not converted): ND tensors have no conversion to NCHW
        msaccucmp("convert", "-d", dump.root, "-f", target, "-out", out)
        converted.update({p.name: p for p in out.glob("*.npy")})
    checked = 0
    for op in dump.ops:
        for t in op.inputs + op.outputs:
            if t.format == "ND":
                continue
            base = f"{t.source.rsplit('/', 1)[1]}.{t.kind}.{t.index}."
            names = [n for n in converted if n.startswith(base)]
            assert len(names) == 1, (op.name, t.slot, sorted(converted))
            theirs = np.load(converted[names[0]])
            ours = t.load()
            if t.format == "FRACTAL_NZ" and ours.ndim > 3:  # its NZ -> ND folds batch dims into one
                ours = ours.reshape((-1,) + ours.shape[-2:])
            assert theirs.shape == ours.shape and theirs.dtype == ours.dtype, (op.name, t.slot)
            np.testing.assert_array_equal(theirs, ours, err_msg=f"{op.name} {t.slot}")
            checked += 1
    assert checked >= 6


COLUMNS = {"cosine": "CosineSimilarity", "max_abs": "MaxAbsoluteError",
           "rel_l2": "RelativeEuclideanDistance", "mean_abs": "MeanAbsoluteError",
           "rmse": "RootMeanSquareError"}


def _their_rows(out_dir):
    (path,) = out_dir.glob("*.csv")
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    head = rows[0]
    return {r[head.index("TensorIndex")]: dict(zip(head, r)) for r in rows[1:]}


CASES = {  # model, faults, first failing op, outputs compared
    "conv passes": (models.conv_bn_relu, (), None, 5),  # 2 fused convs, pooling, flatten, Gemm
    "conv fault": (models.conv_bn_relu, (Fault.on_op("conv2"),), "conv2relu2", 5),
    "matmul fault (3-D/4-D NZ)": (models.transformer_block, (Fault.on_op("/attn/MatMul_1", amount=3.0),),
                     "/attn/MatMul_1", 20),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_msaccucmp_compares_our_device_format_dumps_as_we_do(case, msaccucmp, cache, tmp_path):
    build, faults, first, n_outputs = CASES[case]
    model = build()
    converted, dump = _emulate(cache, tmp_path, model, faults)
    golden = golden_dump(model, make_inputs(model), cache=cache)
    # the cache packs a golden's tensors into one file; what a user hands msaccucmp is a
    # stored golden, a directory of msit-named .npy files
    golden_dir = store_golden(tmp_path / "golden", golden)
    out = tmp_path / "msaccucmp"
    out.mkdir()
    assert msaccucmp("compare", "-m", dump.root, "-g", golden_dir, "-f", converted.om_json,
                     "-out", out) == 0
    theirs = _their_rows(out)
    result = compare_dumps(dump, golden)
    verdict = result.judge(threshold=0.95)
    assert (verdict.first_failure.op_name if verdict.first_failure else None) == first
    compared = 0
    for row in result.rows:
        if not row.compared or not row.slot.startswith("output"):
            continue
        their = theirs[row.tensor_index]
        assert their["CompareFailReason"] == "", (row.tensor_index, their["CompareFailReason"])
        their_shape = [int(d) for d in their["Shape"].strip("[]").split(",")]
        assert math.prod(their_shape) == math.prod(row.shape)  # it drops 1s, flattens some
        for ours_key, column in COLUMNS.items():
            ours, value = getattr(row.metrics, ours_key), float(their[column])
            assert math.isclose(ours, value, rel_tol=2e-6, abs_tol=1.5e-6), (row.tensor_index, column)
        # same verdict per tensor at the threshold
        assert (float(their["CosineSimilarity"]) < 0.95) == (row.metrics.cosine < 0.95)
        compared += 1
    assert compared == n_outputs  # every op's output


@pytest.mark.parametrize("build", [models.conv_bn_relu, models.transformer_block])
def test_op_inputs_are_paired_with_their_producers_outputs_as_msaccucmp_does(
        build, msaccucmp, cache, tmp_path):
    """``compare_inputs`` against a golden of op outputs only (a stored golden's default): each
    input is compared with the golden output of the framework tensor feeding it, through the om
    json (msaccucmp's ``_find_pre_op``). It compared nothing before, without a word (a user
    trial of ``ascend-accuracy compare --inputs``), where msaccucmp compared them all."""
    model = build()
    converted, dump = _emulate(cache, tmp_path, model, (Fault.on_op(
        "conv2" if build is models.conv_bn_relu else "/attn/MatMul_1", amount=3.0),))
    golden = golden_dump(model, make_inputs(model), cache=cache)
    golden_dir = store_golden(tmp_path / "golden", golden)
    assert not list(golden_dir.glob("input_*"))
    out = tmp_path / "msaccucmp"
    out.mkdir()
    assert msaccucmp("compare", "-m", dump.root, "-g", golden_dir, "-f", converted.om_json,
                     "-out", out) == 0
    theirs = {k: v for k, v in _their_rows(out).items()
              if ":input:" in k and v["CosineSimilarity"] not in ("NaN", "")}
    from pytest_ascend_accuracy.dump.loader import load_dump

    result = compare_dumps(load_dump(dump.root, om_json=converted.om_json), load_dump(golden_dir),
                           compare_inputs=True)
    ours = {r.tensor_index: r for r in result.rows if r.slot.startswith("input") and r.compared}
    assert sorted(ours) == sorted(theirs) and len(ours) >= 4
    for key, row in ours.items():
        assert row.match == "producer"
        for ours_key, column in COLUMNS.items():
            assert math.isclose(getattr(row.metrics, ours_key), float(theirs[key][column]),
                                rel_tol=2e-6, abs_tol=1.5e-6), (key, column)
    assert any(r.metrics.cosine < 0.95 for r in ours.values())  # the fault reaches a consumer
