"""The CLI's and the Python API's float16-range fix where a failing op after the first loses
values of its own (``fp16_fix_ops.KeepNames.partial``): the reason says the list may still fail,
the API's text points to ``diagnose(...)``, and the CLI's check of the fix says what its exit
status means. T1: "ascend-accuracy diagnose ... --mode '{...}' ... passes with exit status 0",
run verbatim on a ConvNeXt's 8-op fix, exited 0 only because the diagnosis went on and kept 3
more MatMuls (RESTORED); the line promised that the mode passes.

The model: mm0's weight flushes to 0 in float16; each of 5 stages after it halves the values,
so mm4 flushes values of its own (``tests/plugin/test_hint_later_stage_underflow.py`` pastes the
plugin's hint)."""
import contextlib
import io
import re
import shlex

import pytest

from pytest_ascend_accuracy.cli import app as cli
from pytest_ascend_accuracy.core.modes import HIGH_PRECISION

pytest.importorskip("onnxruntime")

from stage_underflow_model import stage_underflow_model  # noqa: E402

CAVEAT = ("pasted, ops after it (or, fed float16 from upstream, that op itself) may still fail "
          "(mm4act4 loses values of its own to float16: ")
EXIT_NOTE = ("passes with exit status 0 (its first line says PASSES where this mode passes as "
             "given, and RESTORED, also with exit status 0, where it passed only with more ops "
             "kept, which its fix names)")


def _main(argv):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = cli.main(argv)
    return code, out.getvalue()


def test_the_cli_says_what_exit_status_0_means_and_pasted_it_means_that(tmp_path):
    from pytest_ascend_accuracy.testing.emulated_pair import emulated_pair

    pair = emulated_pair(tmp_path, stage_underflow_model(), HIGH_PRECISION, name="stages",
                         store_inputs=True)
    code, out = _main(pair.compare_argv())
    assert code == 1
    hint = next(line for line in out.splitlines() if line.startswith("next step:"))
    assert CAVEAT in hint, hint
    found = re.search(r"(ascend-accuracy diagnose [^()]*?) \(high precision still feeds Cube "
                      r"ops float16\) " + re.escape(EXIT_NOTE), hint)
    assert found, hint
    argv = shlex.split(found.group(1))[1:] + ["--cache-dir", str(tmp_path / "dcache")]
    code, diagnosis = _main(argv)
    # exit status 0, and RESTORED: the mode as given failed, as the caveat warned
    assert code == 0, diagnosis
    assert diagnosis.splitlines()[0] == "ascend-accuracy diagnosis of stages: RESTORED"
    assert "high_precision+keep_dtype(mm0,act0) fails at op mm4act4" in diagnosis, diagnosis


def test_the_api_text_points_to_diagnose_where_the_list_may_still_fail(tmp_path):
    from pytest_ascend_accuracy.dump.loader import load_dump
    from pytest_ascend_accuracy.report.assertion import AccuracyFailure, assert_accuracy
    from pytest_ascend_accuracy.testing.emulated_pair import emulated_pair

    for shrink, partial in ((0.5, True), (1.0, False)):
        (tmp_path / str(shrink)).mkdir()
        pair = emulated_pair(tmp_path / str(shrink), stage_underflow_model(shrink), HIGH_PRECISION,
                             name="stages", store_inputs=True)
        with pytest.raises(AccuracyFailure) as exc:
            assert_accuracy(load_dump(pair.dump, om_json=pair.om_json), pair.golden, 0.99)
        text = str(exc.value).splitlines()[-1]
        assert "keep_dtype(['mm0', 'act0'])" in text, text
        assert (CAVEAT in text) is partial, text
        assert text.endswith("; where it still fails, diagnose(model, inputs, threshold=...) "
                             "names the ops to keep in float32 (from pytest_ascend_accuracy."
                             "triage.flow import diagnose)") is partial, text
