"""The values triage returns: one ``StepResult`` per step and the ``Diagnosis`` as a whole."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional, Tuple

from ..compare.result import CompareResult
from ..core.modes import Mode

#: how each front end raises the conversion budget (``diagnose(budget_option=...)``): the
#: command's option, the plugin's; a rerun with it continues from the cache
CLI_BUDGET_OPTION = "--budget {n}"
PLUGIN_BUDGET_OPTION = "--accuracy-diagnose-budget={n}"


#: the debugging flow's steps, numbered as the developers' guide numbers them; README, docs,
#: the CLI and the plugin use these numbers (the flow runs step 5 right after step 1: it costs
#: no conversion, and when the inputs differ every other step is wasted)
GUIDE_STEPS = {1: "dump every operator and compare", 2: "precision (high precision, keep_dtype)",
               3: "buffer optimisation off", 4: "fusion rules off",
               5: "pre-processing and configuration against the reference",
               6: "compare with the reference network and name the ops"}


def guide_step(step: str) -> int:
    """The guide's number of a ``StepResult.step`` name: ``fusion_off+keep_dtype`` (the
    precision step repeated under fusion off) is step 2, ``buffer_off+fusion_off`` (the modes
    together) and ``fusion_rules+keep_dtype`` step 4: a step with the fusion rules in it is
    step 4, else its last part's."""
    parts = step.split("+")
    name = "fusion_rules" if "fusion_rules" in parts else parts[-1]
    if name in ("default",):
        return 1
    if name in ("high_precision", "keep_dtype", "keep_dtype_all"):
        return 2
    if name == "buffer_off":
        return 3
    if name in ("fusion_off", "fusion_rules"):
        return 4
    if name == "data":
        return 5
    return 6


def rerun_with_budget(budget_option: str, budget: int) -> str:
    """``rerun with --budget 64``: the option with twice the budget spent, ready to paste."""
    return f"rerun with {budget_option.format(n=max(2 * budget, budget + 1))}"


@dataclass(frozen=True)
class OpLine:
    """One operator line of a step table."""

    op: str
    op_type: str
    cosine: float
    rel_l2: float
    max_abs: float
    note: str = ""


@dataclass(frozen=True)
class StepResult:
    """What one step measured. ``passed`` is None where the step judges nothing."""

    step: str
    mode: str
    passed: Optional[bool]
    summary: str
    first_failure: Optional[str] = None
    first_value: Optional[float] = None
    failing: Tuple[str, ...] = ()  # ops below the threshold against golden
    differing: Tuple[str, ...] = ()  # ops that differ from the default run (device vs device)
    conversions: int = 0  # new conversions this step cost (cache hits are free)
    table: Tuple[OpLine, ...] = ()


@dataclass(frozen=True)
class Diagnosis:
    """The outcome of ``diagnose``; render with ``triage_report``."""

    model: str
    backend: str
    threshold: float
    metric: str
    restored_by: Optional[str]  # a step name; "default" when nothing needed fixing
    verdict: str
    steps: Tuple[StepResult, ...]
    fix_mode: Optional[Mode] = None
    keep_dtype: Tuple[str, ...] = ()
    fusion_rules_off: Tuple[str, ...] = ()
    conversions: int = 0
    cache_hits: int = 0
    budget: int = 0
    budget_exhausted: bool = False
    fix_files: Mapping[str, str] = field(default_factory=dict)
    #: the fix's ATC options as the backend passes them (``triage.atc_args.FixAtc``); None on a
    #: Diagnosis made by hand: then the fix mode's own spelling
    fix_atc: Optional[object] = None
    final: Optional[CompareResult] = field(default=None, compare=False, repr=False)
    #: how the caller's user raises the budget, ``{n}`` for the number (``flow.CLI_BUDGET_OPTION``)
    budget_option: str = CLI_BUDGET_OPTION
    #: ops not compared (no golden tensor) beside value failures: every mode was judged
    #: without them, and the check needs them ignored beside the fix (``triage.coverage``)
    set_aside: Tuple[str, ...] = ()
    #: the ignore list a test pastes with the fix (its own entries, then ``set_aside``)
    ignore_with_fix: Tuple[str, ...] = ()
    #: the ops the default run's dump names (0: not known): a fix keeping nearly all of them
    #: is the whole model in float32 (``kept_share``)
    ops_total: int = 0
    #: where such a fix restores only the order after TopKs whose differences are near ties
    #: (``report.after_selection``): the ignore entries of the ops after them, which judge the
    #: rest instead
    ignore_instead: Tuple[str, ...] = ()
    #: the model's ONNX quantisation op types, which ATC does not convert as they are
    #: (``triage.quant_note``): the verdict says so, and no ATC files are written
    atc_quant_ops: Tuple[str, ...] = ()

    @property
    def fixed(self) -> bool:
        return self.restored_by is not None

    @property
    def whole_model(self) -> bool:
        """Whether the fix keeps nearly every op the run names in float32 (``kept_share``)."""
        from .kept_share import fix_keeps, kept_ops, nearly_all

        return (self.fixed and self.restored_by != "default"
                and nearly_all(kept_ops(fix_keeps(self.keep_dtype, self.fix_mode)),
                               self.ops_total))

    def step(self, name: str) -> Optional[StepResult]:
        for s in self.steps:
            if s.step == name:
                return s
        return None


def fmt(value: Optional[float]) -> str:
    if value is None or value != value:
        return "NaN"
    return f"{value:.6f}"
