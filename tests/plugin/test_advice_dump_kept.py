"""A failing test says where its device dump was kept, one line in its failure block, relative
to where pytest ran: a YAML trial found the dumps only through compare.json's actual_root
(``--accuracy-report``), and a user needs them to try the ``ascend-accuracy`` command. Pasted
into ``ascend-accuracy compare`` with the test's stored golden, the line's path compares."""
from pathlib import Path

from pytest_ascend_accuracy.cli import main

from conftest import ACCURACY_TESTS


def test_the_failure_names_its_kept_dump_and_compare_reads_it(pytester, models_dir, capsys):
    pytester.makepyfile(test_acc=ACCURACY_TESTS)
    run = pytester.runpytest("-p", "no:cacheprovider", "-k", "test_overflow and default")
    run.assert_outcomes(failed=1)
    lines = run.stdout.lines
    # the failure's own block only: with CI set, pytest repeats its text in the short test summary
    lines = lines[:next((k for k, line in enumerate(lines) if "short test summary" in line),
                        len(lines))]
    kept = [line for line in lines if line.startswith("dump kept: ")]
    assert len(kept) == 1, lines  # one line, right after the report's
    assert lines[lines.index(kept[0]) - 1].startswith("full report: ")
    path = kept[0][len("dump kept: "):]
    assert not Path(path).is_absolute() and (pytester.path / path).is_dir(), path
    goldens = list((pytester.path / ".ascend-accuracy" / "golden").glob("*/*/golden.json"))
    assert len(goldens) == 1, goldens
    capsys.readouterr()
    assert main(["compare", path, str(goldens[0].parent / "npy")]) == 1  # pasted, from pytest's dir
    out = capsys.readouterr().out
    assert out.startswith("accuracy FAILED: ") and "first failure in graph order: norm" in out


def test_a_passing_run_prints_no_dump_line(pytester, models_dir):
    pytester.makepyfile(test_acc=ACCURACY_TESTS)
    run = pytester.runpytest("-p", "no:cacheprovider", "-k", "test_mlp")
    run.assert_outcomes(passed=1)
    assert "dump kept" not in run.stdout.str()
