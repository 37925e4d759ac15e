"""A run compared against a golden while it runs: a passing check writes no dump.

``EmulatorBackend.run_compared(converted, inputs, golden)`` knows, before running, the dump its
run would write (``dump.unwritten``: every op's header from the plan's shapes, dtypes, formats
and origins), matches it with ``golden`` as ``compare_dumps`` would (``plan_comparison``), and
measures each pair while the op's values are alive, in the thread that would have written
them (``compare_pair``, then ``within_ties``; ``finish_comparison`` adds the unmatched rows).
No file is written. Each op's actual values are checked against the header predicted for it
(shape, dtype, format): one that differs (an output whose shape depends on values) ends the
comparison, and the run is made again as ``run`` makes it.

The ``ComparedRun`` returned is a DumpSet of that dump; ``compare_dumps(run, golden)`` hands
back the result made against that golden (``compared_with``) instead of comparing again. Its
``actual_root`` is the directory the run's dump goes to when it is written (none is written for
a passing check: as a run-first check's dump, removed when its test passes); its rows name no
file.
Anything that reads its values otherwise (a tensor's ``load()``), or a failing check that
reports the failing ops' files (``materialize``, ``report.assertion``), runs the model again
with its dump written (the emulator computes the same values), and the DumpSet is then that
written dump. The comparison is not made again from its files: ``compared_with`` then hands
back the one made while running, its rows naming the written files (``_naming_files``), where
the written dump holds the same ops, slots, shapes and dtypes (else None: compared again). A
failing check used to pay the run and the compare twice: on ddddocr's quantised
``common_old.onnx`` the second compare (331 rows, most on the float64 path for their -Inf) took
0.37 s of the 0.65 s judging the failure, and a warm check took longer than a cold one.
"""
from __future__ import annotations

import dataclasses
import time
import weakref
from typing import Callable, Dict, List, Optional

import numpy as np

from ...compare.engine import (CompareProgress, compare_pair, finish_comparison, pair_nbytes,
                               plan_comparison)
from ...compare.kernel import DEFAULT_CHUNK
from ...compare.reading import TensorReader
from ...compare.topk_ties import within_ties
from ...dump.model import DumpSet
from ...dump.unwritten import UnwrittenOp, PlannedTensor, stored_values, unwritten_dump
from .op_values import aipp_format, slot_layout, stored_type


class ComparedRun(DumpSet):
    """A run's dump, compared against ``golden`` as it ran and not written (module doc)."""

    def __init__(self, dump: DumpSet, *, golden: DumpSet, spelled: List[str], result, kl: bool,
                 rerun: Callable[[], DumpSet]):
        super().__init__(dump.ops, kind=dump.kind, root=None, model_name=dump.model_name,
                         meta=dump.meta)
        self._planned = _tensor_headers(dump.ops)  # (what ``_naming_files`` checks)
        self._golden, self._spelled, self._result = golden, spelled, result
        self._kl, self._rerun, self._written = bool(kl), rerun, None
        self._done = [False]  # (shared with ``write_later``'s callable)
        self._with_files = None  # (``_naming_files``: made once)

    @property
    def written(self) -> bool:
        """Whether the dump was written since (``materialize``)."""
        return self._written is not None

    def compared_with(self, golden: DumpSet, *, kl: bool, chunk_size: int = DEFAULT_CHUNK):
        """The result of the comparison made while running, when it was made against
        ``golden`` (the same DumpSet, or its ops respelled by ``in_actual_spelling``) with these
        settings (KL computed as asked for, or not; the compare's own chunk size); else
        None."""
        if chunk_size != DEFAULT_CHUNK or bool(kl) != self._kl:
            return None
        mine = self._golden
        if golden is not mine:
            names = [op.name for op in golden.ops]
            if (golden.meta is not mine.meta or golden.root != mine.root
                    or len(golden.ops) != len(mine.ops)
                    or names not in ([op.name for op in mine.ops], self._spelled)
                    or any(a.outputs is not b.outputs or a.inputs is not b.inputs
                           for a, b in zip(golden.ops, mine.ops))):
                return None
        return self._result if self._written is None else self._naming_files()

    def _naming_files(self):
        """The comparison made while running with each row's ``source`` the written dump's file
        of its tensor, ``actual_root`` and the run's metadata that dump's; None where the
        written dump differs from the one compared (an op, a slot, a shape or a dtype)."""
        if self._with_files is None:
            self._with_files = (_with_files(self._result, self._planned, self._written,
                                            dict(self.meta)) or False)
        return self._with_files or None

    def materialize(self) -> "ComparedRun":
        """Run again with the dump written; from then on this DumpSet is that dump."""
        if self._written is None:
            written = self._rerun()
            self._written, self._done[0] = written, True
            self.ops, self.kind, self.root = written.ops, written.kind, written.root
            self.model_name = written.model_name
            self.meta.update(written.meta)  # (the same dict: held by whoever held this one's)
            self.meta["compared_while_running"] = False
            self.__post_init__()
        return self

    def write_later(self) -> Callable[[], None]:
        """A callable that writes this run's dump once, this DumpSet alive or not (a test
        that fails after its checks passed keeps the dumps of its runs)."""
        ref, rerun, done = weakref.ref(self), self._rerun, self._done

        def write() -> None:
            run = ref()
            if run is not None:
                run.materialize()
            elif not done[0]:
                done[0] = True
                rerun()
        return write


def _tensor_headers(ops) -> List[tuple]:
    """``(op, slot, shape, dtype)`` of every output of ``ops``, in order."""
    return [(op.name, t.slot, tuple(t.shape), t.dtype) for op in ops for t in op.outputs]


def _with_files(result, planned: List[tuple], written: DumpSet, meta: dict):
    """``result`` naming ``written``'s files (``ComparedRun._naming_files``), or None."""
    if _tensor_headers(written.ops) != planned:
        return None
    files = {(op.name, t.slot): t.source or op.source for op in written.ops for t in op.outputs}
    rows = []
    for row in result.rows:
        key = (row.op_name, row.slot)
        if key not in files:
            return None
        rows.append(dataclasses.replace(row, source=files[key]))
    return dataclasses.replace(result, rows=tuple(rows), actual_root=written.root,
                               meta={**result.meta, "actual": meta})


class _Live:
    """The loader of one tensor of the unwritten dump: its values while its op's are alive
    (``values``), else those of the dump written by running again (``ComparedRun``)."""

    def __init__(self, values: Dict, k: int, slot: str, owner: List):
        self.values, self.k, self.slot, self.owner = values, k, slot, owner

    def __call__(self) -> np.ndarray:
        found = self.values.get((self.k, self.slot))
        if found is not None:
            return found
        run = self.owner[0]
        if run is None:  # (a pair is measured only while its op's values are alive)
            raise RuntimeError(f"values of op {self.k} {self.slot} read outside its op")
        op = run.materialize().ops
        return _written_tensor(op, self.k, self.slot, self.owner[1])


def _written_tensor(ops, k: int, slot: str, names: List[str]):
    name = names[k]
    for op in ops:
        if op.name == name:
            for t in op.outputs + op.inputs:
                if t.slot == slot:
                    return t.load()
    raise KeyError(f"the written dump has no {slot} of op {name!r}")


def planned_ops(plan, aipp_ops, device_formats: bool, base_ts: int,
                shape_of: Callable[[object], Optional[tuple]]) -> Optional[List[UnwrittenOp]]:
    """The ops ``EmulatorBackend.run`` writes in dump mode ``output``, each output as the
    writer gets it (``PlannedTensor``), from the plan (``shape_of(slot)``: a shape the plan
    does not hold); None where a shape or dtype is not known before the run."""
    n = len(aipp_ops)
    ops = [UnwrittenOp("Aipp", name, (PlannedTensor(tuple(out.shape), out.dtype.name,
                                                    aipp_format(device_formats, out)),),
                       len(plan.ops) + k, base_ts - n + k)
           for k, (name, _, out) in enumerate(aipp_ops)]
    for k, op in enumerate(plan.ops):
        outs = []
        for s in op.outputs:
            dtype = s.dtype if s.dtype and s.dtype != "bfloat16" else s.type
            shape = s.shape if s.shape is not None else shape_of(s)
            if shape is None or not dtype:
                return None
            probe = np.broadcast_to(np.zeros((), np.uint8), shape)  # (its ndim, no memory)
            outs.append(PlannedTensor(tuple(shape), dtype, slot_layout(s, probe),
                                      s.origin, stored_type(s)))
        ops.append(UnwrittenOp(op.op_type, op.name, tuple(outs), k, base_ts + k))
    return ops


def guessed_shape(info, golden: DumpSet):
    """``shape_of`` for ``planned_ops``: the shape the model's tensor info gives the slot's
    tensor, else that of the golden's tensor of the slot's origin (a guess each run checks:
    ``matches_plan``)."""
    from ...dump.layout import sanitize

    def shape_of(slot) -> Optional[tuple]:
        known = (info or {}).get(slot.fetch)
        if known is not None and known[1] is not None and all(
                isinstance(d, int) for d in known[1]):
            return tuple(known[1])
        if slot.origin is None:
            return None
        op = golden.get(slot.origin[0]) or golden.get(sanitize(slot.origin[0]))
        for t in op.outputs if op is not None else ():
            if t.index == slot.origin[1]:
                return tuple(t.shape)
        return None
    return shape_of


def matches_plan(array: np.ndarray, t: PlannedTensor, slot) -> bool:
    """Whether ``array``, written, would have the header planned for it."""
    return (tuple(array.shape) == t.shape and array.dtype.name == t.dtype
            and slot_layout(slot, array) == t.format)


class Comparison:
    """The pairs of an unwritten dump against a golden, measured op by op."""

    def __init__(self, dump: DumpSet, golden: DumpSet, *, kl: bool, progress=None):
        self.dump, self.kl, self.progress = dump, kl, progress
        self.golden, self.plan = plan_comparison(dump, golden)
        self.rows: List[object] = [None] * len(self.plan.pairs)
        self.by_op: Dict[int, List[int]] = {}
        for i, p in enumerate(self.plan.pairs):
            self.by_op.setdefault(p.actual.loader.k, []).append(i)
        self.reader = TensorReader()
        self.done, self.bytes_done = 0, 0
        self.bytes_total = sum(pair_nbytes(p) for p in self.plan.pairs)

    def measure(self, k: int) -> None:
        """Measure the pairs of op ``k`` (its values alive); ``progress`` (``compare_dumps``'s
        callback) is called after each."""
        for i in self.by_op.pop(k, ()):
            pair = self.plan.pairs[i]
            self.rows[i] = within_ties(pair, compare_pair(pair, kl=self.kl, reader=self.reader))
            self.done += 1
            self.bytes_done += pair_nbytes(pair)
            if self.progress is not None:
                self.progress(CompareProgress(self.done, len(self.rows), pair.actual_op.name,
                                              self.bytes_done, self.bytes_total))

    def result(self):
        if self.by_op:  # (every op of the dump ran)
            raise RuntimeError(f"ops never measured: {sorted(self.by_op)[:5]}")
        return finish_comparison(self.plan, self.rows, self.dump, self.golden, kl=self.kl)


def compare_while_running(backend, state, converted, inputs, golden: DumpSet, *, kl: bool,
                          rerun: Callable[[], DumpSet], meta: dict,
                          progress=None) -> Optional[ComparedRun]:
    """``EmulatorBackend.run_compared``'s run (module doc); None where it cannot be compared so
    (nothing written, the caller runs as ``run`` does)."""
    from ...aipp.emulation import preprocess
    from ...dump.loader import apply_om_json
    from ...graph.onnx_graph import check_inputs
    from .op_values import op_values

    plan = state.plan
    inputs, aipp_ops = preprocess(state.aipp, inputs, converted.info.get("insert_op_conf"))
    feeds = check_inputs(state.input_model, inputs, where=f"inputs of {converted.model_name!r}")
    planned = planned_ops(plan, aipp_ops, backend.device_formats, int(time.time() * 1e6),
                          guessed_shape(state.info, golden))
    if planned is None:
        return None
    values: Dict = {}
    owner: List = [None, [op.name for op in planned]]
    dump = unwritten_dump(planned, lambda k, slot: _Live(values, k, slot, owner))
    if dump is None:
        return None
    dump = apply_om_json(dump, state.om_graph(converted))
    dump.model_name = converted.model_name
    dump.meta.update(meta)
    dump.meta["compared_while_running"] = True
    dump.meta["dump_dir"] = None  # (none written; ``materialize`` writes it where run would)
    comparison = Comparison(dump, golden, kl=kl, progress=progress)
    n = len(aipp_ops)
    for k, (_, _, out) in enumerate(aipp_ops):  # the Aipp ops run first
        values[(k, "output:0")] = frozen(stored_values(out, planned[k].outputs[0]))
        comparison.measure(k)
        values.clear()
    run = op_values(state, converted.model_name, feeds, with_inputs=False, with_outputs=True,
                    source_model=converted.source_model)
    try:
        for v in run:
            k = n + v.k
            for i, (slot, array) in enumerate(zip(v.out_slots, v.outputs)):
                t = planned[k].outputs[i]
                if not matches_plan(array, t, slot):
                    return None  # (a shape that depends on values: written as run writes)
                values[(k, f"output:{i}")] = frozen(stored_values(array, t))
            comparison.measure(k)
            values.clear()
    finally:
        values.clear()
        run.close()
    spelled = [op.name for op in comparison.golden.ops]
    result = comparison.result()
    if meta.get("dump_dir"):  # where its dump goes if it is written (a failed test's is)
        result = dataclasses.replace(result, actual_root=str(meta["dump_dir"]))
    compared = ComparedRun(dump, golden=golden, spelled=spelled, result=result, kl=kl,
                           rerun=rerun)
    owner[0] = compared
    return compared


def frozen(array: np.ndarray) -> np.ndarray:
    """A read-only view: the compare reads the run's arrays, which later ops still use."""
    view = array.view()
    view.flags.writeable = False
    return view
