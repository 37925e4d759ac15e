"""The summary's lines about regenerated files say what was done to them (a CI trial):
``--accuracy-regen`` of an unreadable baseline listed it as "baseline unreadable" under
"1 baseline file written", and a golden regenerated with identical bytes (left untouched) as
"rewritten" (that one: ``test_golden_cycle``)."""
from test_baseline_option import BASELINE, BASELINE_TEST


def test_an_unreadable_baseline_regenerated_is_listed_as_rewritten(pytester, models_dir):
    pytester.makepyfile(test_bl=BASELINE_TEST)
    pytester.runpytest("-q").assert_outcomes(failed=1)  # written
    (pytester.path / BASELINE).write_text("")
    run = pytester.runpytest("-q", "--accuracy-regen")
    run.assert_outcomes(failed=1)
    run.stdout.fnmatch_lines([
        "1 baseline file written:",
        f"  {BASELINE}: baseline rewritten (--accuracy-regen: it could not be read; the test "
        "still fails)"])
    run.stdout.no_fnmatch_line(f"  {BASELINE}: baseline unreadable")
    assert (pytester.path / BASELINE).stat().st_size > 0


def test_a_regen_after_failure_with_the_same_bytes_says_so(pytester, models_dir):
    """A test failing against an up-to-date golden under ``--accuracy-regen``: its golden comes
    out byte for byte the same, is left as it was, and is not called "rewrote"."""
    from conftest import STORED_GOLDEN_TEST

    pytester.makepyfile(test_stored=STORED_GOLDEN_TEST.replace("threshold=0.99", "threshold=1.0"))
    pytester.runpytest("-q").assert_outcomes(failed=1)  # written (missing)
    inode = (pytester.path / "golden" / "mlp").stat().st_ino
    run = pytester.runpytest("-q", "--accuracy-regen")
    run.assert_outcomes(failed=1)
    run.stdout.fnmatch_lines([
        "*regenerated golden file golden/mlp (--accuracy-regen): the same bytes, left as it was; "
        "the test fails against an up-to-date golden*",
        "1 golden file regenerated with the bytes already there (not written):",
        "  golden/mlp: unchanged (--accuracy-regen, test failed: regenerated the same bytes, "
        "left as it was)"])
    run.stdout.no_fnmatch_line("*rewrote golden file*")
    assert (pytester.path / "golden" / "mlp").stat().st_ino == inode
