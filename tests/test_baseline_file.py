"""The baseline file format: exact text, stable bytes, round trips, malformed files, atomic writes."""
import errno
import math
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_ascend_accuracy.baseline import file as bf
from pytest_ascend_accuracy.baseline.env import atc_args_of, baseline_path, normalise_environment
from pytest_ascend_accuracy.baseline.file import (Baseline, BaselineWriteError, InputSpec,
                                                  OpBaseline, TensorSpec, ops_from_result,
                                                  read_baseline, render)
from pytest_ascend_accuracy.baseline.writing import write_baseline
from pytest_ascend_accuracy.errors import ConfigError
from nan_aware import differences
from test_baseline_helpers import HEADER, SPEC, make_result

EXPECTED = '''\
format: "pytest-ascend-accuracy/baseline"
version: 3
environment:
  backend: "emulator"
  toolkit_version: "8.0.RC1"
  soc_version: "Ascend310P3"
  atc_args: ["--precision_mode=force_fp16"]
inputs:
  seed: 0
  input_shape: null
  stored: false
  tensors:
  - {name: "x", dtype: "float32", shape: [1, 16], sha256: "abababababababababababababababababababababababababababababababab"}
ops:
- {op: "conv1", slot: "output:0", cosine: 1.000000, rel_l2: 0.000e+00, max_abs: 0.000e+00, nan: 0, inf: 0}
- {op: "relu1", slot: "output:0", cosine: 0.999037, rel_l2: 4.393e-02, max_abs: 8.414e-02, nan: 0, inf: 0}
- {op: "fc/MatMul", slot: "output:0", cosine: 1.000000, rel_l2: 0.000e+00, max_abs: 0.000e+00, nan: 0, inf: 0}
- {op: "softmax", slot: "output:0", cosine: 1.000000, rel_l2: 0.000e+00, max_abs: 0.000e+00, nan: 2, inf: 0}
'''


def _baseline(result=None, **kw):
    result = result if result is not None else make_result(noise={"relu1": 0.05}, nan={"softmax": 2})
    return Baseline(environment=kw.get("env", HEADER), inputs=kw.get("inputs", SPEC),
                    ops=ops_from_result(result), info=kw.get("info", {}))


def test_exact_text_after_the_comment_block():
    text = render(_baseline())
    comment = [line for line in text.splitlines(True) if line.startswith("#")]
    assert text == "".join(comment) + EXPECTED
    assert "--accuracy-regen" in "".join(comment)


def test_same_metrics_give_the_same_bytes_and_rewrite_is_identical(tmp_path):
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    write_baseline(a, _baseline())
    write_baseline(b, _baseline(make_result(noise={"relu1": 0.05}, nan={"softmax": 2})))
    assert a.read_bytes() == b.read_bytes()
    write_baseline(a, read_baseline(a))
    assert a.read_bytes() == b.read_bytes()


def test_file_holds_no_machine_paths_or_timestamps(tmp_path):
    result = make_result()
    text = render(_baseline(result, info={"model": "mlp", "mode": "default"}))
    assert str(tmp_path) not in text and "/tmp" not in text and "time" not in text.lower()


def test_round_trip_reads_back_what_was_written(tmp_path):
    b = _baseline(info={"model": "mlp", "model_sha256": "00ff"})
    p = write_baseline(tmp_path / "x.yaml", b)
    back = read_baseline(p)
    assert back.environment == dict(HEADER) and back.info == {"model": "mlp", "model_sha256": "00ff"}
    assert back.inputs == SPEC
    assert back.ops == b.ops


def test_uncompared_row_is_a_compared_false_line(tmp_path):
    result = make_result()
    row = result.rows[1]
    import dataclasses
    bad = dataclasses.replace(result, rows=(result.rows[0], dataclasses.replace(row, metrics=None,
                                                                                   reason="x")))
    ops = ops_from_result(bad)
    assert not differences(ops[1], OpBaseline("relu1", compared=False))
    text = render(Baseline(HEADER, SPEC, ops))
    assert '- {op: "relu1", slot: "output:0", compared: false}' in text.splitlines()
    write_baseline(tmp_path / "b.yaml", Baseline(HEADER, SPEC, ops))
    assert not differences(read_baseline(tmp_path / "b.yaml").ops, ops)


_names = st.text(min_size=1, max_size=30)
_floats = st.floats(allow_nan=True, allow_infinity=True, width=64)
#: a cosine is at most 1 in size (or NaN): the reader refuses anything else
_cosines = st.one_of(st.floats(-1.0, 1.0), st.just(float("nan")))


@settings(max_examples=150, deadline=None)
@given(ops=st.lists(st.tuples(_names, st.sampled_from(["output:0", "output:1", "input:0"]),
                              _cosines, _floats, _floats, st.integers(0, 10**9),
                              st.integers(0, 10**9)), max_size=8, unique_by=lambda t: (t[0], t[1])),
       env_value=st.one_of(st.text(max_size=20).filter(lambda s: not bf_abs(s)), st.integers(),
                           st.booleans(), st.none(), st.floats(allow_nan=False)))
def test_round_trip_property(tmp_path_factory, ops, env_value):
    lines = tuple(OpBaseline(n, s, bf.round_cosine(c), bf.round_error(r), bf.round_error(m), a, i)
                  for n, s, c, r, m, a, i in ops)
    env = dict(HEADER, extra=env_value)
    b = Baseline(environment=env, inputs=SPEC, ops=lines)
    text = render(b)
    p = tmp_path_factory.mktemp("rt") / "b.yaml"
    p.write_text(text, encoding="utf-8")
    back = read_baseline(p)
    assert render(back) == text
    assert back.environment == env
    for x, y in zip(back.ops, lines):
        assert (x.op, x.slot, x.nan, x.inf) == (y.op, y.slot, y.nan, y.inf)
        for f in ("cosine", "rel_l2", "max_abs"):
            u, v = getattr(x, f), getattr(y, f)
            assert (math.isnan(u) and math.isnan(v)) or u == v


def bf_abs(s):
    from pytest_ascend_accuracy.baseline.env import looks_like_absolute_path
    return looks_like_absolute_path(s)


@pytest.mark.parametrize("text, problem", [
    ("{ not: yaml", "not valid YAML"),
    ("- a\n- b\n", "not an accuracy baseline"),
    ('format: "something-else"\n', "not an accuracy baseline"),
    ('format: "pytest-ascend-accuracy/baseline"\nversion: 4\n', "version 4 is not supported "
     "(this pytest-ascend-accuracy reads versions 1, 2, 3); a newer pytest-ascend-accuracy "
     "wrote it: upgrade to read it"),
    ('format: "pytest-ascend-accuracy/baseline"\nversion: 1\nenvironment: []\n', "'environment' must be"),
    ('format: "pytest-ascend-accuracy/baseline"\nversion: 1\nenvironment: {}\nops: {}\n', "'ops' must be a list"),
])
def test_malformed_file_names_the_file_and_the_problem(tmp_path, text, problem):
    p = tmp_path / "bad.yaml"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        read_baseline(p)
    assert info.value.where == str(p) and problem in info.value.problem


def _with_ops(tmp_path, ops_lines, inputs="inputs: {seed: 0, tensors: []}"):
    p = tmp_path / "b.yaml"
    p.write_text('format: "pytest-ascend-accuracy/baseline"\nversion: 1\nenvironment: {}\n'
                 f'{inputs}\nops:' + ("".join(f"\n- {line}" for line in ops_lines) or " []")
                 + "\n", encoding="utf-8")
    return p


@pytest.mark.parametrize("line, problem", [
    ('{op: "a", cosine: "high", rel_l2: 0.1, max_abs: 0.1, nan: 0, inf: 0}', "ops line 1: cosine must be a number"),
    ('{op: "a", cosine: 0.9, rel_l2: 0.1, max_abs: 0.1, nan: -1, inf: 0}', "ops line 1: nan must be a count"),
    ('{op: "a", cosine: 0.9, rel_l2: 0.1, max_abs: 0.1, nan: 0}', "ops line 1: inf must be a number"),
    ('{slot: "output:0"}', "ops line 1: needs 'op' and 'slot'"),
    ('"just text"', "ops line 1: expected a mapping"),
    ('{op: "a", compared: maybe}', "compared must be true or false"),
])
def test_malformed_op_line(tmp_path, line, problem):
    with pytest.raises(ConfigError, match=problem):
        read_baseline(_with_ops(tmp_path, [line]))


def test_duplicate_op_line_is_refused(tmp_path):
    line = '{op: "a", slot: "output:0", compared: false}'
    with pytest.raises(ConfigError, match="'a' slot 'output:0' is listed twice"):
        read_baseline(_with_ops(tmp_path, [line, line]))


def test_inputs_without_seed_or_storage_are_refused(tmp_path):
    with pytest.raises(ConfigError, match="random unseeded inputs cannot be reproduced"):
        read_baseline(_with_ops(tmp_path, [], inputs="inputs: {seed: null, tensors: []}"))


def test_non_utf8_file(tmp_path):
    p = tmp_path / "b.yaml"
    p.write_bytes(b"format: \xff\xfe\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        read_baseline(p)


def test_failed_write_keeps_the_old_file_and_leaves_no_temp(tmp_path, monkeypatch):
    p = write_baseline(tmp_path / "b.yaml", _baseline())
    before = p.read_bytes()

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(bf.os, "fsync", full)
    with pytest.raises(BaselineWriteError, match="No space left on device") as info:
        write_baseline(p, _baseline(make_result()))
    assert info.value.path == str(p)
    assert p.read_bytes() == before
    assert sorted(x.name for x in tmp_path.iterdir()) == ["b.yaml"]


def test_environment_refuses_absolute_paths_and_missing_keys():
    with pytest.raises(ConfigError, match="absolute path"):
        normalise_environment(dict(HEADER, atc_args=["--insert_op_conf=/home/me/aipp.cfg"]))
    with pytest.raises(ConfigError, match="missing soc_version"):
        normalise_environment({k: v for k, v in HEADER.items() if k != "soc_version"})
    with pytest.raises(ConfigError, match="must be a string, number"):
        normalise_environment(dict(HEADER, extra={"nested": 1}))
    assert normalise_environment(dict(HEADER, atc_args=("a", "b")))["atc_args"] == ["a", "b"]


def test_atc_args_drop_model_output_log_and_machine_paths():
    argv = ["/usr/local/Ascend/bin/atc", "--model=/home/me/m.onnx", "--framework=5",
            "--output=m", "--soc_version=Ascend310P3", "--precision_mode=force_fp16",
            "--insert_op_conf=/abs/dir/aipp.cfg", "--log=error"]
    assert atc_args_of(argv) == ["--framework=5", "--soc_version=Ascend310P3",
                                 "--precision_mode=force_fp16", "--insert_op_conf=aipp.cfg"]


def test_baseline_path_is_per_model_and_mode_and_file_name_safe(tmp_path):
    from pytest_ascend_accuracy.core.modes import keep_dtype
    assert baseline_path(tmp_path, "mlp", "default") == tmp_path / "mlp" / "default.yaml"
    p = baseline_path(tmp_path, "my model/v2", keep_dtype(["a/b", "c"]))
    assert p.parent == tmp_path / "my_model_v2" and "/" not in p.name and p.suffix == ".yaml"
    long_a = baseline_path(tmp_path, "m", "x" * 150 + "a")
    long_b = baseline_path(tmp_path, "m", "x" * 150 + "b")
    assert long_a != long_b and len(long_a.name) < 110


def test_tensor_spec_dict_form():
    spec = InputSpec(seed=3, tensors=(TensorSpec("x", "int64", (2,), "00"),),
                     input_shape=(("x", (2,)),))
    assert spec.as_dict() == {"seed": 3, "input_shape": {"x": [2]}, "stored": False,
                              "tensors": [{"name": "x", "dtype": "int64", "shape": [2],
                                           "sha256": "00"}]}


def test_reading_survives_a_second_import_of_yaml(tmp_path):
    """Found in the full suite: after pytester's in-process runs restored ``sys.modules``, a
    re-imported ``yaml`` with the cached libyaml extension failed every document ("could not
    determine a constructor for the tag None"). Checked in a child process."""
    import subprocess
    import sys

    p = write_baseline(tmp_path / "b.yaml", _baseline())
    script = (
        "import sys, yaml\n"
        "for k in [k for k in sys.modules if k == 'yaml' or k.startswith('yaml.')]:\n"
        "    del sys.modules[k]\n"
        "from pytest_ascend_accuracy.baseline.file import read_baseline\n"
        f"print(len(read_baseline({str(p)!r}).ops))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "4"


def test_a_baseline_belongs_to_one_model_file_only(tmp_path):
    """A root model.onnx (key model) and sub/model.onnx: the second fell back to the old
    stem-keyed model/default.yaml, which is the first one's, was judged against it, and
    --accuracy-regen overwrote it; 'team a/model' and 'team_a/model' shared one file
    (review helper)."""
    from pytest_ascend_accuracy.baseline.env import key_path, locate_baseline

    (tmp_path / "sub").mkdir()
    for f in ("model.onnx", "sub/model.onnx"):
        (tmp_path / f).write_bytes(b"x")
    root = tmp_path / "accuracy-baselines"
    mine = root / "model" / "default.yaml"
    mine.parent.mkdir(parents=True)
    mine.write_text('format: "pytest-ascend-accuracy/baseline"\ninfo:\n  mode: "default"\n'
                    '  model: "model"\n')
    assert locate_baseline(root, tmp_path / "model.onnx", "default", tmp_path).path == mine
    other = locate_baseline(root, tmp_path / "sub" / "model.onnx", "default", tmp_path)
    assert other.path == root / "sub" / "model" / "default.yaml" and other.belongs is None
    # an old file that records no model, or this one, is still found where it was
    mine.write_text('format: "pytest-ascend-accuracy/baseline"\n')
    moved = locate_baseline(root, tmp_path / "sub" / "model.onnx", "default", tmp_path)
    assert moved.path == mine and moved.belongs == root / "sub" / "model" / "default.yaml"
    assert key_path(root, "team a/model") != key_path(root, "team_a/model")
    assert key_path(root, "team_a/model") == root / "team_a" / "model" / "default.yaml"


@pytest.mark.parametrize("edit, message", [
    (("cosine:", "cosin:"), r"ops line 1: unknown key 'cosin'; closest: 'cosine'"),
    (("slot:", "slott:"), r"ops line 1: unknown key 'slott'; closest: 'slot'"),
    (("stored:", "stord:"), r"inputs: unknown key 'stord'; closest: 'stored'"),
    (("ops:", "opss: []\nops:"), r"baseline: unknown key 'opss'; closest: 'ops'"),
    (("cosine: 0.", "cosine: 1."), r"ops line \d+: cosine must be within \[-1, 1\]"),
    # an environment key every baseline records, misspelled: it read as "rebaseline required:
    # backend None -> 'emulator'", a setup change that never happened
    (("  backend:", "  backnd:"), r"environment: missing 'backend' \(misspelled 'backnd'\?\)"),
    (("  soc_version:", "  #soc_version:"), r"environment: missing 'soc_version'; every"),
])
def test_a_misspelled_or_impossible_baseline_entry_is_an_error_naming_the_closest(
        tmp_path, edit, message):
    """Misspelled keys in a hand-edited baseline were ignored (slott, stord, opss) or refused
    as 'cosine must be a number'; a cosine of 1.5 was accepted (review helper)."""
    from pytest_ascend_accuracy.baseline.file import read_baseline
    from pytest_ascend_accuracy.errors import ConfigError

    path = write_baseline(tmp_path / "b.yaml", _baseline())
    text = path.read_text()
    assert edit[0] in text
    path.write_text(text.replace(edit[0], edit[1], 1))
    with pytest.raises(ConfigError, match=message):
        read_baseline(path)
