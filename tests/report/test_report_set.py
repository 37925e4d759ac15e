"""``report.report_set`` and ``report.run_index`` without pytest: a set moves into place whole
(into a folder that holds other files of the test too), a killed writer's staging folders go
with its test's next run and no other test's, and a compare.json's run is read from its head."""
import json
import os

from pytest_ascend_accuracy.report.report_set import (
    ReportSet,
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


def test_discard_leaves_nothing_and_a_settled_set_stays(tmp_path):
    s = _staged(tmp_path)
    s.discard()
    assert os.listdir(tmp_path) == []
    kept = _staged(tmp_path)
    kept.settle()
    kept.discard()
    assert os.listdir(tmp_path) == ["t.py--test_a"]


def test_a_killed_writers_staging_goes_with_its_tests_next_run_only(tmp_path):
    for name in (".t.py--test_a.partial-123-0abc1234", ".t.py--test_a-2.partial-9-ffffffff",
                 ".t.py--test_ab.partial-123-0abc1234", "t.py--test_a", ".hidden"):
        (tmp_path / name).mkdir()
    remove_partials(tmp_path, "t.py--test_a")
    assert sorted(os.listdir(tmp_path)) == [".hidden", ".t.py--test_ab.partial-123-0abc1234",
                                            "t.py--test_a"]


def test_the_session_end_removes_this_process_staging_only(tmp_path):
    mine = ReportSet.begin(tmp_path / "x")
    (tmp_path / ".y.partial-1-00000000").mkdir()  # another process's
    remove_own_partials(tmp_path)
    assert not mine.staging.exists() and os.listdir(tmp_path) == [".y.partial-1-00000000"]


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
