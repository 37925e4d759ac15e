"""golden.git_copy: the git command that restores a changed stored golden is offered only for a
copy (the last commit, else the index) that holds every recorded digest and the folder's own
golden.json; none otherwise, with the reason."""
import shutil
import subprocess

import pytest

from pytest_ascend_accuracy.golden.git_copy import restore_command
from pytest_ascend_accuracy.golden.stored_record import file_digests

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(where, *args):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=where,
                   check=True, capture_output=True)


@pytest.fixture
def golden(tmp_path):
    folder = tmp_path / "golden" / "m"
    folder.mkdir(parents=True)
    (folder / "a.npy").write_bytes(b"written")
    (folder / "golden.json").write_text('{"record": 1}\n')
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "golden")
    return folder


def test_the_last_commit_holds_the_recorded_bytes(golden):
    digests = file_digests(golden, ["a.npy"])
    (golden / "a.npy").write_bytes(b"edited!")
    assert restore_command(golden, "golden/m", ["a.npy"], digests) == (
        "git -C golden/m checkout HEAD -- .", "")


def test_a_record_other_than_the_commits_is_not_restored_over(golden):
    """checkout HEAD -- . would put back the commit's golden.json too, not the folder's."""
    digests = file_digests(golden, ["a.npy"])
    (golden / "golden.json").write_text('{"record": 2}\n')
    (golden / "a.npy").write_bytes(b"edited!")
    command, why = restore_command(golden, "golden/m", ["a.npy"], digests)
    assert command is None
    assert why == ("neither git's last commit nor its index holds the bytes golden.json "
                   "records for them")


def test_other_recorded_bytes_than_gits(golden):
    (golden / "a.npy").write_bytes(b"regenerated")
    digests = file_digests(golden, ["a.npy"])  # the record of a golden rewritten, uncommitted
    (golden / "a.npy").write_bytes(b"edited!")
    assert restore_command(golden, "golden/m", ["a.npy"], digests)[0] is None
    git(golden, "add", "a.npy")  # (the edit staged: the index does not hold them either)
    assert restore_command(golden, "golden/m", ["a.npy"], digests)[0] is None


def test_a_digest_of_an_unknown_algorithm_is_no_copy(golden):
    (golden / "a.npy").write_bytes(b"edited!")
    assert restore_command(golden, "g", ["a.npy"], {"a.npy": "md5:0"})[0] is None


def test_without_git_or_a_work_tree(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))  # (a basetemp in a repo)
    assert restore_command(tmp_path, "g", ["a.npy"], {}) == (
        None, "the golden is not in a git work tree")
    monkeypatch.setenv("PATH", str(tmp_path))
    assert restore_command(tmp_path, "g", ["a.npy"], {}) == (None, "git could not be run")
