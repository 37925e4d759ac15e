"""A stored golden whose tensor file was re-saved with other values of the same dtype and shape
(a hand edit, a bad merge, another tool's file copied over it) is refused naming the file, before
anything is compared: before, it was compared as the reference, and the test blamed the
device's operator for the golden's change ("accuracy FAILED ... relu2"). Each of the three
fixes the message gives works pasted: restoring the file with git, --accuracy-regen, deleting
golden.json (the files are then compared as they are). A golden whose record predates the
digests (record_version 1) is used as before."""
import json
import shlex
import shutil
import subprocess

import numpy as np
import pytest

from tests.plugin.test_stored_golden_mismatch import project

HEAD = ("ascend-accuracy configuration error: golden/mlp: tensor files changed since the golden "
        "was written (their bytes are not the ones its golden.json records), so they are not the "
        "reference of the model and inputs it names: {name}. ")


@pytest.fixture(scope="module")
def passing_copy(tmp_path_factory):
    """Where ``changed`` keeps the passing project its first call made, for the module's other
    tests: each test ran the same two runs on the same files to get there (the runs write no
    path of their folder into it, and git is asked nothing until a golden is refused)."""
    return tmp_path_factory.mktemp("stored-golden-changed") / "project"


def changed(pytester, passing_copy):
    """A passing project (its golden written, then passed), whose relu2 file the test changes;
    the first call runs it, later ones copy that folder."""
    if passing_copy.is_dir():
        shutil.copytree(passing_copy, pytester.path, dirs_exist_ok=True)
    else:
        project(pytester)
        pytester.runpytest().assert_outcomes(failed=1)  # written (missing)
        pytester.runpytest().assert_outcomes(passed=1)
        shutil.copytree(pytester.path, passing_copy)
    relu = next((pytester.path / "golden" / "mlp").glob("relu2.0.*.npy"))
    return relu


def refused(pytester, relu):
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([HEAD.format(name=relu.name) + "Restore them*"])
    result.stdout.no_fnmatch_line("*accuracy FAILED*")  # no operator blamed for it
    line = next(s for s in result.outlines if ". Restore them" in s)
    return "Restore them" + line.split(". Restore them", 1)[1]


def git(pytester, *args):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
                   cwd=pytester.path, check=True, capture_output=True)


def printed_command(fixes):
    return fixes.split("Restore them (", 1)[1].split("), or run the test again", 1)[0]


needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@needs_git
def test_restoring_the_file_with_the_printed_git_command_passes(pytester, models_dir,
                                                                passing_copy):
    relu = changed(pytester, passing_copy)
    git(pytester, "init", "-q")
    git(pytester, "add", "golden")
    git(pytester, "commit", "-q", "-m", "golden")
    np.save(relu, -np.load(relu))
    git(pytester, "add", "-A")  # staged too (a resolved merge): the index holds the change
    command = printed_command(refused(pytester, relu))
    assert command == f"git -C golden/mlp checkout HEAD -- {relu.name}"
    subprocess.run(command, shell=True, cwd=pytester.path, check=True)
    pytester.runpytest().assert_outcomes(passed=1)
    # pytest run from a folder above the checkout: the path it prints is relative to there
    np.save(relu, -np.load(relu))
    from pytest_ascend_accuracy.golden.stored_record_check import changed_problem

    above = pytester.path.parent
    digests = json.loads((relu.parent / "golden.json").read_text())["digests"]
    _, fix = changed_problem([relu.name], f"{pytester.path.name}/golden/mlp", relu.parent, digests)
    subprocess.run(printed_command(fix()), shell=True, cwd=above, check=True)
    pytester.runpytest().assert_outcomes(passed=1)


@needs_git
def test_a_golden_staged_but_never_committed_is_restored_from_the_index(pytester, models_dir,
                                                                        passing_copy):
    """No HEAD: ``checkout HEAD`` failed with "invalid reference: HEAD"; what git add staged
    holds the bytes, and restoring from there passes."""
    relu = changed(pytester, passing_copy)
    git(pytester, "init", "-q")
    git(pytester, "add", "golden")
    np.save(relu, -np.load(relu))
    command = printed_command(refused(pytester, relu))
    assert command == f"git -C golden/mlp checkout -- {relu.name}"
    subprocess.run(command, shell=True, cwd=pytester.path, check=True)
    pytester.runpytest().assert_outcomes(passed=1)


@needs_git
def test_no_git_command_where_git_holds_other_bytes(pytester, models_dir, monkeypatch,
                                                    passing_copy):
    """The change committed (or a golden outside git): no git command restores the recorded
    bytes, so none is printed; the other two fixes stay."""
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(pytester.path.parent))  # outside any repo
    relu = changed(pytester, passing_copy)
    np.save(relu, -np.load(relu))
    fixes = refused(pytester, relu)
    assert fixes.startswith("Restore them from a copy of the golden as it was written (no git "
                            "command is offered: the golden is not in a git work tree (git: "
                            "fatal: not a git repository")
    git(pytester, "init", "-q")
    git(pytester, "add", "golden")
    git(pytester, "commit", "-q", "-m", "the changed file committed")
    fixes = refused(pytester, relu)
    assert fixes.startswith("Restore them from a copy of the golden as it was written (no git "
                            "command is offered: neither git's last commit nor its index "
                            "holds the bytes golden.json records for them), or run")
    assert "git -C" not in fixes


def test_regen_rewrites_it_and_the_next_run_passes(pytester, models_dir, monkeypatch,
                                                   passing_copy):
    relu = changed(pytester, passing_copy)
    np.save(relu, np.load(relu) * 1.5)  # same dtype, shape and size
    fixes = refused(pytester, relu)
    assert ", or run the test again with --accuracy-regen to rewrite the golden, " in fixes
    from pytest_ascend_accuracy.golden import git_copy

    asked = []  # the refusal's git advice is not made for a rewrite (git ran for nothing)
    monkeypatch.setattr(git_copy, "restore_command", lambda *a: asked.append(a) or (None, ""))
    regen = pytester.runpytest("--accuracy-regen")
    assert asked == []
    regen.assert_outcomes(failed=1)
    regen.stdout.fnmatch_lines([f"*{relu.name}; rewrote it (--accuracy-regen): the test fails "
                                f"this time, run it again to compare against the new golden",
                                "  golden/mlp: rewritten (--accuracy-regen: tensor files changed "
                                "since it was written)"])
    pytester.runpytest().assert_outcomes(passed=1)


def test_deleting_the_record_compares_the_files_as_they_are(pytester, models_dir, passing_copy):
    relu = changed(pytester, passing_copy)
    np.save(relu, -np.load(relu))
    fixes = refused(pytester, relu)
    command = fixes.split(", or delete ", 1)[1].split(" to compare against the files", 1)[0]
    assert command == "golden/mlp/golden.json"
    subprocess.run(f"rm {command}", shell=True, cwd=pytester.path, check=True)
    compared = pytester.runpytest()  # the negated values are the reference now: relu2 blamed
    compared.assert_outcomes(failed=1)
    compared.stdout.fnmatch_lines(["accuracy FAILED: *"])


def test_a_record_without_digests_is_used_as_before(pytester, models_dir, passing_copy):
    """A golden written before the digests (record_version 1) is checked as it was then."""
    relu = changed(pytester, passing_copy)
    record = pytester.path / "golden" / "mlp" / "golden.json"
    old = json.loads(record.read_text())
    del old["digests"]
    record.write_text(json.dumps(dict(old, record_version=1)))
    pytester.runpytest().assert_outcomes(passed=1)
    np.save(relu, -np.load(relu))  # (unchecked, as every version-1 golden: compared)
    pytester.runpytest().stdout.fnmatch_lines(["accuracy FAILED: *"])


@needs_git
def test_the_message_quotes_a_golden_path_for_the_shell(tmp_path):
    from pytest_ascend_accuracy.golden.stored_record import file_digests
    from pytest_ascend_accuracy.golden.stored_record_check import changed_problem

    folder = tmp_path / "my goldens" / "mlp"
    folder.mkdir(parents=True)
    (folder / "a.0.1.npy").write_bytes(b"golden")
    digests = file_digests(folder, ["a.0.1.npy"])
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "add", "."], cwd=tmp_path, check=True)
    (folder / "a.0.1.npy").write_bytes(b"edited")
    head, fix = changed_problem(["a.0.1.npy"], "my goldens/mlp", folder, digests)
    fix = fix()
    assert head.endswith(": a.0.1.npy")
    assert shlex.split(printed_command(fix)) == [
        "git", "-C", "my goldens/mlp", "checkout", "--", "a.0.1.npy"]
    assert "delete 'my goldens/mlp/golden.json' to compare" in fix
    subprocess.run(printed_command(fix), shell=True, cwd=tmp_path, check=True)
    assert (folder / "a.0.1.npy").read_bytes() == b"golden"


@needs_git
def test_a_missing_or_dtype_changed_file_is_restored_with_the_printed_git_command(
        pytester, models_dir, passing_copy):
    """"Restore them" and "restore the files" named no command, though git held the files."""
    relu = changed(pytester, passing_copy)
    git(pytester, "init", "-q")
    git(pytester, "add", "golden")
    git(pytester, "commit", "-q", "-m", "golden")
    kept = relu.read_bytes()
    relu.unlink()
    _paste_restore(pytester, relu, "lists are missing: ", "Restore them (",
                   "), or run the test again")
    np.save(relu, np.load(relu).astype(np.float16))
    _paste_restore(pytester, relu, "re-saved in another dtype", "restore the files (",
                   "), or rewrite the golden")
    assert relu.read_bytes() == kept


def _paste_restore(pytester, relu, marker, before, after):
    """The refusal's git command, between ``before`` and ``after`` on the line holding
    ``marker``: it names the file, and pasted it restores it (the next run passes)."""
    refused = pytester.runpytest()
    refused.assert_outcomes(failed=1)
    line = next(s for s in refused.outlines if marker in s)
    command = line.split(before, 1)[1].split(after, 1)[0]
    assert command == f"git -C golden/mlp checkout HEAD -- {relu.name}"
    subprocess.run(command, shell=True, cwd=pytester.path, check=True)
    pytester.runpytest().assert_outcomes(passed=1)
