"""Whether the dynamic-shape advice's example runs: onnxruntime on seeded inputs at its shape.

The example gives 1 to each dynamic dimension nothing sizes (``shape_advice``). Real models
refuse it: silero_vad's ``input`` [batch, N] at [1, 1] fails in its reflect Pad ('Pad reflect
requires axis length >= 2'), nudenet 320n's [batch, 3, height, width] at 1x3x1x1 where two
branches meet in a Concat (the height halved and doubled again is 2, not 1). So, only when the
error is shown (its text is made on first use: a caller that catches it and goes on runs
nothing), the example is run once in onnxruntime on ``make_inputs``' seeded inputs (seed 0,
the golden's default); where it fails, the sizes of ``SIZES`` are tried in turn, the first that
runs given instead, and where none does the advice says so and offers no value.

Each size goes first to every dynamic dimension but a batch (dimension 0 of an input of two or
more dimensions, 1 there: the sizes a model is run at, and a cheap run), then to every one
(silero_vad's ``state`` [2, batch, 128] has its batch in dimension 1, the same unnamed batch as
``input``'s dimension 0: its 8 kHz branch runs at 128 for each), then, where several inputs
have dynamic dimensions, to those of one input at a time but its batch, every other 1
(``Trial.lone``): silero_vad's 16 kHz branch, the one its seeded ``sr`` takes
(``graph.compared_inputs``), needs 256 samples or more past its padding and a ``state`` whose
batch is ``input``'s, and runs at ``input`` [1, 224], ``state`` [2, 1, 128]. The cost stays
small: one session, its tries stopped after ``BUDGET_S`` seconds, a try skipped whose inputs
hold more than ``BATCH_1_ELEMENTS`` (``ALL_ELEMENTS`` where the batch takes the size too)
elements or made before, and no try at all where the model's weights are not at hand (a
model read without its external data from a path the caller did not pass on: the advice stays
as it was, unchecked).
"""
from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

#: sizes tried after 1, in order: 32 (the largest stride of CNN backbones and YOLO-type
#: detectors, 2**5: the smallest size their down- and up-sampled branches agree at; nudenet
#: 320n runs at 32), 64 and 128 (a signal longer than the padding and filters of an STFT front
#: end: silero_vad runs at 128), 224 (ImageNet classifiers whose Flatten wants 7 x 7 after
#: stride 32), 256 and 320 (detection and OCR inputs; PP-OCR det, nudenet 320n), 512 (a sequence
#: length, silero_vad's 16 kHz chunk) and 640 (YOLO's default image)
SIZES = (32, 64, 128, 224, 256, 320, 512, 640)
#: most elements of the inputs of a try with batch 1 (an image of 1 x 3 x 640 x 640 is 1.2 M)
BATCH_1_ELEMENTS = 1 << 21
#: most elements of the inputs of a try that gives the batch the size too (32 x 3 x 32 x 32 is
#: 98 k, past it; silero_vad's 128 x 128 and 2 x 128 x 128 are 49 k)
ALL_ELEMENTS = 1 << 16
#: no try starts after this many seconds of tries
BUDGET_S = 20.0

#: (input name, dimension index, batch): a dimension the example gives a size nothing told
Slot = Tuple[str, int, bool]
#: ``run(example)``: None where the model runs at that shape, else onnxruntime's refusal
Run = Callable[[Dict[str, Tuple[int, ...]]], Optional[str]]


@dataclass(frozen=True)
class Trial:
    """What running the example said: ``example`` the first shape that ran (None: none did or
    none could be tried), ``size`` the size it gave (1: the example as made), ``batch_1``
    whether the batch stayed 1, ``failed`` why the example at 1 failed, ``tried`` the sizes
    tried after 1, ``lone`` the input whose dynamic dimensions took the size, every other 1
    ("" where every input's did)."""
    example: Optional[Dict[str, Tuple[int, ...]]]
    size: int
    batch_1: bool
    failed: str
    tried: Tuple[int, ...]
    lone: str = ""


#: trials made in this process, by (model content digest, seed, example, slots): a
#: model refused at every size cost up to ``BUDGET_S`` per error shown, paid again by every
#: check of it (3 YAML entries of one model: 46 s; H115)
_TRIALS: Dict[tuple, Optional["Trial"]] = {}


def first_that_runs(make_run: Callable[[], Optional[Run]],
                    example: Mapping[str, Tuple[int, ...]],
                    slots: Sequence[Slot]) -> Optional[Trial]:
    """The ``Trial`` of ``example`` (the advice's, 1 at each of ``slots``) with the ``run`` that
    ``make_run()`` makes (``runner`` below); None where it cannot be run (no onnxruntime, weights
    not at hand, a session onnxruntime refuses, inputs it cannot make, or the same refusal at
    every size: the seeded values', not the shape's): the advice stays unchecked. Made once per
    process for a model file (``_TRIALS``)."""
    key = _trial_key(make_run, example, slots)
    if key is not None and key in _TRIALS:
        return _TRIALS[key]
    trial = _first_that_runs(make_run, example, slots)
    if key is not None:
        _TRIALS[key] = trial
    return trial


def _trial_key(make_run, example, slots) -> Optional[tuple]:
    """The memo key of a trial whose ``make_run`` is a ``functools.partial`` of ``runner`` below
    on a model file: a digest of the file's bytes, not its name and mtime, which a file
    rewritten in place at the same size and mtime keeps (H116: an edge Pad got the reflect
    Pad's advice; external data files are not in it: the graph decides what runs); None for a
    model given as bytes or a ModelProto (not memoised)."""
    import hashlib

    args = getattr(make_run, "args", ())
    if getattr(make_run, "func", None) is not runner or len(args) < 2 \
            or not isinstance(args[0], (str, os.PathLike)):
        return None
    content = hashlib.blake2b(digest_size=16)
    try:
        with open(args[0], "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                content.update(block)
    except OSError:  # unreadable: tried each time, as before the memo
        return None
    return (os.path.realpath(args[0]), content.hexdigest(), args[1],
            tuple(sorted((n, tuple(d)) for n, d in example.items())), tuple(slots))


def _first_that_runs(make_run, example, slots) -> Optional[Trial]:
    run = make_run()
    if run is None:
        return None
    failed = run(dict(example))
    if failed is None:
        return Trial(dict(example), 1, False, "", ())
    if failed == _CANNOT:
        return None
    start, tried, why = time.monotonic(), [], {failed}
    failed = refusal_line(failed)
    for size, batch_1, lone, shape in _tries(example, slots):
        if time.monotonic() - start > BUDGET_S:
            break
        if size not in tried:
            tried.append(size)
        failed_here = run(shape)
        if failed_here is None:
            return Trial(shape, size, batch_1, failed, tuple(tried), lone)
        why.add(failed_here)
    if len(why) == 1 and tried:  # the same refusal at every size: of the seeded values (an
        return None  # axis input of 5), not of the shape; the user's data may run at 1
    return Trial(None, 0, False, failed, tuple(tried))


def _tries(example, slots: Sequence[Slot]):
    """``(size, batch_1, lone, shape)`` of each try, in order, those too big and those made
    already left out."""
    has_batch = any(batch for _, _, batch in slots)
    sized = list(dict.fromkeys(name for name, _, batch in slots if not batch))
    lone_ones = sized if len({name for name, _, _ in slots}) > 1 else []
    made = set()
    for size in SIZES:
        variants = [(b, "") for b in ((True, False) if has_batch else (False,))]
        for batch_1, lone in variants + [(True, name) for name in lone_ones]:
            shape = _at(example, slots, size, batch_1, lone)
            most = BATCH_1_ELEMENTS if batch_1 or not has_batch else ALL_ELEMENTS
            key = tuple(sorted(shape.items()))
            if _elements(shape) <= most and key not in made:
                made.add(key)
                yield size, batch_1, lone, shape


def _at(example, slots, size: int, batch_1: bool, lone: str = "") -> Dict[str, Tuple[int, ...]]:
    """``example`` with ``size`` at each slot, 1 at a batch where ``batch_1``, and 1 at every
    slot of another input than ``lone`` where it is given."""
    out = {n: list(d) for n, d in example.items()}
    for name, k, batch in slots:
        out[name][k] = 1 if (batch and batch_1) or (lone and name != lone) else size
    return {n: tuple(d) for n, d in out.items()}


def _elements(example) -> int:
    total = 0
    for dims in example.values():
        count = 1
        for d in dims:
            count *= int(d)
        total += count
    return total


#: a try that could not be made (not a failure of the model at that shape)
_CANNOT = "\0cannot"


def runner(source, seed: int, make_inputs, session_options) -> Optional[Run]:
    """``run(example)`` of ``source`` (a model path, bytes or ModelProto): None where the model
    runs at that shape on ``make_inputs(source, seed=seed, input_shape=example)``, else
    onnxruntime's refusal; ``session_options()``: the golden's (``onnx_graph``, which passes
    them: this module imports nothing of it). None where no session can be made."""
    try:
        session = _session(source, session_options)
    except Exception:  # noqa: BLE001 - no onnxruntime, or a session it refuses: not judged
        return None
    if session is None:
        return None
    import onnxruntime  # (imported: the session is made)

    quiet = onnxruntime.RunOptions()
    quiet.log_severity_level = 4  # the refusals are said in the advice, once

    def run(example: dict) -> Optional[str]:
        try:
            feeds = make_inputs(source, seed=seed, input_shape=example)
        except Exception:  # noqa: BLE001 - inputs not made: the example is not judged
            return _CANNOT
        try:
            session.run(None, feeds, quiet)
        except Exception as exc:  # noqa: BLE001 - onnxruntime's refusal at this shape
            return str(exc)
        return None

    return run


def _session(source, session_options):
    """An onnxruntime session of ``source``, or None where its weights are not at hand (a
    ModelProto holding references to external data whose folder is unknown)."""
    import onnx

    from .onnxruntime_version import require_onnxruntime

    if isinstance(source, onnx.ModelProto):
        from onnx.external_data_helper import _get_all_tensors

        if any(t.data_location == onnx.TensorProto.EXTERNAL for t in _get_all_tensors(source)):
            return None
        source = source.SerializeToString()
    ort = require_onnxruntime()
    options = session_options()
    options.log_severity_level = 4
    if not isinstance(source, (bytes, bytearray)):
        source = os.fspath(source)  # (onnxruntime reads its external data beside it)
    return ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])


def refusal_line(message: str) -> str:
    """onnxruntime's refusal in one short line: the innermost node and its status message
    ("Pad 'pad': Pad reflect requires axis length >= 2 after slicing.")."""
    runs = list(re.finditer(r"running (\w+) node\. Name:'([^']*)' Status Message: ", message))
    if runs:
        last = runs[-1]
        said = message[last.end():]
        said = said.split("[ONNXRuntimeError] : ")[-1]
        said = re.sub(r"^\d+ : \w+ : ", "", said)
        said = re.sub(r"^\S+:\d+ [^()]*\([^()]*\) ?", "", said)  # the source line, function
        text = f"{last.group(1)} {last.group(2)!r}: {said}"
    else:
        text = re.sub(r"^\[ONNXRuntimeError\] : \d+ : \w+ : ", "", message)
    text = " ".join(text.split())
    return text if len(text) <= 160 else text[:157].rstrip() + "..."


def slots_of(dynamic: Mapping[str, Sequence[Tuple[Optional[int], str]]],
             taken: Mapping[str, int]) -> List[Slot]:
    """The dimensions of ``dynamic`` (each ``(size or None, dim_param)``) the example sizes
    itself (not a named one ``taken`` gives), each marked batch where it is dimension 0 of an
    input of two or more dimensions and its name (if any) names no other dimension."""
    slots: List[Tuple[str, int, str]] = []
    for name, dims in dynamic.items():
        for k, (size, param) in enumerate(dims):
            if size is None and param not in taken:
                slots.append((name, k, param if param and param != "?" else ""))
    out: List[Slot] = []
    for name, k, param in slots:
        rank = len(dynamic[name])
        batch = k == 0 and rank >= 2 and not any(
            p == param and (k2 != 0 or len(dynamic[n2]) < 2)
            for n2, k2, p in slots if param)
        out.append((name, k, batch))
    return out
