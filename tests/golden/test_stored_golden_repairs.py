"""What a pytest user sees when a stored golden cannot be used or written: a half-deleted old
copy is never put back, a full disk or a read-only folder is an error naming the golden, and an
unreadable ``golden.json`` or tensor file is rewritten by ``--accuracy-regen`` (review findings
1-4; each failed on the code before the fix)."""
import os

import pytest


def _files(golden):
    return {p.name: p.read_bytes() for p in sorted(golden.iterdir())}


def test_a_half_deleted_old_copy_is_removed_not_restored(pytester, stored_project):
    """A rewrite killed while it deleted the old copy left ``.mlp.old-*`` with some of its
    files; once the golden was deleted, recovery installed that part as the golden and the test
    compared against it ("recovered the previous golden ... from .mlp.old-...")."""
    golden = stored_project
    old = golden.parent / ".mlp.old-999999-1796459358614919748-deadbeef"
    old.mkdir()
    for p in sorted(golden.glob("*.npy"))[:2]:
        (old / p.name).write_bytes(p.read_bytes())
    for p in golden.iterdir():
        p.unlink()
    golden.rmdir()
    run = pytester.runpytest()
    run.assert_outcomes(failed=1)
    run.stdout.fnmatch_lines([
        "golden file golden/mlp did not exist: wrote it from passing_mlp (onnxruntime fp32).",
        "*golden/mlp: removed .mlp.old-999999-1796459358614919748-deadbeef without restoring it "
        "(an older golden a rewrite had replaced, left while it was being deleted*; written "
        "(missing)"])  # one line a file (d883e6f)
    run.stdout.no_fnmatch_line("*recovered the previous golden*")
    assert sorted(p.name for p in golden.parent.iterdir()) == ["mlp"]
    pytester.runpytest().assert_outcomes(passed=1)


@pytest.mark.parametrize("code, words", [(28, "No space left on device"),
                                         (30, "Read-only file system")])
def test_a_golden_that_cannot_be_written_is_an_error_naming_it(pytester, stored_project, code,
                                                               words):
    """A full disk gave a 59-line traceback ending in ``OSError: [Errno 28]`` that named no
    golden; a read-only folder an ``OSError`` naming only a hidden temp path. The inner
    conftest fails the golden's first file write the way the file system does."""
    golden = stored_project
    before = _files(golden)
    pytester.makeconftest(f"""
import os
from pytest_ascend_accuracy.dump import npy_writer
real = npy_writer.NpyDumpWriter._save

def _save(self, name, array, ts):
    if self.directory.name.startswith(".mlp.tmp-"):  # the stored golden's, not the cache's
        raise OSError({code}, os.strerror({code}), os.fspath(self.directory / name))
    return real(self, name, array, ts)

def pytest_configure(config):
    npy_writer.NpyDumpWriter._save = _save

def pytest_unconfigure(config):
    npy_writer.NpyDumpWriter._save = real
""")
    run = pytester.runpytest("--accuracy-regen-all")
    run.assert_outcomes(failed=1)
    run.stdout.fnmatch_lines([f"ascend-accuracy GoldenWriteError: golden/mlp: cannot write stored "
                              f"golden: {words}; the golden in place is unchanged"])
    for bad in ("*Traceback*", "*OSError: [[]Errno*", "*.mlp.tmp-*"):
        run.stdout.no_fnmatch_line(bad)
    assert _files(golden) == before
    assert sorted(p.name for p in golden.parent.iterdir()) == ["mlp"]


@pytest.mark.parametrize("damage", ["record", "tensor"])
def test_accuracy_regen_rewrites_an_unreadable_stored_golden(pytester, stored_project, damage):
    """An unreadable ``golden.json`` or a cut tensor file failed the test before anything was
    compared, with the advice "rewrite the golden with --accuracy-regen", which never did: the
    same error came back on every run. The advice is followed here as printed."""
    golden = stored_project
    if damage == "record":
        bad = golden / "golden.json"
        bad.write_text("{broken\n")
    else:
        bad = sorted(golden.glob("*.npy"))[0]
        os.truncate(bad, 100)
    shown = f"golden/mlp/{bad.name}"
    refused = pytester.runpytest()
    refused.assert_outcomes(failed=1)
    refused.stdout.fnmatch_lines([
        f"ascend-accuracy StoredGoldenUnreadable: {shown}: *",
        "Fix: run the test again with --accuracy-regen to rewrite the stored golden golden/mlp "
        "from this test's model and inputs (then check it in)*"])
    refused.stdout.no_fnmatch_line(f"*{pytester.path}/golden*")  # relative to where pytest ran
    if damage == "record":  # the other way out: the tensors are used unchecked, as before records
        refused.stdout.fnmatch_lines(["*, or delete golden/mlp/golden.json to use the golden's "
                                      "tensors without checking which model and inputs they "
                                      "come from"])
    regen = pytester.runpytest("--accuracy-regen")
    regen.assert_outcomes(failed=1)
    regen.stdout.fnmatch_lines([
        "rewrote the stored golden golden/mlp from this test's model and inputs "
        "(--accuracy-regen)*",
        "*golden/mlp: rewritten (--accuracy-regen: a file of it could not be read)"])
    pytester.runpytest().assert_outcomes(passed=1)
