"""compare_dumps: the loop over matched pairs, in memory and through real dump files."""
import gc
import weakref

import numpy as np
import pytest

from pytest_ascend_accuracy.compare.engine import CompareProgress, compare_dumps
from pytest_ascend_accuracy.dump.layout import AscendDumpWriter
from pytest_ascend_accuracy.dump.loader import load_dump
from pytest_ascend_accuracy.dump.model import DumpSet, OpRecord, TensorRef
from pytest_ascend_accuracy.dump.npy_writer import NpyDumpWriter
from pytest_ascend_accuracy.dump.om_json import OmOp, write_om_json
from pytest_ascend_accuracy.errors import DumpFormatError


def test_same_size_shape_mismatch_is_compared_and_flagged():
    y = np.arange(12, dtype=np.float32).reshape(3, 4)
    r = compare_dumps(DumpSet.from_arrays({"a": [y.reshape(2, 6).astype(np.float16)]}),
                      DumpSet.from_arrays({"a": [y]}))
    row = r.rows[0]
    assert "shape_mismatch_same_size" in row.flags and row.metrics.cosine == pytest.approx(1.0)
    assert row.reason == "shape (2, 6) vs golden (3, 4) (same size, compared flattened)"
    assert (row.shape, row.golden_shape, row.dtype, row.golden_dtype) == (
        (2, 6), (3, 4), "float16", "float32")
    assert r.judge(0.99).passed


def test_a_padded_actual_is_cut_to_the_golden_shape_as_msaccucmp_does():
    """msaccucmp's TensorConversion.slice_data cuts an NPU tensor whose every dim is at least
    the golden's (channels padded to 16) and compares; this said "cannot compare" and failed
    (review helper, against msaccucmp)."""
    y = np.random.default_rng(0).standard_normal((1, 3, 4, 4)).astype(np.float32)
    padded = np.zeros((1, 16, 4, 4), np.float16)
    padded[:, :3] = y
    r = compare_dumps(DumpSet.from_arrays({"a": [padded]}), DumpSet.from_arrays({"a": [y]}))
    row = r.rows[0]
    assert "cropped" in row.flags and row.metrics.cosine == pytest.approx(1.0, abs=1e-6)
    assert row.reason == "shape (1, 16, 4, 4) cut to the golden's (1, 3, 4, 4) (as msaccucmp does)"
    assert r.judge(0.99).passed


@pytest.mark.parametrize("shape", [(1, 2, 4, 4), (16, 4, 4), (1, 16, 4, 3),
                                   (4, 3, 4, 4)])  # a bigger batch: a wrong input shape
def test_a_size_that_cannot_be_cut_to_the_golden_is_reported_and_fails(shape):
    r = compare_dumps(DumpSet.from_arrays({"a": [np.ones(shape, np.float16)]}),
                      DumpSet.from_arrays({"a": [np.ones((1, 3, 4, 4), np.float32)]}))
    row = r.rows[0]
    assert row.metrics is None and "shape_mismatch" in row.flags
    assert row.reason.endswith("elements, cannot compare")
    assert not r.judge(0.0).passed


def test_tensors_are_loaded_one_pair_at_a_time_and_released():
    refs = []
    events = []

    def ref(name, value, dtype):
        def load():
            gc.collect()
            events.append((name, sum(r() is not None for r in refs)))
            arr = np.full(1000, value, dtype)
            refs.append(weakref.ref(arr))
            return arr
        return TensorRef("output", 0, np.dtype(dtype).name, (1000,), load)

    n = 5
    actual = DumpSet([OpRecord(f"op{i}", outputs=(ref(f"a{i}", i + 1, np.float16),), order=i)
                      for i in range(n)])
    golden = DumpSet([OpRecord(f"op{i}", outputs=(ref(f"g{i}", i + 1, np.float32),), order=i)
                      for i in range(n)])
    seen = []
    r = compare_dumps(actual, golden, progress=seen.append)
    assert [e[0] for e in events] == [x for i in range(n) for x in (f"a{i}", f"g{i}")]
    assert max(e[1] for e in events) <= 1  # only the actual of the same pair is alive
    assert len(r.rows) == n
    assert seen[-1] == CompareProgress(n, n, "op4", n * 6000, n * 6000)
    assert [p.done for p in seen] == [1, 2, 3, 4, 5]


def test_unreadable_tensor_becomes_a_failing_row_and_the_rest_is_compared():
    def broken():
        raise DumpFormatError("/dumps/Conv.op1.1.0.123", "truncated: 10 of 64 bytes")
    actual = DumpSet([OpRecord("op1", outputs=(TensorRef("output", 0, "float16", (4,), broken),)),
                      OpRecord("op2", outputs=(TensorRef.from_array(np.ones(4, np.float16)),))])
    golden = DumpSet.from_arrays({"op1": [np.ones(4, np.float32)], "op2": [np.ones(4, np.float32)]})
    r = compare_dumps(actual, golden)
    assert r.rows[0].reason == "cannot read: /dumps/Conv.op1.1.0.123: truncated: 10 of 64 bytes"
    assert "unreadable" in r.rows[0].flags and r.rows[1].metrics.cosine == 1.0
    assert [f.row.op_name for f in r.judge(0.9).failures] == ["op1"]


def test_loader_returning_the_wrong_size_is_caught():
    bad = TensorRef("output", 0, "float32", (8,), lambda: np.ones(5, np.float32), source="f.bin")
    r = compare_dumps(DumpSet([OpRecord("a", outputs=(bad,))]),
                      DumpSet.from_arrays({"a": [np.ones(8, np.float32)]}))
    assert r.rows[0].reason == ("cannot read: f.bin: actual tensor output:0 holds 5 values, its "
                                "shape (8,) says 8")


def test_rows_follow_actual_graph_order_and_carry_fusion_details():
    golden = DumpSet.from_arrays({"Conv_0": [np.ones(4, np.float32)], "Relu_1": [np.ones(4, np.float32)],
                                  "Add_2": [np.ones(4, np.float32)]})
    actual = DumpSet([
        OpRecord("add", op_type="Add", outputs=(TensorRef.from_array(np.ones(4, np.float16)),),
                 original_names=("Add_2",), order=7),
        OpRecord("conv_relu", op_type="Conv2D", outputs=(TensorRef.from_array(np.ones(4, np.float16)),),
                 original_names=("Conv_0", "Relu_1"), order=3)])
    r = compare_dumps(actual, golden)
    assert [(x.op_name, x.golden_name, x.match, x.order) for x in r.rows] == [
        ("conv_relu", "Relu_1", "fused", 3), ("add", "Add_2", "fused", 7)]
    assert r.rows[0].original_names == ("Conv_0", "Relu_1") and "fused" in r.rows[0].flags
    assert r.coverage.fused == ("Conv_0",)


# ---------------------------------------------------------------- through real dump files
def _write_pair(tmp_path, *, nc1hwc0=False):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 3, 4, 4)).astype(np.float32)
    conv = np.maximum(x * 2, 0)
    add = conv + 1
    mask = np.where(np.arange(16).reshape(4, 4) > 8, -np.inf, 0).astype(np.float32)
    golden_dir, actual_dir = tmp_path / "golden", tmp_path / "npu"
    with NpyDumpWriter(golden_dir) as w:
        w.write_op("/backbone/conv/Conv", [x], [x * 2])
        w.write_op("/backbone/relu/Relu", [x * 2], [conv])
        w.write_op("Add.1", [conv], [add])
        w.write_op("mask_Where", [], [mask])
    with AscendDumpWriter(actual_dir) as w:
        w.write_op("Conv2D", "conv_relu_fused", [x.astype(np.float16)], [conv.astype(np.float16)],
                   output_formats=["NC1HWC0"] if nc1hwc0 else None)
        w.write_op("Add", "Add.1", [conv.astype(np.float16)], [add.astype(np.float16) * 1.5])
        w.write_op("TransData", "trans_TransData_9", [add.astype(np.float16)], [add.astype(np.float16)])
        w.write_op("Where", "mask_Where", [], [mask.astype(np.float16)])
    om = tmp_path / "model.json"
    write_om_json(om, "model", [
        OmOp("conv_relu_fused", "Conv2D", 1, original_names=("/backbone/conv/Conv", "/backbone/relu/Relu")),
        OmOp("Add.1", "Add", 2),
        OmOp("trans_TransData_9", "TransData", 3, original_names=("",)),
        OmOp("mask_Where", "Where", 4),
    ])
    return actual_dir, golden_dir, om


@pytest.mark.parametrize("nc1hwc0", [False, True])
def test_compare_real_dump_files_with_om_json(tmp_path, nc1hwc0):
    actual_dir, golden_dir, om = _write_pair(tmp_path, nc1hwc0=nc1hwc0)
    actual = load_dump(actual_dir, om_json=om)
    golden = load_dump(golden_dir)
    r = compare_dumps(actual, golden)
    rows = {x.op_name: x for x in r.rows}
    fused = rows["conv_relu_fused"]
    # npy golden names are sanitised (_backbone_relu_Relu): named as the om json names it
    assert fused.golden_name == "/backbone/relu/Relu"
    assert fused.metrics.cosine == pytest.approx(1.0, abs=1e-6) and fused.shape == (1, 3, 4, 4)
    assert rows["Add.1"].metrics.rel_l2 > 0.3
    where = rows["mask_Where"]
    assert where.metrics.matched_inf == 7 and where.metrics.mismatch == 0
    assert "matched_inf" in where.flags
    assert r.coverage.npu_only == ("trans_TransData_9",)
    assert len(r.coverage.fused) == 1 and r.coverage.unmatched_golden == ()
    v = r.judge(0.99)
    assert [f.row.op_name for f in v.failures] == []  # cosine of a 1.5x scaled tensor is 1
    v = r.judge(0.1, metric="rel_l2")
    assert [f.row.op_name for f in v.failures] == ["Add.1"]


def test_parallel_workers_give_identical_rows_and_ordered_progress():
    rng = np.random.default_rng(3)
    golden = {f"op{i}": [rng.standard_normal(3000 + 100 * i).astype(np.float32)] for i in range(12)}
    actual = {k: [(v[0] * 1.01).astype(np.float16)] for k, v in golden.items()}
    actual["op5"][0][7] = np.nan
    a, g = DumpSet.from_arrays(actual), DumpSet.from_arrays(golden)
    seen = []
    serial = compare_dumps(a, g)
    parallel = compare_dumps(a, g, workers=3, progress=lambda p: seen.append(p.op_name))
    assert parallel.rows == serial.rows
    assert seen == [f"op{i}" for i in range(12)]


def test_inner_parts_of_a_split_framework_op_say_so(tmp_path):
    """ATC 6.0 splits RandomNormalLike_327 into RandomStandardNormal, Cast and Add sharing one
    original-names list (real tdnn om json); only the last holds the framework op's tensor. The
    two inner parts are unmatched, and their reason says why: it read 'no golden op matches its
    name, original names or output origin' while RandomNormalLike_327 was in the golden and
    compared (a trial on the real om json)."""
    y = np.random.default_rng(0).standard_normal((1, 8)).astype(np.float32)
    leaf = tmp_path / "dump"
    with AscendDumpWriter(leaf) as w:
        w.write_op("RandomStandardNormal", "P_RandomNormalLike_327_normal_170", [], [y])
        w.write_op("Cast", "trans_Cast_65P_RandomNormalLike_327_mul_171", [],
                   [y.astype(np.float16)], output_origins=[("P_RandomNormalLike_327_mul_171", 0)])
        w.write_op("Add", "P_RandomNormalLike_327_add_172", [], [y.astype(np.float16)])
    golden = tmp_path / "golden"
    with NpyDumpWriter(golden) as g:
        g.write_op("RandomNormalLike_327", outputs=[y])
    om = tmp_path / "m.json"
    names = ("RandomNormalLike_327",)
    write_om_json(om, "m", [
        OmOp("P_RandomNormalLike_327_normal_170", "RandomStandardNormal", 1,
             original_names=names),
        OmOp("trans_Cast_65P_RandomNormalLike_327_mul_171", "Cast", 2, original_names=names,
             output_origins=(("P_RandomNormalLike_327_mul_171", 0),)),
        OmOp("P_RandomNormalLike_327_add_172", "Add", 3, original_names=names)])
    r = compare_dumps(load_dump(leaf, om_json=om), load_dump(golden))
    assert r.coverage.compared == ("RandomNormalLike_327",)
    assert [row.op_name for row in r.rows if row.metrics is not None] == [
        "P_RandomNormalLike_327_add_172"]
    reasons = {row.op_name: row.reason for row in r.rows if row.metrics is None}
    assert reasons == dict.fromkeys(
        ["P_RandomNormalLike_327_normal_170", "trans_Cast_65P_RandomNormalLike_327_mul_171"],
        "an intermediate part of RandomNormalLike_327, which ATC split into several ops: the "
        "framework op's tensor is the last part's output, compared there")


@pytest.mark.parametrize("golden_shape, extra", [((2, 32), (2, 33)), ((11,), (12,)),
                                                 ((1, 11, 3), (1, 12, 3)), ((2, 47), (2, 48))])
def test_a_larger_actual_holding_values_past_the_golden_is_not_cut(golden_shape, extra):
    """A trial: a NonZero keeping one element more ((2, 33) against (2, 32)) and the Gathers
    after it ((33,) against (32,)) were cut to the golden's shape and passed; a review: (2, 48)
    against (2, 47) passed under an "any axis aligned to 16" rule. Padding is zeros, or a 4-D
    channel axis aligned to a C0; these are values."""
    rng = np.random.default_rng(1)
    golden = rng.uniform(1, 2, golden_shape).astype(np.float32)
    actual = rng.uniform(1, 2, extra).astype(np.float32)
    actual[tuple(slice(0, d) for d in golden_shape)] = golden
    r = compare_dumps(DumpSet.from_arrays({"a": [actual]}), DumpSet.from_arrays({"a": [golden]}))
    row = r.rows[0]
    assert "shape_mismatch" in row.flags and "cropped" not in row.flags and row.metrics is None
    past = int(np.prod(extra)) - int(np.prod(golden_shape))
    assert f"{past} of the {past} elements past the golden's shape are not zero" in row.reason
    assert not r.judge(0.5).passed
    padded = actual.copy()
    padded[tuple(slice(0, d) for d in golden_shape)] = golden
    padded[np.ones(extra, bool) & ~np.pad(np.ones(golden_shape, bool),
                                          [(0, e - g) for e, g in zip(extra, golden_shape)])] = 0
    zeros = compare_dumps(DumpSet.from_arrays({"a": [padded]}),
                          DumpSet.from_arrays({"a": [golden]}))
    assert "cropped" in zeros.rows[0].flags and zeros.judge(0.99).passed  # zeros: padding


def test_a_channel_axis_aligned_to_c0_is_cut_whatever_its_padding_holds():
    """NC1HWC0 read as NCHW: C padded to 16, the padded channels hold what the op computed of
    zeros (a Sigmoid's 0.5), not zeros."""
    y = np.random.default_rng(2).standard_normal((1, 3, 4, 4)).astype(np.float32)
    padded = np.full((1, 16, 4, 4), 0.5, np.float16)
    padded[:, :3] = y
    r = compare_dumps(DumpSet.from_arrays({"a": [padded]}), DumpSet.from_arrays({"a": [y]}))
    assert "cropped" in r.rows[0].flags and r.judge(0.99).passed


@pytest.mark.parametrize("golden_shape, padded, op_type, cut", [
    ((1, 17, 2, 2), (1, 32, 2, 2), "", True), ((1, 17, 2, 2), (1, 20, 2, 2), "", False),
    ((1, 5, 2, 2), (1, 8, 2, 2), "", False), ((1, 3, 2, 2), (1, 4, 2, 2), "", True),
    ((1, 1, 28), (1, 16, 32), "MatMulV2", True), ((1, 3, 28), (1, 3, 32), "MatMulV2", False),
    ((1, 30, 64), (1, 32, 64), "GatherV2", False)])
def test_only_a_device_layout_s_padding_is_cut_whatever_it_holds(golden_shape, padded, op_type,
                                                                 cut):
    """A review: C 20 against 17 and 8 against 5 were cut though no layout pads so; a MatMul's
    FRACTAL_NZ (1, 16, 32) for (1, 1, 28) holds its bias in the padding and must be cut; 32
    tokens a Gather picked by a NonZero against the golden's 30 are values, not NZ padding."""
    y = np.ones(golden_shape, np.float32)
    actual = np.full(padded, 0.5, np.float16)
    actual[tuple(slice(0, d) for d in golden_shape)] = y
    r = compare_dumps(DumpSet.from_arrays({"a": [actual]}, op_types={"a": op_type}),
                      DumpSet.from_arrays({"a": [y]}))
    assert ("cropped" in r.rows[0].flags) == cut
