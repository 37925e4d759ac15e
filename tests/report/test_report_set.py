"""``report.report_set`` and ``report.run_index`` without pytest: a set moves into place whole
(into a folder that holds other files of the test too), a killed writer's staging folders go
with its test's next run and no other test's, and a compare.json's run is read from its head."""
import json
import os

from pytest_ascend_accuracy.report.report_set import (
    ReportSet,
    _machine,
    remove_own_partials,
    remove_partials,
)
from pytest_ascend_accuracy.report.run_index import collect, run_of


def _staged(root, name="t.py--test_a"):
    s = ReportSet.begin(root / name)
    s.csv_path.write_text("csv")
    (s.staging / "tensors").mkdir()
    (s.staging / "tensors" / "0001.npy").write_bytes(b"x")
    (s.staging / "compare.json").write_text('{"run": {"id": "r1"}}')
    (s.staging / "report.html").write_text("<html>")
    return s


def test_a_set_is_renamed_into_place_and_nothing_is_left_aside(tmp_path):
    s = _staged(tmp_path)
    assert not s.final.exists() and s.staging.name.startswith(".t.py--test_a.partial-")
    assert s.settle() == tmp_path / "t.py--test_a"
    assert sorted(os.listdir(s.final)) == ["compare.csv", "compare.json", "report.html", "tensors"]
    assert os.listdir(tmp_path) == ["t.py--test_a"]


def test_a_set_joins_a_folder_holding_the_tests_other_pages(tmp_path):
    (tmp_path / "t.py--test_a").mkdir()
    (tmp_path / "t.py--test_a" / "dataset.html").write_text("page")  # written earlier
    s = _staged(tmp_path)
    s.settle()
    assert sorted(os.listdir(s.final)) == ["compare.csv", "compare.json", "dataset.html",
                                           "report.html", "tensors"]
    assert os.listdir(tmp_path) == ["t.py--test_a"] and s.settled


def test_a_set_replaces_another_sets_entries_it_lacks(tmp_path):
    """Two sessions checking one test into one report directory (H85): the later set, a
    passing one without tensors, settled beside the other's failure tensors; the test's
    other pages stay."""
    _staged(tmp_path).settle()  # the other session's failing set
    (tmp_path / "t.py--test_a" / "dataset.html").write_text("page")
    passing = ReportSet.begin(tmp_path / "t.py--test_a")
    (passing.staging / "compare.json").write_text('{"run": {"id": "r2"}}')
    (passing.staging / "report.html").write_text("<html>passed")
    passing.settle()
    assert sorted(os.listdir(passing.final)) == ["compare.json", "dataset.html", "report.html"]
    assert (passing.final / "report.html").read_text() == "<html>passed"
    assert os.listdir(tmp_path) == ["t.py--test_a"]


def test_discard_leaves_nothing_and_a_settled_set_stays(tmp_path):
    s = _staged(tmp_path)
    s.discard()
    assert os.listdir(tmp_path) == []
    kept = _staged(tmp_path)
    kept.settle()
    kept.discard()
    assert os.listdir(tmp_path) == ["t.py--test_a"]


def _dead_pid():
    """The id of a process that has ended (and was reaped)."""
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_killed_writers_staging_goes_with_its_tests_next_run_only(tmp_path):
    dead, here = _dead_pid(), _machine()
    for name in (f".t.py--test_a.partial-{dead}-{here}-0abc1234",
                 f".t.py--test_a-2.partial-{dead}-{here}-ff",
                 f".t.py--test_ab.partial-{dead}-{here}-0abc1234", "t.py--test_a", ".hidden"):
        (tmp_path / name).mkdir()
    remove_partials(tmp_path, "t.py--test_a")
    assert sorted(os.listdir(tmp_path)) == [
        ".hidden", f".t.py--test_ab.partial-{dead}-{here}-0abc1234", "t.py--test_a"]


def test_a_writer_of_another_machine_or_container_is_never_taken_for_dead(tmp_path):
    # a review: a writer of another pid namespace sharing DIR had a pid no process here has,
    # and a session's end removed its staging folder mid-write
    other = f".t.py--test_a.partial-{_dead_pid()}-0123abcd-0abc1234"
    (tmp_path / other).mkdir()
    remove_partials(tmp_path, "t.py--test_a")
    remove_own_partials(tmp_path)
    assert os.listdir(tmp_path) == [other]


def test_a_live_writers_staging_is_never_removed_by_another_tests_setup(tmp_path):
    # a review: test_f[a64]'s slug ends in an all-digit digest, so it read as test_f_a64's
    # slug plus a folder number, and test_f_a64's setup removed the set another worker was
    # writing (its CSV and tensors lost)
    other = ReportSet.begin(tmp_path / "test_c.py--test_f_a64-29627604")  # a live writer
    remove_partials(tmp_path, "test_c.py--test_f_a64")
    assert other.staging.is_dir()


def test_the_session_end_removes_this_process_and_dead_writers_staging(tmp_path):
    mine = ReportSet.begin(tmp_path / "x")
    live = f".y.partial-1-{_machine()}-00000000"  # a live process's (pid 1)
    (tmp_path / live).mkdir()
    (tmp_path / f".z.partial-{_dead_pid()}-{_machine()}-00000000").mkdir()  # a killed worker's
    remove_own_partials(tmp_path)
    assert not mine.staging.exists() and os.listdir(tmp_path) == [live]


def test_interrupts_are_held_whichever_thread_the_kernel_hands_them_to(tmp_path):
    # a review: the signal mask held SIGINT in the main thread only; with any other thread
    # (numpy's BLAS, onnxruntime) the kernel delivered it there and Python raised
    # KeyboardInterrupt inside the block
    import signal
    import threading
    import time

    import pytest

    from pytest_ascend_accuracy.report.report_set import interrupts_held

    stop = threading.Event()
    worker = threading.Thread(target=stop.wait)
    worker.start()
    done = []
    try:
        with pytest.raises(KeyboardInterrupt):
            with interrupts_held():
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.2)
                done.append("block finished")
        assert done == ["block finished"]
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        stop.set()
        worker.join()


def test_the_run_is_read_from_the_head_of_a_large_compare_json(tmp_path):
    rows = [{"op": f"op{k}", "value": k} for k in range(20000)]  # past the head read first
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "compare.json").write_text(json.dumps(
        {"run": {"id": "r1", "nodeid": "t.py::test_a", "passed": False,
                 "first_failing_op": "norm", "note": "x" * 70000}, "rows": rows}, indent=1))
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "compare.json").write_text(json.dumps({"format": "old", "rows": rows}))
    (tmp_path / "c").mkdir()  # no compare.json: a folder of something else
    assert run_of(tmp_path / "a")["first_failing_op"] == "norm"
    assert run_of(tmp_path / "b") is None and run_of(tmp_path / "c") is None
    entries, others = collect(tmp_path, "r1")
    assert [(e["folder"], e["passed"]) for e in entries] == [("a", False)]
    assert others == ["b", "c"]
    assert collect(tmp_path, "r2") == ([], ["a", "b", "c"])


def test_a_sigterm_after_a_ctrl_c_in_the_block_still_ends_the_process():
    # a review: the Ctrl-C was raised first, its KeyboardInterrupt left the SIGTERM undelivered
    import subprocess
    import sys

    code = ("import os, signal\n"
            "from pytest_ascend_accuracy.report.report_set import interrupts_held\n"
            "try:\n"
            "    with interrupts_held():\n"
            "        os.kill(os.getpid(), signal.SIGINT)\n"
            "        os.kill(os.getpid(), signal.SIGTERM)\n"
            "except KeyboardInterrupt:\n"
            "    pass\n"
            "print('still running')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == -15 and "still running" not in done.stdout, done


def test_no_pid_is_signalled_on_windows(monkeypatch):
    # os.kill(pid, 0) there sends a console Ctrl-C event (signal.CTRL_C_EVENT == 0)
    from pytest_ascend_accuracy.report import report_set

    monkeypatch.setattr(report_set.os, "name", "nt")
    monkeypatch.setattr(report_set.os, "kill", lambda *a: (_ for _ in ()).throw(AssertionError))
    assert report_set._dead(_dead_pid(), _machine()) is False


def test_after_an_interrupt_only_the_tests_pytest_reported_are_counted(tmp_path):
    """Under xdist a Ctrl-C lets each worker finish its test, whose folder settles although
    pytest never reports that test: the index counted "7 checks: 5 passed, 2 failed" beside the
    terminal's 6 (H100). Given the reported ids, the others are listed apart, not counted."""
    from pytest_ascend_accuracy.report.run_index import write_run_index

    for name, nodeid, passed in (("a", "t.py::test_a", True), ("b", "t.py::test_b", False)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "compare.json").write_text(json.dumps(
            {"run": {"id": "r1", "nodeid": nodeid, "passed": passed}}))
    write_run_index(tmp_path, {"id": "r1", "interrupted": True}, reported={"t.py::test_a"})
    data = json.loads((tmp_path / "index.json").read_text())
    assert (data["checks"], data["passed"], data["failed"]) == (1, 1, 0)
    assert [e["folder"] for e in data["folders"]] == ["a"]
    assert data["unreported_folders"] == ["b"] and data["other_folders"] == []
    page = (tmp_path / "index.html").read_text()
    assert "1 check of this run: 1 passed, 0 failed" in page
    assert "1 folder of this run whose test pytest never reported" in page
    assert '<a href="b/report.html">b</a>' in page
    write_run_index(tmp_path, {"id": "r1", "interrupted": False})  # not interrupted: all count
    data = json.loads((tmp_path / "index.json").read_text())
    assert data["checks"] == 2 and data["unreported_folders"] == []
