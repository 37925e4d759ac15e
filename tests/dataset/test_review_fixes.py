"""Found reviewing issue 14 as a user: arguments that only failed (or silently did nothing)
after every sample ran, and labels truncated to a class index."""
from __future__ import annotations

import pytest

from pytest_ascend_accuracy.cli import main
from pytest_ascend_accuracy.dataset import check_dataset
from pytest_ascend_accuracy.errors import ConfigError

from .conftest import spiky_samples


def test_an_impossible_threshold_fails_before_any_sample_runs(device, spiky):
    """It used to surface only when a failing check traced its first flipped sample, as a note
    ('could not dump and compare it: ...') under a failure that still counted as accuracy."""
    samples, labels = spiky_samples()
    ran = []
    om = device(spiky)
    outputs = om.outputs
    om.outputs = lambda inputs: ran.append(1) or outputs(inputs)
    with pytest.raises(ConfigError, match=r"threshold must lie in \[-1, 1\], got 2"):
        check_dataset(om, samples, labels=labels, threshold=2.0)
    assert ran == []


def test_a_per_op_entry_naming_no_op_is_an_error_naming_the_closest(device, spiky):
    """A typo in @accuracy(per_op=...) judged nothing on the traced sample, silently."""
    samples, labels = spiky_samples()
    with pytest.raises(ConfigError, match=r"amplify3.*amplify2"):
        check_dataset(device(spiky), samples, labels=labels, per_op={"amplify3": 0.5})


@pytest.mark.parametrize("label", [3.7, "three"])
def test_a_label_that_is_no_class_index_is_refused(device, spiky, label):
    """3.7 was read as class 3."""
    samples, labels = spiky_samples(3, spiked=())
    with pytest.raises(ConfigError, match=r"label of sample '1' is .*, not a class index"):
        check_dataset(device(spiky, "high_precision"), samples, labels=[labels[0], label, 0])


def test_integral_labels_of_any_type_are_class_indexes(device, spiky):
    import numpy as np

    samples, labels = spiky_samples(3, spiked=())
    given = [float(labels[0]), np.int64(labels[1]), str(labels[2])]
    assert check_dataset(device(spiky, "high_precision"), samples, labels=given).device == 1.0


def test_cli_checks_its_arguments_before_converting_the_model(tmp_path, capsys):
    """A bad --metric, --threshold or SAMPLES was reported only after the model converted (a
    dynamic model first asked for --input-shape, hiding the real mistake)."""
    import onnx

    from .conftest import spiky_model

    model = tmp_path / "dyn.onnx"
    onnx.save(spiky_model(dynamic_batch=True), str(model))
    cache = ["--cache-dir", str(tmp_path / "cache")]
    for args, message in (([str(tmp_path), "--metric", "top2"], "unknown metric 'top2'"),
                          ([str(tmp_path / "nope"), "--metric", "agreement"], "nope' not found"),
                          ([str(tmp_path), "--metric", "agreement", "--threshold", "2"],
                           "threshold must lie in [-1, 1]")):
        assert main(["dataset", str(model)] + args + cache) == 2
        err = capsys.readouterr().err
        assert message in err and "input_shape" not in err and "Traceback" not in err


def test_no_temporary_dumps_are_left_behind(spiky, tmp_path, monkeypatch, capsys):
    """Each failing `ascend-accuracy dataset` left its traced sample's dump directory in /tmp,
    and each library check without a cache its golden too (hundreds after a few test runs)."""
    import tempfile

    import numpy as np

    from pytest_ascend_accuracy.backends.emulator import EmulatorBackend
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.dataset import DatasetFailure, load_device_model

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    samples, labels = spiky_samples()
    folder = tmp_path / "samples"
    folder.mkdir()
    for i, s in enumerate(samples):
        np.savez(folder / f"{i:03d}.npz", **s)
    assert main(["dataset", str(spiky), str(folder), "--metric", "agreement",
                 "--cache-dir", str(tmp_path / "cache")]) == 1
    assert "first operator below the threshold: amplify2" in capsys.readouterr().out
    assert sorted(p.name for p in scratch.iterdir()) == []
    om = load_device_model(EmulatorBackend(Cache(tmp_path / "cache")), spiky)
    with pytest.raises(DatasetFailure, match="amplify2"):
        check_dataset(om, samples, labels=labels)  # no cache: the golden goes to a temp dir
    assert [p.name for p in scratch.iterdir()] == [om.dump_root.name]  # the om's own, until:
    om.close()
    assert list(scratch.iterdir()) == []


def test_a_truncated_or_corrupt_npz_sample_is_a_format_error_naming_it(device, spiky, tmp_path):
    """A truncated .npz (zipfile.BadZipFile) or one with corrupt deflate data (zlib.error)
    escaped as a traceback: only OSError/ValueError/EOFError were turned into ours."""
    import zipfile

    import numpy as np

    from pytest_ascend_accuracy.errors import DumpFormatError

    samples, _ = spiky_samples(1, spiked=())
    good = tmp_path / "good.npz"
    np.savez_compressed(good, x=np.random.default_rng(0).random((1, 8), dtype=np.float32) * 99)
    raw = good.read_bytes()
    info = zipfile.ZipFile(good).infolist()[0]
    start = info.header_offset + 30 + len(info.filename)
    corrupt = bytearray(raw)
    for k in range(start + 5, start + info.compress_size - 2):
        corrupt[k] ^= 0x5A
    om = device(spiky, "high_precision")
    for name, data in (("truncated", raw[:len(raw) // 2]), ("corrupt", bytes(corrupt))):
        folder = tmp_path / name
        folder.mkdir()
        (folder / f"{name}.npz").write_bytes(data)
        with pytest.raises(DumpFormatError, match=rf"{name}\.npz: not a readable .npz sample"):
            check_dataset(om, folder, metric="agreement")


def test_labels_json_nested_past_the_recursion_limit_is_a_config_error(spiky, tmp_path, capsys):
    """json's RecursionError is no ValueError: it escaped as a traceback (CLI and YAML)."""
    from pytest_ascend_accuracy.plugin.dataset_check import yaml_dataset

    deep = tmp_path / "labels.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    (tmp_path / "samples").mkdir()
    assert main(["dataset", str(spiky), str(tmp_path / "samples"), "--labels", str(deep)]) == 2
    assert "labels.json: cannot read labels as JSON: maximum recursion depth" in \
        capsys.readouterr().err
    with pytest.raises(ConfigError, match=r"models\[0\].dataset.labels: \S*labels.json: "
                                          r"cannot read .*recursion"):
        yaml_dataset({"samples": "samples", "labels": "labels.json"}, tmp_path,
                     "models[0].dataset")


@pytest.mark.parametrize("shape, problem", [
    ((1 << 40,), r"array 'x' declares shape \[1099511627776\] of float32 \(4,398,046,511,104 "
                 r"bytes\) but its member holds 64"),
    ((2, 8), r"array 'x' declares shape \[2, 8\] of float32 \(64 bytes\) but its member holds 32"),
])
def test_an_npz_array_larger_than_its_member_is_refused_before_numpy_allocates_it(
        device, spiky, tmp_path, shape, problem):
    """D1 class on issue 14's samples: a lying header made numpy allocate 4 TiB (MemoryError,
    a traceback) or read past its member."""
    import struct
    import zipfile

    from pytest_ascend_accuracy.errors import DumpFormatError

    header = "{'descr': '<f4', 'fortran_order': False, 'shape': %r, }" % (shape,)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    member = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode()
    folder = tmp_path / "samples"
    folder.mkdir()
    with zipfile.ZipFile(folder / "a.npz", "w") as archive:
        archive.writestr("x.npy", member + b"\0" * (64 if shape[0] > 2 else 32))
    with pytest.raises(DumpFormatError, match=problem):
        check_dataset(device(spiky, "high_precision"), folder, metric="agreement")


def test_a_labels_npy_larger_than_its_file_is_refused_before_numpy_allocates_it(
        spiky, tmp_path, capsys):
    """The CLI's --labels FILE.npy (and a YAML item's labels:) went straight to np.load: a
    header declaring 2**40 labels raised MemoryError (8 TiB), a traceback."""
    import struct

    from pytest_ascend_accuracy.plugin.dataset_check import yaml_dataset

    header = "{'descr': '<i8', 'fortran_order': False, 'shape': (1099511627776,), }"
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    labels = tmp_path / "labels.npy"
    labels.write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode()
                       + b"\0" * 64)
    (tmp_path / "samples").mkdir()
    assert main(["dataset", str(spiky), str(tmp_path / "samples"), "--labels", str(labels)]) == 2
    assert "labels.npy: truncated .npy file: header and shape [1099511627776]" in \
        capsys.readouterr().err
    with pytest.raises(ConfigError, match=r"models\[0\]\.dataset\.labels: .*truncated .npy"):
        yaml_dataset({"samples": "samples", "labels": "labels.npy"}, tmp_path, "models[0].dataset")
