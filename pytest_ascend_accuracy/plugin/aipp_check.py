"""The ``check_preprocessing`` fixture's body: step 5 (AIPP vs reference) as a test assertion."""
from __future__ import annotations

from pathlib import Path

from ..errors import ConfigError
from .session import get_state


def preprocessing_checker(request, ctx):
    """``check(om, images, *, reference, rank=0)`` bound to the test (see the fixture)."""
    state = get_state(request.config)

    def check(om, images, *, reference, rank=0):
        __tracebackhide__ = True
        from ..aipp import check_preprocessing as run_preprocessing_check
        from ..report.assertion import AccuracyFailure
        from .accuracy_check import report_slug, resolve_file

        where = f"{ctx.nodeid}: check_preprocessing"
        config = getattr(om, "aipp", None)
        if config is None and isinstance(om, (str, Path)):
            config = resolve_file(om, ctx.bases, where, "AIPP file")
        if config is None:
            raise ConfigError(where, "the model has no AIPP file: convert it with "
                                     "ascend_model(model, aipp=\"aipp.cfg\")")
        if not callable(reference):
            raise ConfigError(where, "reference= must be a function image -> float CHW tensor")
        result = run_preprocessing_check(config, images, reference, rank=rank)
        if result.passed:
            return result
        written = None
        if result.fixes:
            root = state.settings.report_dir
            out_dir = (Path(root) / report_slug(ctx.nodeid)) if root else request.getfixturevalue("tmp_path")
            out_dir.mkdir(parents=True, exist_ok=True)
            written = result.write_corrected(out_dir / f"{Path(result.config.path).stem}.corrected.cfg")
        raise AccuracyFailure(result.report(corrected_path=written), None, None)

    return check


def first_op_aipp_hint(actual, failure) -> "str | None":
    """When a model with an ``Aipp`` op fails at its first compared operator, the failure text's
    next step: check the pre-processing (step 5) before blaming that operator."""
    if not any(op.op_type == "Aipp" for op in getattr(actual, "ops", ())):
        return None
    verdict, result = getattr(failure, "verdict", None), getattr(failure, "result", None)
    first = getattr(verdict, "first", None)
    if first is None or result is None:
        return None
    orders = [r.order for r in result.compared_rows]
    if not orders or first.row.order != min(orders):
        return None
    return (f"the first operator after AIPP ({first.row.label}) already fails: check the "
            f"pre-processing before blaming it: check_preprocessing(om, images, reference=fn) "
            f"compares the AIPP file with the reference network's pre-processing and names the "
            f"fields to correct")


def with_next_step(message: str, hint: str) -> str:
    """``message`` with its ``next step:`` line replaced by ``hint``."""
    lines = message.split("\n")
    for k, line in enumerate(lines):
        if line.startswith("next step: "):
            lines[k] = f"next step: {hint}"
            return "\n".join(lines)
    return f"{message.rstrip()}\nnext step: {hint}"
