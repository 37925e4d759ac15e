"""NC1HWC0_C04 (GE's ``FORMAT_NC1HWC0_C04``: NC1HWC0 with C0 = 4) is converted like NC1HWC0; a
layout no reader converts names itself and the ``--ignore`` entry that judges the rest (a trial
with CANN's dump_task.proto: a C04 input failed "cannot compare" and the next step blamed the
dumps for coming from different models). Dump files are built here with the protobuf schema of
CANN's ``dump_task.proto`` (``testing.dump_task_schema``) and laid out by hand, not by this
package's writer."""
import struct

import numpy as np
import pytest

from pytest_ascend_accuracy.cli import app as cli
from pytest_ascend_accuracy.dump import device_formats as df
from pytest_ascend_accuracy.testing.dump_task_schema import dump_data_class

NC1HWC0, NC1HWC0_C04, FRACTAL_Z_C04 = 3, 12, 13  # ge::Format numbers (docs/formats.md §2.3)


def _five_hd(x, c0):
    """NCHW ``x`` laid out as (N, C1, H, W, C0), channels padded with garbage, not zeros."""
    n, c, h, w = x.shape
    c1 = -(-c // c0)
    buf = np.full((n, c1 * c0, h, w), 7.0, x.dtype)
    buf[:, :c] = x
    return buf.reshape(n, c1, c0, h, w).transpose(0, 1, 3, 4, 2).copy()


def _project(tmp_path, input_format, ops=("conv1",)):
    for k, op in enumerate(ops):
        _write_op(tmp_path, input_format, op, k)
    return [str(tmp_path / "dump"), str(tmp_path / "golden"), "--inputs"]


def _write_op(tmp_path, input_format, op, k):
    rng = np.random.default_rng(k)
    x = rng.standard_normal((1, 3, 5, 6)).astype(np.float16)
    y = rng.standard_normal((1, 16, 5, 6)).astype(np.float16)
    xdev, ydev = _five_hd(x, 4), _five_hd(y, 16)
    message = dump_data_class("test_c04")(version="2.0", dump_time=1 + k, op_name=op)
    # data_type 2: DT_FLOAT16 in dump_task.proto
    i = message.input.add(data_type=2, format=input_format, size=xdev.nbytes)
    i.shape.dim.extend(xdev.shape)
    i.original_shape.dim.extend(x.shape)
    o = message.output.add(data_type=2, format=NC1HWC0, size=ydev.nbytes)
    o.shape.dim.extend(ydev.shape)
    o.original_shape.dim.extend(y.shape)
    o.original_op.name = op
    header = message.SerializeToString()
    (tmp_path / "dump").mkdir(exist_ok=True)
    (tmp_path / "golden").mkdir(exist_ok=True)
    (tmp_path / "dump" / f"Conv2D.{op}.{k + 1}.0.170000000000000{k}").write_bytes(
        struct.pack("<Q", len(header)) + header + xdev.tobytes() + ydev.tobytes())
    np.save(tmp_path / "golden" / f"{op}.0.160000000000000{k}.npy", y.astype(np.float32))
    np.save(tmp_path / "golden" / f"input_{op}.0.160000000000000{k}.npy", x.astype(np.float32))


def test_c04_input_is_converted_and_compared(tmp_path, capsys):
    assert cli.main(["compare"] + _project(tmp_path, NC1HWC0_C04)) == 0
    out = capsys.readouterr().out
    assert "accuracy PASSED: 2 tensors meet cosine >= 0.95" in out
    assert "--inputs: no op input was compared" not in out


def test_c04_needs_c0_of_4():
    with pytest.raises(df.DeviceFormatError, match="NC1HWC0_C04 tensor needs C0 = 4"):
        df.logical_shape("NC1HWC0_C04", (1, 1, 5, 6, 16), (1, 3, 5, 6))
    x = np.arange(90, dtype=np.float16).reshape(1, 3, 5, 6)
    assert df.to_device(x, "NC1HWC0_C04").shape == (1, 1, 5, 6, 4)
    assert np.array_equal(df.to_device(x, "NC1HWC0_C04"), np.where(
        np.arange(4) < 3, _five_hd(x, 4), 0))  # the writer pads with zeros
    assert np.array_equal(df.to_logical(_five_hd(x, 4), "NC1HWC0_C04", x.shape), x)


def test_unconverted_layout_names_itself_and_the_ignore_that_works_pasted(tmp_path, capsys):
    args = _project(tmp_path, FRACTAL_Z_C04)
    assert cli.main(["compare"] + args) == 1
    out = capsys.readouterr().out
    why = [line for line in out.splitlines() if line.strip().startswith("why")][0]
    assert "the device stored it in its layout FRACTAL_Z_C04" in why
    step = [line for line in out.splitlines() if line.startswith("next step:")][0]
    assert "same model" not in step
    assert step.endswith("to judge the other tensors without it, --ignore conv1:input:0")
    note = [line for line in out.splitlines() if line.startswith("--inputs:")][0]
    assert "1 paired with a golden tensor could not be compared (first: conv1:input:0" in note
    assert "no golden tensor for them" not in note
    assert cli.main(["compare"] + args + step.rsplit(", ", 1)[1].split()) == 0  # pasted
    assert "accuracy PASSED: 1 tensor meets cosine >= 0.95 (1 ignored)" in capsys.readouterr().out


def test_every_unconverted_tensor_is_named_in_one_ignore_and_none_left_says_so(tmp_path, capsys):
    # a review: the advice named the first tensor only; pasted, the run failed on the next
    args = _project(tmp_path, FRACTAL_Z_C04, ops=("conv1", "conv2"))
    assert cli.main(["compare"] + args) == 1
    step = [line for line in capsys.readouterr().out.splitlines()
            if line.startswith("next step:")][0]
    assert step.endswith("these 2 tensors cannot be compared as the device dumped them (the "
                         "layout is not converted back): to judge the other tensors without "
                         "them, --ignore conv1:input:0 --ignore conv2:input:0")
    assert cli.main(["compare"] + args + step.rsplit("them, ", 1)[1].split()) == 0  # pasted
    assert "accuracy PASSED: 2 tensors meet cosine >= 0.95 (2 ignored)" in capsys.readouterr().out
    assert cli.main(["compare"] + args + ["--ignore", "conv1:output:0", "--ignore",
                                          "conv2:output:0"]) == 1
    assert "and no other tensor is compared: this dump gives no verdict as it is" in (
        capsys.readouterr().out)
