"""Converting, running and judging one mode at a time for ``diagnose`` (``triage.flow``), and
what an evaluation holds: the framework ops a run covers, the ops past float16's range, the
fusion rules a conversion applied."""
from __future__ import annotations

import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Dict, List, Mapping, Optional, Tuple

from ..compare.engine import compare_dumps
from ..compare.result import CompareResult, Verdict
from ..core.fp16 import FP16_MAX
from ..core.modes import Mode
from .search import BudgetExhausted


#: what the runs after a diagnosis's first dump (``Runner.evaluate``), and whether a search's
#: runs keep their dumps until the diagnosis ends; before: "all" and True, the baseline of
#: ``benchmarks/bench_diagnosis_dumps.py``
LATER_DUMP_MODE = "output"
KEEP_SEARCH_DUMPS = False


@dataclass
class Evaluation:
    mode: Mode
    converted: object
    dump: object
    result: CompareResult
    verdict: Verdict
    new_conversion: bool
    #: where its dump was written; a search's run's files are removed once it is judged
    #: (``Runner.dump_of`` runs it again where they are needed)
    dump_dir: Optional[Path] = None
    removed: bool = False

    @property
    def passed(self) -> bool:
        return self.verdict.passed


class Runner:
    """Converts, runs and judges one mode at a time, memoised and charged to the budget."""

    def __init__(self, backend, model, inputs, golden, *, judge: Callable[[CompareResult], Verdict],
                 budget: int, input_shape, dump_root: Path, progress: Callable[[str], None],
                 atc_options: Optional[Mapping[str, object]] = None, kl: bool = False):
        self.backend, self.model, self.inputs, self.golden = backend, model, inputs, golden
        self.kl = kl  # computed only when a threshold judges by it (a second pass per tensor)
        self.judge, self.budget, self.input_shape = judge, budget, input_shape
        self.atc_options = dict(atc_options or {}) or None
        self.dump_root, self.progress = dump_root, progress
        self.conversions = 0
        self.cache_hits = 0
        self.memo: Dict[Mode, Evaluation] = {}

    def evaluate(self, mode: Mode, *, keep_dump: bool = True) -> Evaluation:
        """``mode`` converted, run with its dump written and judged (memoised). ``keep_dump``
        False (the searches' many runs, judged by their verdict alone): its files go once it is
        judged, and ``dump_of`` runs it again where a step reads them."""
        key = replace(mode, label=None)
        if key in self.memo:
            return self.memo[key]
        cache = getattr(self.backend, "cache", None)
        before = cache.stats.misses if cache is not None else None
        # once the budget is spent no further mode is tried (a cached one included: whether it
        # is cached is only known by converting); a rerun gets the spent ones free from the cache
        if self.conversions >= self.budget:
            raise BudgetExhausted(f"conversion budget of {self.budget} spent")
        self.progress(f"converting and running mode {_short_name(mode)}")
        converted = self.backend.convert(self.model, mode, input_shape=self.input_shape,
                                         atc_options=self.atc_options)
        new = cache is None or cache.stats.misses > before
        if new:
            self.conversions += 1
        else:
            self.cache_hits += 1
        # the first run (the base mode, ``walk``'s first) dumps every op's inputs too: the input
        # check (step 5) reads what the device was fed; the others are compared by their
        # outputs only (``compare_dumps``), and an inputs dump doubled each run's files (det
        # 736: 0.46 of the bytes and 0.70 of the time with outputs only, bench_dump_mode.py)
        dump_dir = self.dump_root / f"run{len(self.memo)}"
        dump = self.backend.run(converted, self.inputs, dump=True, dump_dir=dump_dir,
                                dump_mode=LATER_DUMP_MODE if self.memo else "all")
        result = compare_dumps(dump, self.golden, kl=self.kl)
        ev = Evaluation(mode, converted, dump, result, self.judge(result), new, dump_dir)
        if not (keep_dump or KEEP_SEARCH_DUMPS) and self.memo:
            # judged: its files go (every run's stayed until the diagnosis ended: 32 runs of
            # PP-OCRv4 det 160, 2.6 GB, most of them the searches'); its ops' names stay for
            # ``framework_ops``
            shutil.rmtree(dump_dir, ignore_errors=True)
            ev.removed = True
        self.memo[key] = ev
        return ev

    def dump_of(self, ev: Evaluation):
        """``ev``'s dump with its files, run again (its conversion is at hand) where they were
        removed once it was judged; the device computes the same values."""
        if ev.removed:
            self.progress(f"running mode {_short_name(ev.mode)} again for its dump")
            target = ev.dump_dir  # (a folder whose removal left a file: a device's run refuses it)
            if target.exists():
                target = target.with_name(f"{target.name}-again")
            ev.dump = self.backend.run(ev.converted, self.inputs, dump=True, dump_dir=target,
                                       dump_mode=LATER_DUMP_MODE)
            ev.removed, ev.dump_dir = False, target
        return ev.dump


def framework_ops(ev: Evaluation) -> Tuple[List[str], Dict[str, str]]:
    """Framework op names covered by the dump, in execution order, with their op types."""
    names: List[str] = []
    types: Dict[str, str] = {}
    for op in ev.dump:
        for n in op.covers:
            if n and n not in types:
                names.append(n)
                types[n] = op.op_type if not op.is_fused else op.op_type + "(fused)"
    return names, types


def range_ops(ev: Evaluation, golden, model=None) -> List[str]:
    """Ops whose golden values (outputs, or operands such as a BatchNorm variance) leave the
    float16 range, or whose output turned non-finite. The failing ops' operands are read as the
    failure's hint reads them (``failing_ops_past_fp16``): every member of a fused op (a fused
    MatMul+Add row is matched to the Add, whose operands alone hid the MatMul's weight past
    65504), and, with ``model`` (the ONNX model the golden ran), the operands of an op the
    golden holds only outputs of."""
    from ..compare.fp16_range import failing_ops_past_fp16

    out: List[str] = [f.op for f in failing_ops_past_fp16(golden, ev.verdict, model=model)]
    for row in ev.result.rows:
        m = row.metrics
        if m is None or not row.slot.startswith("output"):
            continue
        if m.max_abs_golden > FP16_MAX or (m.mismatch and m.nonfinite_actual > m.nonfinite_golden):
            out.extend(row.original_names or (row.op_name,))
    return out


def applied_rules(backend, converted) -> List[str]:
    probe = getattr(backend, "fusion_rules", None)
    return list(probe(converted)) if probe else []


def _short_name(mode, limit: int = 120) -> str:
    """``mode.name`` for a progress line: a keep_dtype mode's name lists every op kept, and a
    rec model's diagnosis printed lines of 3,870 characters (a trial); cut, with the count."""
    name = mode.name
    if len(name) <= limit:
        return name
    kept = len(getattr(mode, "keep_dtype", ()) or ())
    return f"{name[:limit - 20]}... ({kept} ops kept)" if kept else f"{name[:limit]}..."
