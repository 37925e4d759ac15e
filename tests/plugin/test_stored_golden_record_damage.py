"""What a user sees of a stored golden whose ``golden.json`` is empty, partial or hand-edited,
or whose folder holds a tensor file the record does not list (a CI-user trial: a
``golden.json`` of ``{}`` was accepted and the test passed as if the golden had no record, so
a golden of another model or other inputs was compared): the test fails before comparing,
naming the file and the problem, and each printed way out works pasted."""
import json
import shlex
import subprocess

from conftest import STORED_GOLDEN_TEST as TEST

SHOWN = "golden/mlp/golden.json"


def written(pytester):
    pytester.makepyfile(test_stored=TEST)
    pytester.runpytest().assert_outcomes(failed=1)  # written (missing)
    golden = pytester.path / "golden" / "mlp"
    return golden, json.loads((golden / "golden.json").read_text())


def test_an_empty_record_fails_the_test_and_regen_on_the_test_id_rewrites_it(
        pytester, models_dir):
    golden, record = written(pytester)
    (golden / "golden.json").write_text("{}")
    refused = pytester.runpytest()
    refused.assert_outcomes(failed=1)  # the old code: 1 passed
    refused.stdout.fnmatch_lines([
        f"ascend-accuracy StoredGoldenUnreadable: {SHOWN}: stored golden record not as this "
        "package writes it (edited by hand, or damaged?), so which model and inputs the golden "
        "comes from cannot be checked: missing record_version, golden_format, written_by, model, "
        "model_sha256, inputs_digest, input_shape, inputs_stored, tensors, digests (every "
        "golden.json this package writes has them)",
        "Fix: run the test again with --accuracy-regen to rewrite the stored golden golden/mlp "
        f"from this test's model and inputs (then check it in), or delete {SHOWN} to use the "
        "golden's tensors without checking which model and inputs they come from"])
    refused.stdout.no_fnmatch_line("*accuracy FAILED*")  # nothing compared
    assert (golden / "golden.json").read_text() == "{}"  # nothing rewritten unasked
    regen = pytester.runpytest("test_stored.py::test_stored", "--accuracy-regen")
    regen.assert_outcomes(failed=1)
    regen.stdout.fnmatch_lines([
        "*golden/mlp: rewritten (--accuracy-regen: its golden.json was not as this package "
        "writes it)"])
    assert json.loads((golden / "golden.json").read_text()) == record
    pytester.runpytest().assert_outcomes(passed=1)


def test_a_partial_record_naming_other_inputs_is_refused(pytester, models_dir):
    """Without model_sha256 the identity check was skipped: a record naming other inputs went
    unnoticed and the test passed."""
    golden, record = written(pytester)
    record["inputs_digest"] = "xxh3_128:" + "0" * 32  # written from other inputs
    del record["model_sha256"]
    (golden / "golden.json").write_text(json.dumps(record))
    refused = pytester.runpytest()
    refused.assert_outcomes(failed=1)  # the old code: 1 passed
    refused.stdout.fnmatch_lines([f"*{SHOWN}: stored golden record not as this package writes it"
                                  "*: missing model_sha256 (every golden.json this package "
                                  "writes has it)"])
    refused.stdout.no_fnmatch_line("*accuracy FAILED*")


def test_deleting_the_record_as_advised_uses_the_tensors_unchecked(pytester, models_dir):
    golden, record = written(pytester)
    (golden / "golden.json").write_text(json.dumps(dict(record, model_sha256=5)))
    refused = pytester.runpytest()
    refused.assert_outcomes(failed=1)
    refused.stdout.fnmatch_lines(["*: model_sha256: expected a sha256 (64 hex digits), got 5"])
    # it had said "written from another model ... (sha256 5...)": a damaged record is not one
    refused.stdout.no_fnmatch_line("*written from another model*")
    (pytester.path / SHOWN).unlink()  # "or delete golden/mlp/golden.json"
    pytester.runpytest().assert_outcomes(passed=1)


def test_a_tensor_file_the_record_does_not_list_is_named_and_the_rm_pasted_works(
        pytester, models_dir):
    golden, _ = written(pytester)
    relu = next(golden.glob("relu1.*.npy"))
    (golden / "relu1.0.1000000000000099.npy").write_bytes(relu.read_bytes())
    refused = pytester.runpytest()
    refused.assert_outcomes(failed=1)  # the old code: 1 passed, the stray file compared
    refused.stdout.fnmatch_lines([
        "ascend-accuracy configuration error: golden/mlp: it holds tensor files its golden.json "
        "does not list: relu1.0.1000000000000099.npy (not written with this golden: copied in, "
        "or left from another one), whose values would be compared unchecked. Remove them (rm "
        "golden/mlp/relu1.0.1000000000000099.npy), or run the test again with --accuracy-regen "
        "to rewrite the golden"])
    line = next(s for s in refused.outlines if "Remove them (rm " in s)
    command = line.split("Remove them (", 1)[1].split("), or run", 1)[0]
    assert shlex.split(command)[0] == "rm"
    subprocess.run(command, shell=True, cwd=pytester.path, check=True)
    pytester.runpytest().assert_outcomes(passed=1)


def test_a_yaml_suites_golden_with_a_damaged_record_is_refused(pytester, models_dir):
    pytester.makefile(".yaml", accuracy_mlp="models:\n  - model: models/passing_mlp.onnx\n"
                                            "    golden: golden/mlp\n")
    pytester.runpytest().assert_outcomes(failed=1)  # written (missing)
    record = pytester.path / SHOWN
    newer = dict(json.loads(record.read_text()), record_version=3,
                 written_by="pytest-ascend-accuracy 9.1.0")
    record.write_text(json.dumps(newer))
    refused = pytester.runpytest()
    refused.assert_outcomes(failed=1)
    refused.stdout.fnmatch_lines([
        f"*{SHOWN}: stored golden record of a newer version, so which model and inputs the "
        "golden comes from cannot be checked: record_version 3, written by "
        "pytest-ascend-accuracy 9.1.0: this version of pytest-ascend-accuracy reads "
        "record_version 2, whose fields may mean otherwise",
        "Fix: upgrade pytest-ascend-accuracy to 9.1.0 (the version that wrote it) or newer"])
    # not "--accuracy-regen" nor "delete golden.json": both put this older version's golden in
    # place of the newer one a teammate checked in
    fix = next(s for s in refused.outlines if s.startswith("Fix: "))
    assert "regen" not in fix and "delete" not in fix
    assert json.loads(record.read_text()) == newer  # left as it was
    # the upgrade, as far as a test can make one: a version that reads record_version 3
    pytester.makeconftest(UPGRADED)
    pytester.runpytest_subprocess().assert_outcomes(passed=1)
    assert json.loads(record.read_text()) == newer
    (pytester.path / "conftest.py").unlink()
    # asked for by name, a rewrite still replaces it (the user chose this version's golden)
    pytester.runpytest("--accuracy-regen").assert_outcomes(failed=1)
    pytester.runpytest().assert_outcomes(passed=1)


UPGRADED = """
from pytest_ascend_accuracy.golden import stored_record, stored_record_check

stored_record.RECORD_VERSION = stored_record_check.RECORD_VERSION = 3
stored_record_check.VERSION_KEYS[3] = stored_record_check.VERSION_KEYS[2]
"""
