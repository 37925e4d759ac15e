"""Paths as the plugin prints them: pasteable where pytest ran (``core.locations.shown``)."""
import os
import shlex
import subprocess

from pytest_ascend_accuracy.core.locations import Located, shown


def test_paths_are_shown_relative_to_where_pytest_ran(tmp_path):
    root = tmp_path / "project"
    assert shown(root / "accuracy-baselines" / "m" / "default.yaml", root) == \
        "accuracy-baselines/m/default.yaml"
    assert shown(root / "goldens" / "mlp", root / "tests") == "../goldens/mlp"
    assert shown(root / "a", root / "x" / "y") == "../../a"
    far = root / "a"
    assert shown(far, root / "x" / "y" / "z") == os.path.abspath(far)  # three levels up: absolute
    assert shown(root / "a", None) == os.fspath(root / "a")


def test_the_move_command_works_pasted_into_a_shell(tmp_path):
    """``git mv old new`` failed when new's folder did not exist yet (and on untracked files)."""
    root = tmp_path / "my project"  # a space: the command quotes its paths
    old = root / "goldens" / "mlp"
    old.mkdir(parents=True)
    (old / "a.npy").write_text("x")
    message = Located(old, belongs=root / "tests" / "goldens" / "mlp").message("golden file", root)
    command = message.split("until you move it: ", 1)[1]
    assert command == ("mkdir -p tests/goldens && mv goldens/mlp tests/goldens/mlp")
    subprocess.run(command, shell=True, cwd=root, check=True)
    assert (root / "tests" / "goldens" / "mlp" / "a.npy").is_file() and not old.exists()
    spaced = Located(root / "old dir", belongs=root / "new dir" / "x").message("golden file", root)
    assert spaced.endswith(f"mkdir -p {shlex.quote('new dir')} && mv {shlex.quote('old dir')} "
                           f"{shlex.quote('new dir/x')}")


def test_the_move_command_fills_a_folder_already_at_the_new_place(tmp_path):
    """Another mode's baseline already at the new place: 'mv old new' put the old folder inside
    it (models/m/m/default.yaml) and the next run found no baseline (review helper)."""
    old, new = tmp_path / "bl" / "m", tmp_path / "bl" / "models" / "m"
    old.mkdir(parents=True)
    new.mkdir(parents=True)
    (old / "default.yaml").write_text("old")
    (old / "default.inputs").mkdir()
    (new / "high_precision.yaml").write_text("new")
    command = Located(old, belongs=new).message("the accuracy baselines folder", tmp_path)
    command = command.split("until you move it: ", 1)[1]
    assert command == "mv -n bl/m/* bl/models/m/ && rmdir bl/m"
    subprocess.run(command, shell=True, cwd=tmp_path, check=True)
    assert sorted(p.name for p in new.iterdir()) == ["default.inputs", "default.yaml",
                                                      "high_precision.yaml"]
    assert not old.exists()
