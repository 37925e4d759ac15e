"""Each diagnosed failure of a test gets its own fix folder: a test whose two subtests failed
wrote both diagnoses to ``<test>/diagnosis/``, the second's files over the first's while the
first failure still named them; and a folder of the cache's, which outlives a session, kept an
earlier run's fix files beside the new atc_args.txt."""
import pytest

pytest.importorskip("_pytest.subtests")  # pytest >= 9: the subtests fixture is pytest's own

TWO_FAILING = '''
from pytest_ascend_accuracy import accuracy


@accuracy(threshold=0.95)
def test_seeds(subtests, ascend_model, golden_dump, check_accuracy, accuracy_inputs):
    for seed in (1, 2):
        with subtests.test(seed=seed):
            inputs = accuracy_inputs("models/overflow.onnx", seed=seed)
            check_accuracy(ascend_model("models/overflow.onnx").run(inputs),
                           golden_dump("models/overflow.onnx", inputs))
'''


def _folders(result):
    """The fix folders the failures name, in order, and their full-diagnosis files."""
    fixes = [line.split("fix files written to ", 1)[1].split("/ (", 1)[0]
             for line in result.outlines if "fix files written to " in line]
    full = [line.split("full diagnosis: ", 1)[1] for line in result.outlines
            if "full diagnosis: " in line]
    return fixes, full


@pytest.mark.parametrize("report", [True, False], ids=["report-dir", "cache"])
def test_two_failing_subtests_get_two_fix_folders_each_as_named(pytester, models_dir, report):
    args = ["-p", "no:cacheprovider", "--accuracy-diagnose"]
    if report:
        args.append("--accuracy-report=rep")
        base = pytester.path / "rep" / "test_two.py--test_seeds"
    else:
        base = pytester.path / ".ascend-accuracy" / "diagnoses" / "test_two.py--test_seeds"
        stale = base / "diagnosis" / "fusion_switch.cfg"  # an earlier run's
        stale.parent.mkdir(parents=True)
        stale.write_text("{}\n")
    pytester.makepyfile(test_two=TWO_FAILING)
    result = pytester.runpytest(*args)
    result.stdout.fnmatch_lines(["*FAILED test_two.py::test_seeds - contains 2 failed subtests"])
    fixes, full = _folders(result)
    assert [pytester.path / f for f in fixes] == [base / "diagnosis", base / "diagnosis-2"], fixes
    assert full == [f"{f}/diagnosis.txt" for f in fixes]
    for folder in fixes:  # as the failure says: atc_args.txt names its files from the folder
        folder = pytester.path / folder  # above it, and every file it names is there
        named = [arg.split("=", 1)[1] for arg in (folder / "atc_args.txt").read_text().split()
                 if "=" in arg and arg.split("=", 1)[1].startswith(folder.name + "/")]
        assert named == [f"{folder.name}/keep_dtype.cfg"], named
        assert all((folder.parent / name).is_file() for name in named)
        assert sorted(p.name for p in folder.iterdir()) == [
            "atc_args.txt", "diagnosis.html", "diagnosis.json", "diagnosis.txt", "keep_dtype.cfg"]
