"""Toolkit discovery: atc via explicit path / PATH / ASCEND_TOOLKIT_HOME / ASCEND_HOME_PATH and
the version from the installation's version files. Uses FAKE toolkit trees."""
import os
import platform

import pytest

from pytest_ascend_accuracy.backends.ascend.toolkit import (
    find_atc, find_toolkit, parse_version, read_toolkit_version)
from pytest_ascend_accuracy.errors import ConversionError


def make_tree(root, *, atc_sub="bin", info=None, compiler_version=None):
    atc = root / atc_sub / "atc"
    atc.parent.mkdir(parents=True)
    atc.write_text("#!/bin/sh\nexit 0\n")
    atc.chmod(0o755)
    if info:
        path = root / f"{platform.machine()}-linux" / "ascend_toolkit_install.info"
        path.parent.mkdir(parents=True)
        path.write_text(info)
    if compiler_version:
        (root / "compiler").mkdir(exist_ok=True)
        (root / "compiler" / "version.info").write_text(f"Version={compiler_version}\n")
    return atc


def test_path_wins_and_version_comes_from_the_install_info(tmp_path):
    atc = make_tree(tmp_path / "latest", info="package_name=Ascend-cann-toolkit\nversion=7.0.RC1\narch=x\n")
    env = {"PATH": str(atc.parent)}
    tk = find_toolkit(env=env)
    assert tk.atc == atc and tk.home == (tmp_path / "latest").resolve()
    assert tk.version == "7.0.RC1" and tk.version_tuple == (7, 0)
    assert tk.version_file.name == "ascend_toolkit_install.info"


@pytest.mark.parametrize("var", ["ASCEND_TOOLKIT_HOME", "ASCEND_HOME_PATH"])
@pytest.mark.parametrize("sub", ["bin", "compiler/bin", "atc/bin"])
def test_home_variables_and_layouts(tmp_path, var, sub):
    root = tmp_path / "cann"
    atc = make_tree(root, atc_sub=sub, info="version=6.3.RC2\n")
    tk = find_toolkit(env={"PATH": "", var: str(root)})
    assert tk.atc == atc and tk.home == root and tk.version == "6.3.RC2"


def test_version_is_the_install_record_not_a_component_version_file(tmp_path):
    """compiler/version.info holds a component number (7.x inside CANN 8.0): never the CANN
    version; without the documented install record the version is unknown, and said so."""
    root = tmp_path / "latest"
    atc = make_tree(root, compiler_version="7.3.0.1.231")
    tk = find_toolkit(env={"PATH": "", "ASCEND_TOOLKIT_HOME": str(root)})
    assert tk.version is None and "no <arch>-linux/ascend_toolkit_install.info" in tk.describe()
    info = root / f"{platform.machine()}-linux" / "ascend_toolkit_install.info"
    info.parent.mkdir()
    info.write_text('package_name=Ascend-cann-toolkit\ninnerversion=V100R001C18\nversion="8.0.RC2"\n')
    tk = find_toolkit(env={"PATH": str(atc.parent)})
    assert (tk.version, tk.version_file, tk.home) == ("8.0.RC2", info, root.resolve())


def test_explicit_atc_beats_everything_and_must_be_executable(tmp_path):
    atc = make_tree(tmp_path / "a")
    assert find_atc(atc, env={"PATH": ""}) == atc
    assert find_atc(atc.parent, env={"PATH": ""}) == atc
    with pytest.raises(ConversionError, match="not an executable file"):
        find_atc(tmp_path / "nope" / "atc", env={})


def test_the_toolkit_is_the_one_the_atc_that_runs_belongs_to(tmp_path):
    """An old toolkit's set_env.sh sourced (ASCEND_TOOLKIT_HOME) and a newer atc given
    (``AscendBackend(atc=...)``, or first on PATH): the environment's root won, so baselines
    recorded the old toolkit's version for conversions the new atc made, and advice named the
    old toolkit's platform_config (a review)."""
    old = tmp_path / "old"
    make_tree(old, info="version=7.0.RC1\n")
    new_atc = make_tree(tmp_path / "new", info="version=8.0.RC2\n")
    for explicit, path in ((new_atc, ""), (None, str(new_atc.parent))):
        tk = find_toolkit(explicit, env={"PATH": path, "ASCEND_TOOLKIT_HOME": str(old)})
        assert (tk.atc, tk.home, tk.version) == (new_atc, tmp_path / "new", "8.0.RC2")


def test_the_root_is_spelled_as_the_atc_was_reached(tmp_path):
    """``ascend-toolkit/latest`` (a symlink to the version folder, what set_env.sh exports) is
    the root printed, not the folder it resolves to (a review of e786432)."""
    make_tree(tmp_path / "8.0.RC1", info="version=8.0.RC1\n")
    (tmp_path / "latest").symlink_to(tmp_path / "8.0.RC1")
    tk = find_toolkit(tmp_path / "latest" / "bin" / "atc", env={"PATH": ""})
    assert (tk.home, tk.version) == (tmp_path / "latest", "8.0.RC1")


def test_missing_atc_lists_every_place_searched(tmp_path):
    with pytest.raises(ConversionError) as info:
        find_atc(env={"PATH": str(tmp_path), "ASCEND_HOME_PATH": str(tmp_path / "cann")})
    text = str(info.value)
    assert "ATC not found" in text and "PATH" in text and "$ASCEND_TOOLKIT_HOME (unset)" in text
    assert f"$ASCEND_HOME_PATH={tmp_path / 'cann'}" in text and "set_env.sh" in text


def test_version_unknown_without_version_files(tmp_path):
    atc = make_tree(tmp_path / "bare")
    tk = find_toolkit(env={"PATH": str(atc.parent)})
    assert tk.version is None and tk.home is None
    assert read_toolkit_version(tmp_path) == (None, None)


@pytest.mark.parametrize("text, expected", [("8.0.RC2", (8, 0)), ("7.0.0.alpha003", (7, 0, 0)),
                                            ("6.3.RC2.alpha001", (6, 3)), ("9.0.0", (9, 0, 0))])
def test_parse_version(text, expected):
    assert parse_version(text) == expected


def test_parse_version_rejects_non_versions():
    with pytest.raises(ValueError):
        parse_version("RC2")


def test_fake_toolkit_is_found_on_path(fake_toolkit, fake_atc_on_path):
    tk = find_toolkit()
    assert tk.atc == fake_toolkit.atc and tk.version == "8.0.RC2"
    assert os.access(tk.atc, os.X_OK)


@pytest.mark.parametrize("text, expected", [
    ("1.21.0rc1", (1, 21)), ("3.2.1.dev5+g1234", (3, 2, 1)), ("3.8.0", (3, 8, 0)),
    ("1.20.1", (1, 20, 1)), ("RC2", ()), ("", ()),
])
def test_version_numbers_is_the_one_rule_for_every_version(text, expected):
    """core.versions: CANN toolkits, onnxruntime and pytest-xdist are compared by it."""
    from pytest_ascend_accuracy.core.versions import version_numbers

    assert version_numbers(text) == expected
