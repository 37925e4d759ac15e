"""The line after ``dump kept: DIR`` says how long pytest keeps the folder, and each claim holds
when tried: the folder is a test's ``tmp_path``, which pytest removes as its temp folder's
settings say, not as this plugin does (H99: after three more runs the printed folder was gone,
and ``ascend-accuracy compare DIR GOLDEN`` with it). The numbered ``pytest-of-USER/pytest-N``
folder goes when the ``tmp_path_retention_count``-th later session starts, at once under
``tmp_path_retention_policy = none`` (whose printed options, pasted, keep it), and a
``--basetemp`` folder is emptied when the next session starts."""
import re
import shlex
import sys

from conftest import ACCURACY_TESTS

FAILING = ("-p", "no:cacheprovider", "-k", "test_overflow and default")


def _kept(lines):
    """(the kept folder as printed, the line after it) of a failure block."""
    at = next(k for k, line in enumerate(lines) if line.startswith("dump kept: "))
    return lines[at][len("dump kept: "):], lines[at + 1]


def _own_temp_root(pytester, monkeypatch):
    """pytest's temp root for the runs this test starts (numbered folders, as a user's)."""
    root = pytester.path / "temproot"
    root.mkdir()
    monkeypatch.setenv("PYTEST_DEBUG_TEMPROOT", str(root))
    return root


def _pytest(pytester, *args):
    """A pytest process in the project, with no --basetemp (pytester's own runs give one)."""
    return pytester.run(sys.executable, "-m", "pytest", *args)


def test_a_numbered_folder_is_said_to_go_with_the_3rd_later_session_and_it_does(
        pytester, models_dir, monkeypatch):
    """Later sessions prune by their own count (H101: a note that repeated this session's
    ``-o tmp_path_retention_count=10`` was wrong: the default later sessions removed it at 3)."""
    _own_temp_root(pytester, monkeypatch)
    pytester.makepyfile(test_acc=ACCURACY_TESTS)
    run = _pytest(pytester, *FAILING, "-o", "tmp_path_retention_count=10")
    assert run.ret == 1
    folder, note = _kept(run.outlines)
    assert note == ("  (in pytest's temp folder, which later pytest sessions of any project prune "
                    "by their own tmp_path_retention_count: at the default 3, the 3rd one after "
                    "this one that makes a temp folder (tmp_path) removes it; copy it elsewhere "
                    "to compare it later, or run with --basetemp=DIR, a folder no other session "
                    "prunes)")
    pytester.makepyfile(test_no_temp="def test_it():\n    pass\n",
                        test_temp="def test_it(tmp_path):\n    pass\n")
    # another project's sessions, as far as pytest knows; one without tmp_path removes nothing
    for name, left in (("test_no_temp.py", True), ("test_temp.py", True),
                       ("test_temp.py", True), ("test_temp.py", False)):
        run = _pytest(pytester, name, "-p", "no:cacheprovider", "-p", "no:ascend_accuracy")
        assert run.ret == 0
        assert (pytester.path / folder).exists() == left


def test_the_printed_basetemp_keeps_the_folder_through_later_sessions(pytester, models_dir,
                                                                      monkeypatch):
    _own_temp_root(pytester, monkeypatch)
    pytester.makepyfile(test_acc=ACCURACY_TESTS)
    _, note = _kept(_pytest(pytester, *FAILING).outlines)
    option = re.search(r"run with (--basetemp=DIR)", note).group(1).replace("DIR", "kept")
    run = _pytest(pytester, *FAILING, option)
    folder, _ = _kept(run.outlines)
    pytester.makepyfile(test_temp="def test_it(tmp_path):\n    pass\n")
    for _ in range(4):  # another project's sessions, each making a temp folder
        assert _pytest(pytester, "test_temp.py", "-p", "no:cacheprovider",
                       "-p", "no:ascend_accuracy").ret == 0
    assert (pytester.path / folder).is_dir()


def test_policy_none_is_said_to_remove_it_now_and_the_printed_options_keep_it(
        pytester, models_dir, monkeypatch):
    _own_temp_root(pytester, monkeypatch)
    pytester.makepyfile(test_acc=ACCURACY_TESTS)
    run = _pytest(pytester, *FAILING, "-o", "tmp_path_retention_policy=none")
    folder, note = _kept(run.outlines)
    assert "removed when this session ends (tmp_path_retention_policy = none)" in note
    assert not (pytester.path / folder).exists()
    pasted = shlex.split(note.split("run with ", 1)[1].split(" to keep", 1)[0])
    run = _pytest(pytester, *FAILING, "-o", "tmp_path_retention_policy=none", *pasted)
    folder, note = _kept(run.outlines)
    assert "at the default 3, the 3rd one after this one that makes a temp folder" in note
    assert (pytester.path / folder).is_dir()


def test_a_basetemp_folder_is_said_to_go_with_the_next_session_and_it_does(
        pytester, models_dir):
    pytester.makepyfile(test_acc=ACCURACY_TESTS)
    base = pytester.path / "mybase"
    run = pytester.runpytest(*FAILING, f"--basetemp={base}")
    folder, note = _kept(run.outlines)
    assert note == ("  (under --basetemp, which the next pytest session given the same "
                    "--basetemp empties: copy it elsewhere to compare it later)")
    assert (pytester.path / folder).resolve().is_relative_to(base.resolve())
    assert (pytester.path / folder).is_dir()
    pytester.runpytest("-p", "no:cacheprovider", "-k", "test_mlp", f"--basetemp={base}")
    assert not (pytester.path / folder).exists()
