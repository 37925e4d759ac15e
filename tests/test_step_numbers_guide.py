"""One step numbering everywhere, the developers' guide's (an AIPP trial, finding 3): the README
list called the input check step 2 and fusion off step 5, while the README's AIPP section, the
diagnosis and triage's docstrings called the input check step 5; the diagnosis's ``steps:``
list numbered the steps as run (``2. data``)."""
import re
from pathlib import Path

from pytest_ascend_accuracy.triage import fusion_rules, inputs
from pytest_ascend_accuracy.triage.report import text
from pytest_ascend_accuracy.triage.result import GUIDE_STEPS, Diagnosis, StepResult, guide_step

ROOT = Path(__file__).resolve().parents[1]

#: a word of each step's subject, as the guide names it
SUBJECT = {1: "dump", 2: "precision", 3: "buffer", 4: "fusion", 5: "pre-processing",
           6: "reference network"}


def test_each_step_name_has_the_guides_number():
    assert {n: SUBJECT[n] in GUIDE_STEPS[n] for n in SUBJECT} == dict.fromkeys(SUBJECT, True)
    named = {"default": 1, "high_precision": 2, "keep_dtype_all": 2, "keep_dtype": 2,
             "buffer_off": 3, "fusion_off": 4, "fusion_rules": 4, "data": 5, "golden": 6,
             "fusion_off+keep_dtype": 2, "buffer_off+high_precision": 2,
             "fusion_rules+keep_dtype": 4}
    assert {s: guide_step(s) for s in named} == named


def test_the_steps_list_carries_the_guides_numbers_in_the_order_run():
    d = Diagnosis(model="m", backend="emulator", threshold=0.95, metric="cosine",
                  restored_by=None, verdict="v", steps=(
                      StepResult("default", "default", False, "fails at op a"),
                      StepResult("data", "", True, "1 input tensor(s) match"),
                      StepResult("high_precision", "high_precision", True, "passes")))
    lines = text(d).splitlines()
    steps = [line for line in lines if line.startswith("  step ")]
    assert steps == ["  step 1 default [default]: FAILED | fails at op a",
                     "  step 5 data: PASSED | 1 input tensor(s) match",
                     "  step 2 high_precision [high_precision]: PASSED | passes"]


def test_readme_and_docstrings_use_the_guides_numbers():
    readme = (ROOT / "README.md").read_text()
    flow = readme.split("## The debugging flow, automated", 1)[1].split("```", 1)[0]
    items = dict(re.findall(r"^(\d)\. (.*)$", flow, re.M))
    assert sorted(items) == ["1", "2", "3", "4", "5", "6"]
    for n, word in SUBJECT.items():
        assert word in items[str(n)].lower(), (n, items[str(n)])
    titles = dict((int(n), t) for t, n in re.findall(r"^## (.*)\(step (\d)", readme, re.M))
    assert SUBJECT[5] in titles[5].lower() and "dataset" in titles[6].lower()
    assert inputs.__doc__.startswith("Step 5 of the debugging flow")
    assert fusion_rules.__doc__.startswith("Step 4 of the debugging flow (fusion off)")
    assert "left to step 3" not in readme and "step 3 is repeated" not in readme
