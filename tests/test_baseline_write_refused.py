"""``write_baseline`` (public) refuses a baseline ``read_baseline`` would refuse, naming what is
wrong: it wrote a file without ``soc_version`` and ``atc_args`` when asked, and every later
check failed on that file as unreadable."""
import dataclasses

import pytest

from pytest_ascend_accuracy.baseline.file import (Baseline, InputSpec, OpBaseline,
                                                  ops_from_result, read_baseline)
from pytest_ascend_accuracy.baseline.writing import BaselineRefused, write_baseline
from pytest_ascend_accuracy.baseline.check import check_baseline
from pytest_ascend_accuracy.errors import ConfigError
from test_baseline_helpers import HEADER, SPEC, make_result


def _baseline(**kw):
    return Baseline(**{"environment": HEADER, "inputs": SPEC,
                       "ops": ops_from_result(make_result()), **kw})


def test_environment_keys_missing_are_named_and_nothing_is_written(tmp_path):
    env = {k: v for k, v in HEADER.items() if k not in ("soc_version", "atc_args")}
    path = tmp_path / "default.yaml"
    with pytest.raises(ConfigError) as err:
        write_baseline(path, _baseline(environment=env))
    assert str(err.value) == (f"{path}: environment: missing 'soc_version', 'atc_args'; every "
                              "baseline records backend, toolkit_version, soc_version, atc_args "
                              "(not written)")
    assert not path.exists()


def test_a_misspelled_key_is_named_as_read_baseline_names_it(tmp_path):
    env = dict(HEADER)
    env["backnd"] = env.pop("backend")
    with pytest.raises(ConfigError, match=r"missing 'backend' \(misspelled 'backnd'\?\)"):
        write_baseline(tmp_path / "default.yaml", _baseline(environment=env))


def test_an_existing_file_is_left_as_it_was(tmp_path):
    path = write_baseline(tmp_path / "default.yaml", _baseline())
    before = path.read_bytes()
    with pytest.raises(ConfigError):
        write_baseline(path, _baseline(environment={"backend": "emulator"}))
    assert path.read_bytes() == before
    assert read_baseline(path).environment == HEADER


@pytest.mark.parametrize("change, message", [
    ({"version": 4}, r"baseline version 4 is not one this package reads \(1, 2, 3\); not written"),
    ({"inputs": dataclasses.replace(SPEC, seed=None)},
     r"inputs have no seed and are not stored: .* \(not written\)"),
    ({"ops": (OpBaseline("a", cosine=1.0, rel_l2=0.0, max_abs=0.0),) * 2},
     r"operator 'a' slot 'output:0' is listed twice \(not written\)"),
])
def test_other_files_read_baseline_refuses_are_not_written(tmp_path, change, message):
    path = tmp_path / "default.yaml"
    with pytest.raises(ConfigError, match=message):
        write_baseline(path, _baseline(**change))
    assert not path.exists()


def test_everything_written_reads_back(tmp_path):
    stored = InputSpec(seed=None, tensors=SPEC.tensors, stored=True)
    for b in (_baseline(), _baseline(version=1), _baseline(inputs=stored, ops=()),
              _baseline(environment={**HEADER, "mode": ["fusion=True"]})):
        assert read_baseline(write_baseline(tmp_path / "b.yaml", b)) == b


def _op(**kw):
    return OpBaseline(**{"op": "a", "cosine": 1.0, "rel_l2": 0.0, "max_abs": 0.0, **kw})


@pytest.mark.parametrize("change, message", [
    ({"ops": (_op(op=""),)}, "ops line 1: needs 'op' and 'slot' strings (not written)"),
    ({"ops": (_op(cosine=1.5),)}, "ops line 1: cosine must be within [-1, 1], got 1.5 "
                                  "(not written)"),
    ({"ops": (_op(nan=-1),)}, "ops line 1: nan must be a count, got -1 (not written)"),
    ({"environment": {**HEADER, 7: "x"}}, "environment key 7 is not a string (not written)"),
    ({"environment": {**HEADER, "yes": 1, True: 2}},
     "environment key True is not a string (not written)"),
    ({"info": {None: "m"}}, "info key None is not a string (not written)"),
])
def test_whatever_read_baseline_refuses_is_not_written(tmp_path, change, message):
    """Four cases were listed (above); these were written, then refused by read_baseline
    (mixed key types failed with TypeError '<' not supported): the text rendered is read
    back before anything is written."""
    path = tmp_path / "default.yaml"
    with pytest.raises(ConfigError) as err:
        write_baseline(path, _baseline(**change))
    assert str(err.value) == f"{path}: {message}"
    assert not path.exists()


@pytest.mark.parametrize("key", ["on", "yes", "null", "false", "a b", "x: y", "#c", "é"])
def test_an_environment_or_info_key_yaml_reads_otherwise_is_quoted_and_reads_back(tmp_path,
                                                                                  key):
    """``on: 1`` read as ``True: 1``: a header key ``normalise_environment`` allows was written
    bare, and every later check failed ('environment' must be a mapping of names to values)."""
    b = _baseline(environment={**HEADER, key: 1}, info={key: "m"})
    path = write_baseline(tmp_path / "default.yaml", b)
    assert read_baseline(path) == b
    assert "\n  backend: " in path.read_text()  # plain keys stay bare: the same bytes as before


def test_a_header_key_on_passes_on_the_rerun(tmp_path):
    path = tmp_path / "default.yaml"
    header = {**HEADER, "on": 1}
    assert check_baseline(make_result(), path, header=header, inputs=SPEC).status == "missing"
    assert check_baseline(make_result(), path, header=header, inputs=SPEC).passed


def test_an_op_name_with_a_lone_surrogate_is_refused_not_written(tmp_path):
    """A review's fuzz: written escaped ("\\ud800"), which libyaml refuses to read, so every
    later check said "unreadable"; it is refused at the write now, naming the op."""
    path = tmp_path / "b.yaml"
    bad = Baseline(HEADER, SPEC, (OpBaseline("a\ud800", cosine=1.0, rel_l2=0.0, max_abs=0.0),))
    with pytest.raises(BaselineRefused, match=r"op text 'a\\ud800' holds a lone surrogate "
                                              r".*not written"):
        write_baseline(path, bad)
    assert not path.exists()


def test_numpy_integer_counts_are_written_and_read_back(tmp_path):
    """A review: hand-built lines with numpy counts were refused ('nan must be a number, got
    np.int64(2)'), though they render and read back as the int."""
    import numpy as np

    line = OpBaseline("a", cosine=1.0, rel_l2=0.0, max_abs=0.0, nan=np.int64(2), inf=np.int32(1))
    write_baseline(tmp_path / "b.yaml", Baseline(HEADER, SPEC, (line,)))
    op = read_baseline(tmp_path / "b.yaml").ops[0]
    assert (op.nan, op.inf) == (2, 1)


@pytest.fixture(params=["libyaml", "pure-python"])
def either_loader(request, monkeypatch):
    """The write's read-back under libyaml's loader and under PyYAML's pure-Python one, which
    reads the escape of a lone surrogate that libyaml refuses (a review: the refusal below held
    with libyaml only, so a machine without it wrote files others could not read)."""
    import yaml

    from pytest_ascend_accuracy.baseline import writing

    if request.param == "pure-python":
        monkeypatch.setattr(writing, "fast_safe_loader", lambda module: yaml.SafeLoader)
    elif not hasattr(yaml, "CSafeLoader"):
        pytest.skip("PyYAML without libyaml here")
    return request.param


def test_a_header_value_from_undecodable_bytes_is_refused_not_written(tmp_path, either_loader):
    """A lone surrogate in the environment (judged) is refused, naming it, under either loader;
    a review: yaml's ScannerError escaped the write, then the refusal depended on libyaml."""
    path = tmp_path / "b.yaml"
    with pytest.raises(BaselineRefused, match=r"environment text 'm\\ud800' holds a lone "
                                              r"surrogate .*not written"):
        write_baseline(path, Baseline({**HEADER, "extra": "m\ud800"}, SPEC, ()))
    assert not path.exists()


def test_a_model_name_from_undecodable_bytes_is_written_escaped_in_info(tmp_path, either_loader):
    """``info`` is shown, never judged: a model file whose name is not UTF-8 (``m\\xff.onnx``
    read as ``m\\udcff.onnx``) no longer stops its baseline being written (a review: the plugin
    said "baseline unreadable ... --accuracy-regen rewrites it", and the regen could not)."""
    path = tmp_path / "b.yaml"
    write_baseline(path, Baseline(HEADER, SPEC, (), {"model": "models/m\udcff.onnx"}))
    assert read_baseline(path).info["model"] == "models/m\\udcff.onnx"


def test_a_model_name_from_undecodable_bytes_is_not_noted_as_changed(tmp_path):
    """The file holds the name escaped; the check compared it with the raw name and noted
    "changed since the baseline (not judged): model 'm\\\\udcff' -> 'm\\udcff'" on every run,
    which no regen could clear (a review)."""
    from pytest_ascend_accuracy.baseline.check import check_baseline
    from test_baseline_helpers import make_result

    path, info = tmp_path / "default.yaml", {"model": "models/m\udcff"}
    check_baseline(make_result(), path, header=HEADER, inputs=SPEC, info=info)
    out = check_baseline(make_result(), path, header=HEADER, inputs=SPEC, info=info)
    assert out.passed and "changed since the baseline" not in out.message, out.message


def test_a_refused_baseline_leaves_no_stored_inputs_behind(tmp_path):
    """The stored inputs were written before the baseline was refused (a review): 'not
    written' was not true."""
    import numpy as np

    from pytest_ascend_accuracy.baseline.check import check_baseline
    from pytest_ascend_accuracy.baseline.inputs import input_spec
    from test_baseline_helpers import make_result

    spec = input_spec({"x": np.ones((1, 16), np.float32)}, seed=None, stored=True)
    path = tmp_path / "bl" / "default.yaml"
    with pytest.raises(BaselineRefused, match="holds a lone surrogate"):
        check_baseline(make_result(), path, header={**HEADER, "extra": "cfg_\udcff"},
                       inputs=spec)
    assert not path.parent.exists() or not any(path.parent.iterdir())
