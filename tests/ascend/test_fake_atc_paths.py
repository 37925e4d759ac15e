"""A FAKE behaviour: the fake ``atc`` refuses config-file paths real ATC refuses. GE's
CheckInputPathValid (hicann/ge base/common/util.cc; called for ``--keep_dtype`` by
CheckKeepTypeParamValid and for ``--insert_op_conf`` by CheckInsertOpConfParamValid; the
``--fusion_switch_file`` page documents the same set) lets the resolved path hold only ASCII
letters, digits, ``.``, ``/``, ``_``, ``-`` and Chinese characters. The fake accepted
``--keep_dtype=fix+v1/keep_dtype.cfg`` (``ascend-accuracy diagnose --out "fix+v1"``, a fix-files
trial: "ATC run success"), which real ATC stops at with E10001."""
import pytest

from pytest_ascend_accuracy.testing import fake_atc

REASON = ("Reason: The path can only contain 'a-z' 'A-Z' '0-9' '-' '.' '_' and Chinese "
          "characters.")


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for var in ("FAKE_ATC_FAIL", "FAKE_ATC_HANG", "FAKE_ATC_REJECT", "FAKE_ATC_CALLS",
                "FAKE_ATC_VERSION"):
        monkeypatch.delenv(var, raising=False)


def _files(directory):
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "keep_dtype.cfg").write_text("relu1\n", encoding="utf-8")
    (directory / "fusion_switch.cfg").write_text('{"Switch": {"GraphFusion": {}, '
                                                 '"UBFusion": {}}}', encoding="utf-8")
    (directory / "aipp.cfg").write_text("aipp_op {\n  aipp_mode: static\n}\n", encoding="utf-8")


def _run(capsys, tiny_model, option, path):
    code = fake_atc.main([f"--model={tiny_model}", "--framework=5", "--output=tiny",
                          "--soc_version=Ascend310P3", f"--{option}={path}"])
    return code, capsys.readouterr().out.splitlines()


@pytest.mark.parametrize("option, name", [("keep_dtype", "keep_dtype.cfg"),
                                          ("fusion_switch_file", "fusion_switch.cfg"),
                                          ("insert_op_conf", "aipp.cfg")])
@pytest.mark.parametrize("folder", ["fix+v1", "my fix", "fix(1)"])
def test_a_config_path_real_atc_refuses_is_refused_with_its_e10001(
        capsys, tiny_model, tmp_path, option, name, folder):
    _files(tmp_path / folder)
    code, lines = _run(capsys, tiny_model, option, f"{folder}/{name}")
    assert code == fake_atc.EXIT_FAILED, lines
    assert lines[2] == (f"E10001: Value [{folder}/{name}] for parameter [--{option}] is "
                        f"invalid. {REASON}"), lines


def test_the_resolved_path_counts_and_chinese_characters_pass(capsys, tiny_model, tmp_path,
                                                              monkeypatch):
    """A relative path is resolved first: the working directory's own characters count."""
    _files(tmp_path / "修复_v1")
    code, lines = _run(capsys, tiny_model, "keep_dtype", "修复_v1/keep_dtype.cfg")
    assert code == 0, lines
    _files(tmp_path / "work dir")
    monkeypatch.chdir(tmp_path / "work dir")
    code, lines = _run(capsys, tiny_model, "keep_dtype", "keep_dtype.cfg")
    assert code == fake_atc.EXIT_FAILED and lines[2].endswith(REASON), lines
