"""Arrays users hand us as files: a header that claims more than the file holds is our error
naming the file at every entry point, never a numpy traceback or a huge allocation."""
import io
import zipfile

import numpy as np
import pytest

from pytest_ascend_accuracy.dump.user_arrays import read_npy, read_npz
from pytest_ascend_accuracy.errors import AscendAccuracyError, DumpFormatError


def _lying_npy_bytes() -> bytes:
    """A valid .npy header declaring 2**40 float32 values, followed by 16 bytes."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<f4", "fortran_order": False,
                                               "shape": (1 << 40,)})
    return buf.getvalue() + b"\0" * 16


@pytest.fixture
def lying_npy(tmp_path):
    p = tmp_path / "x.npy"
    p.write_bytes(_lying_npy_bytes())
    return p


def test_read_npy_refuses_a_header_larger_than_the_file(lying_npy):
    with pytest.raises(DumpFormatError, match=r"x\.npy: truncated \.npy file"):
        read_npy(lying_npy)


def test_read_npy_refuses_pickles(tmp_path):
    p = tmp_path / "o.npy"
    np.save(p, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(DumpFormatError, match="Python objects"):
        read_npy(p)


def test_read_npz_refuses_a_lying_member_and_a_damaged_archive(tmp_path):
    p = tmp_path / "s.npz"
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("x.npy", _lying_npy_bytes())
    with pytest.raises(DumpFormatError, match=r"s\.npz: array 'x' declares shape"):
        read_npz(p)
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(DumpFormatError, match=r"bad\.npz: not a readable \.npz file"):
        read_npz(bad)


def test_every_entry_point_reads_user_arrays_through_the_check(lying_npy, tmp_path, capsys):
    # CLI diagnose --inputs NAME=FILE.npy
    from pytest_ascend_accuracy.cli import main
    from pytest_ascend_accuracy.testing import models

    import onnx

    model = tmp_path / "m.onnx"
    onnx.save(models.overflow_model(), str(model))
    code = main(["diagnose", str(model), "--inputs", f"x={lying_npy}",
                 "--cache-dir", str(tmp_path / "c")])
    assert code == 2 and "x.npy: truncated .npy file" in capsys.readouterr().err
    # AIPP images for step 5
    from pytest_ascend_accuracy.aipp.user_files import load_images

    with pytest.raises(AscendAccuracyError, match=r"x\.npy: truncated"):
        load_images(str(tmp_path))
    # YAML suite inputs given as files
    from pytest_ascend_accuracy.plugin.yaml_suite import InputsSpec

    with pytest.raises(AscendAccuracyError, match=r"x\.npy: truncated"):
        InputsSpec(files=(("x", lying_npy),)).load(None)
