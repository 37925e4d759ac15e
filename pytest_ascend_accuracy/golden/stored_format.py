"""Stored goldens written in an older golden format (``GOLDEN_FORMAT``, recorded in their
``golden.json`` as ``golden_format``): whether the difference matters for this model, and the
words that say so.

A stored golden is never rewritten unasked, so one written by an older version stays as it was.
What each bump changed in what a stored golden holds (docs/formats.md §7.1):

* 2: injective op-name stems (``dump/golden_names.py``): format 1 lost ops named
  ``input_<op>`` after an op ``<op>``, or with a newline;
* 3, 4, 5: the cache entry's layout only (``input_refs.csv``, its index, its pack file): a
  stored golden is written from the loaded DumpSet as one ``.npy`` file per tensor, as before;
* 6: ops in an order that runs (file order otherwise) and unnamed nodes named as ATC names
  them, not by position as msit does; the first format ``golden.json`` records;
* 7: an ``If`` decided by the input values keeps its name and outputs over its inlined branch
  (``graph.inline``): a golden of format 6 or older has no tensor of that ``If``, which the
  device dumps as one operator, so it was reported not compared (a false failure) or, ignored,
  left unjudged;
* 8: so is every ``If`` a conversion runs as an operator: one whose condition reads the shape
  of an ``If`` kept for its inputs looked static once that one was reduced, and was inlined
  away (H110, silero_vad_half); a golden of format 7 of such a model lacks its tensor. Also
  since 8 a stored golden numbers an op's outputs by their slots (``shifted_outputs``): before,
  an output after an omitted optional one (LSTM's ``Y_h``) was numbered down.

Only 7 and 8 are told here (``stale_ifs``): a golden of format 6 or older (or without a recorded
format) of a model whose golden run keeps an ``If``, lacking that ``If``'s tensor, is refused
naming the fix (``GoldenPolicy``), and the CLI says so beside the verdict (``stale_note``). The
others need no check or are told elsewhere: 6's order pairs nothing (ops pair by name), and its
naming is what ``compare.matching.renumbered_ops`` explains for a golden without a record;
format 1's colliding stems are named by ``compare.matching.colliding_golden_ops``. Not told: an
op ``input_<op>`` that a format-1 golden (the package's first day, no record) lost.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Optional, Sequence, Tuple

from ..errors import AscendAccuracyError

#: the newest ``GOLDEN_FORMAT`` whose change to stored goldens this module has decided on (a
#: test holds it equal: a bump says here whether a stored golden of the format before it is
#: still right, and for which models)
DECIDED_FOR = 8
#: the format since which a golden keeps every ``If`` a conversion runs as an operator (one
#: decided by the input values since 7, ``graph.inline``; one reading its shape since 8)
IF_KEPT = 8
#: what format ``IF_KEPT`` changed, as messages say it
IF_KEPT_CHANGE = ("keeps every If the device runs as one operator (one decided by the input "
                  "values, or reading the shape of one) under its own name, over its inlined "
                  "branch, as the device dumps it")


@dataclass(frozen=True)
class StaleFormat:
    """A stored golden of an older format that lacks what the current one holds for a model:
    ``ifs``, the ``If`` ops it has no tensor of; ``error``: why that could not be told."""

    written: str  # how the golden's format is described ("golden format 6 (its golden.json)")
    ifs: Tuple[str, ...] = ()
    error: str = ""

    def problem(self) -> str:
        """What is wrong, for the refusal (without the fix)."""
        from .onnxruntime_golden import GOLDEN_FORMAT

        head = (f"this stored golden was written in {self.written}, before golden format "
                f"{IF_KEPT}, which {IF_KEPT_CHANGE}; this version writes format {GOLDEN_FORMAT}")
        if self.error:
            return (f"{head}. Whether that changes what this model's golden holds could not be "
                    f"told ({self.error}), so comparing against it could blame or skip an If")
        ifs = ", ".join(repr(n) for n in self.ifs)
        return (f"{head}. This golden has no tensor of If {ifs}, so the device's {ifs} would be "
                f"reported not compared (or, ignored, left unjudged)")


def written_format(record: Optional[Mapping[str, object]]) -> Tuple[Optional[int], str]:
    """(the golden format a record names, None when it names none; how messages say it)."""
    if record is None:
        return None, ("no recorded golden format (it has no golden.json: written by a version "
                      "before golden format 6, or by another tool)")
    fmt = record.get("golden_format")
    if isinstance(fmt, int) and not isinstance(fmt, bool):
        return fmt, f"golden format {fmt} (its golden.json)"
    return None, "no recorded golden format (its golden.json has no golden_format)"


def _ops(model, ops=None):
    """``model``'s ops (``graph.op_catalogue.model_ops``, read once per model content: every
    use of a golden without a format-8 record asks), or ``ops`` where the caller has them."""
    from ..graph.op_catalogue import model_ops

    return ops if ops is not None else model_ops(model)


def _held(name: str, names) -> bool:
    """Whether a golden's op ``names`` hold op ``name`` (read back from file stems that spell it
    with ``.``, ``/``, ``\\`` and spaces as ``_``: msit's form, ``dump/golden_names.py``)."""
    from ..dump.layout import sanitize

    return name in names or sanitize(name) in names


def stale_ifs(record: Optional[Mapping[str, object]], golden_names: Iterable[str], model,
              inputs: Mapping[str, object], input_shape=None, *,
              ops=None) -> Optional[StaleFormat]:
    """The stored golden (its ``record``, None when it has none, and its op names) as older
    than this model's golden needs: written before format ``IF_KEPT`` (or without a recorded
    format) and lacking an ``If`` the golden run of ``model`` on ``inputs`` keeps. None when
    the difference cannot matter (no ``If`` in the main graph, none kept, or the golden holds
    them: msit's goldens keep every ``If``)."""
    fmt, written = written_format(record)
    if fmt is not None and fmt >= IF_KEPT:
        return None
    try:
        if "If" not in _ops(model, ops).types:  # (only a main graph's Ifs are kept)
            return None
        import numpy as np

        from ..graph.prepare import prepare_model

        arrays = {k: np.asarray(v) for k, v in inputs.items()}
        report = prepare_model(model, input_shape=input_shape, inputs=arrays,
                               weights_by_reference=True).report
        # only those the device runs as operators: an If brought up from a kept If's branch is
        # inside that operator on the device, never dumped (H113: silero_vad's format-7 golden,
        # which holds its If_0, was refused naming the Ifs of If_0's branch)
        kept = [n for n in report.kept_ifs if n in report.operator_ifs]
    except AscendAccuracyError:
        raise  # the user's model or inputs named as they are wrong (the test's run says the same)
    except Exception as exc:  # noqa: BLE001 -- said in the refusal, not hidden
        return StaleFormat(written, error=f"{type(exc).__name__}: {getattr(exc, 'problem', exc)}")
    names = set(golden_names)
    lacking = tuple(n for n in kept if not _held(n, names))
    return StaleFormat(written, lacking) if lacking else None


def newer_format(record: Optional[Mapping[str, object]]) -> Optional[str]:
    """Why a golden written in a newer format than this version's is doubtful (None: it is
    not newer)."""
    from .onnxruntime_golden import GOLDEN_FORMAT

    fmt, _ = written_format(record)
    if fmt is None or fmt <= GOLDEN_FORMAT:
        return None
    by = record.get("written_by") if record else None
    return (f"written in golden format {fmt}{f' by {by}' if by else ''}, newer than this "
            f"version's {GOLDEN_FORMAT}: what it holds may differ from what this version "
            f"compares; upgrade pytest-ascend-accuracy to that version, or rewrite it in format "
            f"{GOLDEN_FORMAT} with --accuracy-regen-all")


def stale_note(golden, not_compared: Sequence[Tuple[str, str]], shown: str = "") -> str:
    """For the CLI: why actual ops (``not_compared``: (op name, op type) of the rows left
    without a golden) are not compared when ``golden`` is a stored golden of a format before
    ``IF_KEPT`` and they are ``If`` operators (empty when that is not why)."""
    from .stored_record import read_record

    folder = Path(golden)
    ifs = []
    for name, op_type in not_compared:
        if op_type == "If" and name not in ifs:
            ifs.append(name)
    if not ifs or not folder.is_dir() or _cache_entry(folder):
        return ""
    try:
        record = read_record(folder)
    except Exception:  # noqa: BLE001 -- an unreadable record says nothing of its format
        return ""
    if record is None and not any(folder.glob("*.npy")):
        return ""  # not a golden directory of .npy files (a device dump, a cache entry)
    fmt, written = written_format(record)
    if fmt is not None and fmt >= IF_KEPT:
        return ""
    listed = ", ".join(repr(n) for n in ifs)
    return (f"{shown or golden}: this stored golden was written in {written}, before golden "
            f"format {IF_KEPT}, which {IF_KEPT_CHANGE}: that is why If {listed} had no golden "
            f"tensor. Rewrite it: run the test that stores it with --accuracy-regen (or delete "
            f"it and run that test, which writes it again), then compare again")


def _cache_entry(folder: Path) -> bool:
    """Whether ``folder`` is a golden cache entry (its ``npy/`` and index beside a
    ``golden.json`` of the cache's own, which names no golden format): an entry written by this
    version's format, which its key holds, so rewriting it changes nothing (H110: the CLI
    advised --accuracy-regen for one)."""
    from ..dump.npy_index import ENTRY_NPY_DIR, INDEX_NAME

    return (folder / ENTRY_NPY_DIR).is_dir() and (folder / INDEX_NAME).is_file()


#: the format since which a stored golden numbers an op's tensors by their slots: an omitted
#: optional output leaves its number unused (LSTM's ``Y_h`` is output 1, as ATC's dumps and msit
#: number it); before, a later output was numbered down (``stored_record.by_slot``, H111)
SLOTS_KEPT = 8


def shifted_outputs(record: Optional[Mapping[str, object]], golden, model, *,
                    ops=None) -> Tuple[str, ...]:
    """The ops of ``model`` whose outputs a stored golden written before ``SLOTS_KEPT`` (or
    without a recorded format) holds under other numbers than their slots: the device's output
    1 of such an op read "golden op has no output 1" with advice to make both dumps from the
    same model (H113). msit's goldens number outputs by slot: they hold nothing renumbered."""
    fmt, _ = written_format(record)
    if fmt is not None and fmt >= SLOTS_KEPT:
        return ()
    slots: dict = {}
    for _tensor, op, index in _ops(model, ops).outputs:
        slots.setdefault(op, []).append(index)
    found = []
    for op, present in slots.items():
        if present == list(range(len(present))):
            continue  # no omitted output before a present one: numbered alike
        held = golden.get(op) or golden.get(_sanitized(op))
        if held is not None and sorted(t.index for t in held.outputs) != sorted(present):
            found.append(op)
    return tuple(found)


def _sanitized(name: str) -> str:
    from ..dump.layout import sanitize

    return sanitize(name)


def stale_problem(record: Optional[Mapping[str, object]], golden, model,
                  inputs: Mapping[str, object], input_shape=None) -> Optional[str]:
    """What makes a stored golden (its ``record`` and the loaded ``golden``) too old for this
    model's golden (``stale_ifs``, ``shifted_outputs``), for the refusal; None when nothing."""
    fmt, _ = written_format(record)
    if fmt is not None and fmt >= min(IF_KEPT, SLOTS_KEPT):
        return None
    try:
        ops = _ops(model)  # read once for both
    except AscendAccuracyError:
        raise
    except Exception:  # noqa: BLE001 -- the model's ops unreadable: each check says so itself
        ops = None
    stale = stale_ifs(record, golden.names, model, inputs, input_shape, ops=ops)
    problems = [stale.problem()] if stale is not None else []
    renumbered = shifted_outputs(record, golden, model, ops=ops) if ops is not None else ()
    if renumbered:
        from .onnxruntime_golden import GOLDEN_FORMAT

        _, written = written_format(record)
        ops = ", ".join(repr(n) for n in renumbered)
        problems.append(
            f"this stored golden was written in {written}, before golden format {SLOTS_KEPT}, "
            f"which numbers an op's outputs by their slots (an omitted optional output leaves "
            f"its number unused, as the device's dumps do); this version writes format "
            f"{GOLDEN_FORMAT}. It numbers the outputs of {ops} after an omitted one down, so the "
            f"device's outputs of {ops} would be compared with the wrong tensors or none")
    return ". ".join(problems) or None
