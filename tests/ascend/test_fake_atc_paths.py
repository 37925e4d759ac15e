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


@pytest.mark.parametrize("folder", ["My Projects", "proj$1"])
def test_the_ascend_backend_refuses_a_cache_folder_atc_refuses_before_atc_runs(
        tiny_model, tmp_path, folder, fake_atc_on_path, atc_calls):
    """A project under ``My Projects/`` keeps its cache there: ATC, run in the build folder,
    refused ``--keep_dtype=keep_dtype.cfg`` with E10001 and the error advised another mode. The
    backend says what the folder holds and which option to set, and runs no ATC; a conversion
    naming no config file converts there, and a cache folder ATC accepts converts both."""
    from pytest_ascend_accuracy.backends.ascend.backend import AscendBackend
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.core.modes import keep_dtype
    from pytest_ascend_accuracy.errors import ConfigError

    root = tmp_path / folder / "示例" / ".ascend-accuracy"
    backend = AscendBackend(Cache(root), soc_version="Ascend310P3", progress=None)
    with pytest.raises(ConfigError) as refused:
        backend.convert(tiny_model, keep_dtype(["add1"]))
    bad = " " if " " in folder else "$"
    assert str(refused.value).startswith(
        f"cache directory: {str(root)!r} holds {bad!r}; ATC runs in a build folder there and "
        f"reads this conversion's config files from it (--keep_dtype=keep_dtype.cfg), and ATC "
        f"refuses a model or config file whose resolved path holds any character but"), \
        refused.value
    assert str(refused.value).endswith(
        "give the cache a folder whose path holds none of them (pytest --accuracy-cache-dir=DIR "
        "or ini ascend_accuracy_cache_dir; ascend-accuracy diagnose --cache-dir DIR)")
    assert atc_calls(fake_atc_on_path) == []
    assert backend.convert(tiny_model).path.is_file()
    fine = AscendBackend(Cache(tmp_path / "项目_1" / "cache"), soc_version="Ascend310P3",
                         progress=None)
    assert fine.convert(tiny_model, keep_dtype(["add1"])).path.is_file()


def test_a_config_file_atc_reads_without_the_path_check_converts_there(
        tiny_model, tmp_path, fake_atc_on_path, atc_calls):
    """Only --keep_dtype, --insert_op_conf and --fusion_switch_file have their path checked
    (GE; core.atc_paths.CHECKED_OPTIONS): a --modify_mixlist file in a build folder under ``My
    Projects/`` was refused too (review), though ATC reads it there."""
    from pytest_ascend_accuracy.backends.ascend.backend import AscendBackend
    from pytest_ascend_accuracy.core.cache import Cache

    mix = tmp_path / "mix.json"
    mix.write_text('{"black-list": {"to-add": ["Add"]}}')
    backend = AscendBackend(Cache(tmp_path / "My Projects" / ".ascend-accuracy"),
                            soc_version="Ascend310P3", progress=None)
    assert backend.convert(tiny_model, atc_options={"modify_mixlist": str(mix)}).path.is_file()
    assert "--modify_mixlist=user_modify_mixlist.json" in atc_calls(fake_atc_on_path)[0]["argv"]


def test_a_non_ascii_path_atc_refuses_is_explained_not_blamed_on_the_mode(
        tiny_model, tmp_path, fake_atc_on_path):
    """Non-ASCII characters outside GE's set are left to ATC (older GE lets them through); where
    ATC refuses them, the failure said "this toolkit may not know that option or value: choose
    another mode", even for --model (review). It now names the path rule and what to move."""
    import shutil

    from pytest_ascend_accuracy.backends.ascend.backend import AscendBackend
    from pytest_ascend_accuracy.core.cache import Cache
    from pytest_ascend_accuracy.core.modes import keep_dtype
    from pytest_ascend_accuracy.errors import ConversionError

    backend = AscendBackend(Cache(tmp_path / "josé" / ".ascend-accuracy"),
                            soc_version="Ascend310P3", progress=None)
    with pytest.raises(ConversionError) as refused:
        backend.convert(tiny_model, keep_dtype(["add1"]))
    text = str(refused.value)
    assert "refused the path of --keep_dtype=keep_dtype.cfg: ATC refuses a model or config" in text
    assert "give the cache a folder whose path holds none of them" in text
    assert "choose another mode" not in text
    moved = tmp_path / "josé" / "tiny.onnx"
    shutil.copyfile(tiny_model, moved)
    elsewhere = AscendBackend(Cache(tmp_path / "cache"), soc_version="Ascend310P3", progress=None)
    with pytest.raises(ConversionError) as refused:
        elsewhere.convert(moved)
    text = str(refused.value)
    assert f"refused the path of --model={moved}" in text and "choose another mode" not in text
    assert "copy or move the model (with its external data files, if any) to a folder" in text
