"""A check's compare.json and report.html say what becomes of the actual dump they name: a run
dumped into the test's own folder is removed when the test passes. Before, a passing check's
page named "actual: .../ascend-dumps/dump-3", a folder that was gone after the test (or never
written: a passing run compared as it went), and nothing said so. A dump the test did not make
(one it was handed) gets no such note."""
import json
from pathlib import Path

from conftest import ACCURACY_TESTS
from pytest_ascend_accuracy.plugin.report_folders import OWN_DUMP_FATE

HANDED = '''
from pytest_ascend_accuracy import accuracy
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs


@accuracy(threshold=0.99)
def test_handed(golden_dump, check_accuracy):
    inputs = make_inputs("models/passing_mlp.onnx")
    check_accuracy(golden_dump("models/passing_mlp.onnx", inputs),
                   golden_dump("models/passing_mlp.onnx", inputs))
'''


def _saved(folder):
    return json.loads((folder / "compare.json").read_text(encoding="utf-8"))


def test_the_reports_say_the_tests_own_dump_is_kept_only_if_it_fails(pytester, models_dir):
    pytester.makepyfile(test_acc=ACCURACY_TESTS, test_handed=HANDED)
    pytester.runpytest("-p", "no:cacheprovider", "--accuracy-report=rep").assert_outcomes(
        passed=4, failed=1)
    folders = {_saved(f)["run"]["nodeid"]: f for f in (pytester.path / "rep").iterdir()
               if f.is_dir()}
    for nodeid, folder in folders.items():
        saved = _saved(folder)
        page = (folder / "report.html").read_text(encoding="utf-8")
        root = Path(saved["actual_root"])
        if nodeid == "test_handed.py::test_handed":
            assert "actual_dump" not in saved["run"], nodeid
            assert "dump folder" not in page
            assert root.is_dir()  # the golden's own folder in the cache: it stays
            continue
        assert saved["run"]["actual_dump"] == OWN_DUMP_FATE, nodeid
        assert f"actual: {root} ({OWN_DUMP_FATE.replace(chr(39), '&#x27;')})<br>" in page
        assert root.exists() is (not saved["run"]["passed"]), nodeid  # as the note says
    assert len(folders) == 5
