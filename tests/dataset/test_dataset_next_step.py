"""A failing dataset check says what to try next, as a failing accuracy check does (H112: it
ended at the traced operator with no next step), and the advice pasted makes it pass."""
from __future__ import annotations

import re

from .conftest import spiky_project

TEST_FILE = '''
from pytest_ascend_accuracy import accuracy
{imports}
LABELS = {labels!r}


@accuracy(threshold=0.95{modes})
def test_spiky(ascend_model, check_dataset):
    check_dataset(ascend_model("models/spiky.onnx"), "samples", labels=LABELS)
'''


def test_a_failed_dataset_check_names_a_next_step_that_pasted_passes(pytester):
    by_id = spiky_project(pytester.path)
    pytester.makepyfile(test_ds=TEST_FILE.format(imports="", labels=by_id, modes=""))
    failed = pytester.runpytest("-p", "no:cacheprovider")
    failed.assert_outcomes(failed=1)
    text = failed.stdout.str()
    failed.stdout.fnmatch_lines(["first flipped sample 003: first operator below the threshold: *",
                                 "next step: *", "  modes=*"])
    mode = re.search(r"^  modes=(\[.*\])$", text, re.M).group(1)
    imports = re.search(r"^  \((from pytest_ascend_accuracy import .*)\)$", text, re.M).group(1)
    pytester.makepyfile(test_ds=TEST_FILE.format(imports=imports, labels=by_id,
                                                 modes=f", modes={mode}"))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
