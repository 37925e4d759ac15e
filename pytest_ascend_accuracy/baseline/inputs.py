"""Inputs stored with a baseline, so that a rerun compares the same data.

A baseline records either a **seed** (plus ``input_shape``) that regenerates the inputs with
``onnx_graph.make_inputs``, or **stored** arrays kept as ``.npy`` files in a directory next to the
baseline file (``mlp/default.yaml`` -> ``mlp/default.inputs/``) for inputs a seed cannot make
(a real image, a tokenised sentence). Either way the name, dtype, shape and sha256 of every input
are recorded, so data that changed under the same seed (another numpy, an edited ``.npy``) is
caught as "rebaseline required" instead of showing up as operator regressions.

Random inputs without a seed cannot be reproduced and are refused: ``inputs_for_baseline``
needs a seed, user arrays, or an existing baseline to take them from.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import uuid
from collections.abc import Mapping as MappingABC
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Dict, Iterator, Mapping, Optional

import numpy as np

from .file import InputSpec, TensorSpec, read_baseline
from ..core import writer_lock
from ..core.atomic_files import BaselineWriteError
from ..core.path_lock import PathLocked
from ..errors import AscendAccuracyError, ConfigError
from ..golden.stored_recovery import Recovery
from .stored_npy import read_stored, write_stored

INPUTS_SUFFIX = ".inputs"
_TMP, _OLD, _DEL = "tmp", "old", "del"


def array_sha256(array: np.ndarray) -> str:
    """sha256 of an array's dtype, shape and bytes (C order, little-endian stored as is)."""
    arr = np.ascontiguousarray(array)
    h = hashlib.sha256(f"{arr.dtype.str}|{arr.shape}|".encode())
    h.update(arr.tobytes())
    return h.hexdigest()


def _check_seed(seed, where: str) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or int(seed) < 0:
        raise ConfigError(where, f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)


def input_spec(inputs: Mapping[str, np.ndarray], *, seed: Optional[int] = None, input_shape=None,
               stored: bool = False) -> InputSpec:
    """The spec of live inputs: ``seed`` when they came from ``make_inputs(seed=...)``, or
    ``stored=True`` to keep the arrays next to the baseline. Neither is refused."""
    where = "baseline inputs"
    if not isinstance(inputs, MappingABC) or not inputs:
        raise ConfigError(where, "expected a non-empty mapping {input name: array}")
    if seed is None and not stored:
        raise ConfigError(where, "random unseeded inputs are refused: a baseline must be able to "
                                 "rerun on the same data. Use inputs_for_baseline(model, path, "
                                 "seed=0), or inputs=... to store your arrays next to it")
    if seed is not None and stored:
        raise ConfigError(where, "give a seed or stored arrays, not both")
    arrays = {str(k): np.asarray(v) for k, v in inputs.items()}
    for name, arr in arrays.items():
        if arr.dtype.hasobject:
            raise ConfigError(where, f"input {name!r} is an object array; only numeric arrays "
                                     "can be stored")
    tensors = tuple(TensorSpec(name, arr.dtype.name, tuple(int(d) for d in arr.shape),
                               array_sha256(arr)) for name, arr in sorted(arrays.items()))
    shape = None
    if input_shape is not None:
        from ..graph.onnx_graph import parse_input_shape

        shape = tuple(sorted((n, tuple(d)) for n, d in parse_input_shape(input_shape).items()))
    return InputSpec(seed=None if seed is None else _check_seed(seed, where), tensors=tensors,
                     input_shape=shape, stored=stored, arrays=arrays if stored else None)


@dataclass(frozen=True, eq=False)
class BaselineInputs(MappingABC):
    """Inputs for a baselined run: a read-only mapping {input name: array} (pass it wherever
    inputs go) that also carries its ``spec`` for ``check_baseline``. ``origin`` says where the
    arrays came from: ``seed`` (given now), ``stored-seed`` (the baseline's seed), ``user``
    (arrays given now), ``seed+user`` (some given now, the rest seeded) or ``stored-arrays``
    (the baseline's ``.npy`` files)."""

    arrays: Mapping[str, np.ndarray] = field(repr=False)
    spec: InputSpec
    origin: str

    def __getitem__(self, name: str) -> np.ndarray:
        return self.arrays[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.arrays)

    def __len__(self) -> int:
        return len(self.arrays)


def _check_names(model, inputs, input_shape) -> None:
    """``accuracy_inputs(m, inputs=...)``'s array names and ``input_shape`` names are the
    model's inputs (a misspelled one was stored and recorded as given)."""
    from ..graph.input_names import check_input_names, listed_initializers, require_mapping
    from ..graph.onnx_graph import graph_inputs, load_model, model_label, parse_input_shape

    if model is None:
        return  # input_spec says what an inputs mapping is
    graph = load_model(model, weights=False)
    names = [i.name for i in graph_inputs(graph)]
    where = f"accuracy_inputs(inputs=...) of {model_label(model)!r}"
    require_mapping(inputs, lambda: names, where)
    check_input_names(inputs, names, where, listed_initializers(graph))
    check_input_names(parse_input_shape(input_shape, model=graph) or {}, names, "input_shape",
                      listed_initializers(graph))


def inputs_for_baseline(model, path, *, seed: Optional[int] = None, input_shape=None,
                        inputs: Optional[Mapping[str, np.ndarray]] = None) -> BaselineInputs:
    """The inputs a baselined test runs on.

    * ``seed=N``: ``make_inputs(model, seed=N, input_shape=...)`` (recorded in the baseline);
    * ``inputs={...}``: your arrays, stored as ``.npy`` next to the baseline when it is written;
    * both: your arrays for the inputs they name, the others seeded as ``seed=N`` alone draws
      them (silero-vad's ``sr`` given, its audio and state seeded); every array is stored next
      to the baseline, as your own are, so a rerun needs neither the seed nor this version's
      draw to reproduce them;
    * neither: taken from the existing baseline at ``path`` (its seed and input_shape, or its
      stored arrays). With no baseline either, unseeded random inputs would be the only
      choice, and they are refused with a ``ConfigError``.

    An explicit argument always wins over what the baseline holds; ``check_baseline`` then
    reports the difference as "rebaseline required"."""
    from ..graph.onnx_graph import make_inputs

    if seed is not None and inputs is not None:  # yours, and the rest seeded: all stored
        seed = _check_seed(seed, "inputs_for_baseline")
        _check_names(model, inputs, input_shape)
        arrays = make_inputs(model, seed=seed, input_shape=input_shape, given=inputs)
        spec = input_spec(arrays, stored=True, input_shape=input_shape)
        return BaselineInputs(dict(spec.arrays), spec, "seed+user")
    if inputs is not None:  # names only: AIPP models take raw images of other shapes
        _check_names(model, inputs, input_shape)
        spec = input_spec(inputs, stored=True, input_shape=input_shape)
        return BaselineInputs(dict(spec.arrays), spec, "user")
    if seed is not None:
        seed = _check_seed(seed, "inputs_for_baseline")
        arrays = make_inputs(model, seed=seed, input_shape=input_shape)
        return BaselineInputs(arrays, input_spec(arrays, seed=seed, input_shape=input_shape), "seed")
    path = Path(path)
    if not path.exists():
        raise ConfigError(os.fspath(path), "no baseline yet and no seed given: random unseeded "
                                           "inputs are refused. Pass seed=0 (or inputs=... to "
                                           "store your own arrays next to the baseline)")
    with PathLocked(path, "baseline"):  # the file and its arrays as one writer left them
        stored = read_baseline(path).inputs
        if stored.stored:
            _report(recover_stored_inputs(path), path)
            arrays = load_stored_inputs(path, stored)
    if stored.stored:
        spec = input_spec(arrays, stored=True, input_shape=input_shape)
        return BaselineInputs(dict(spec.arrays), spec, "stored-arrays")
    shape = input_shape if input_shape is not None else (
        None if stored.input_shape is None else {n: list(d) for n, d in stored.input_shape})
    arrays = make_inputs(model, seed=stored.seed, input_shape=shape)
    return BaselineInputs(arrays, input_spec(arrays, seed=stored.seed, input_shape=shape),
                          "stored-seed")


# --------------------------------------------------------------------------- stored arrays
def inputs_dir(baseline_path) -> Path:
    """``dir/default.yaml`` -> ``dir/default.inputs``."""
    p = Path(baseline_path)
    return p.with_name(p.stem + INPUTS_SUFFIX)


def _file_name(k: int, name: str) -> str:
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in name)[:80] or "input"
    return f"{k:02d}-{safe}.npy"


def write_stored_inputs(baseline_path, spec: InputSpec) -> Path:
    """Write the spec's arrays as ``.npy`` files (spec order) into the inputs directory, built in
    a hidden sibling and renamed into place; an older directory is replaced only once the new
    one is complete, then moved to ``.<name>.del-*`` (a name recovery never restores) and
    deleted there: a kill mid-delete leaves a part of it only under that name. The caller holds
    the baseline's lock (``check_baseline`` does): two writers renaming at once failed each
    other's writes and left one's file with the other's arrays."""
    if not spec.stored or spec.arrays is None:
        raise ConfigError("baseline inputs", "only a spec made from live arrays (stored=True) can "
                                             "be written")
    final = inputs_dir(baseline_path)
    token = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
    tmp = final.parent / f".{final.name}.{_TMP}-{token}"
    old = final.parent / f".{final.name}.{_OLD}-{token}"
    doomed = final.parent / f".{final.name}.{_DEL}-{token}"
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        _report(recover_stored_inputs(baseline_path), baseline_path)
    except OSError as exc:
        if isinstance(exc, AscendAccuracyError):
            raise
        raise BaselineWriteError(final, f"cannot write stored inputs: {exc.strerror or exc}",
                                 exc.errno) from exc
    # every entry of this write is ours until the end: no recovery (another container's
    # included) takes one for a killed writer's
    with writer_lock.holding(final.parent, f".{final.name}.", token):
        _replace(final, spec, tmp, old, doomed)
    return final


def _replace(final: Path, spec: InputSpec, tmp: Path, old: Path, doomed: Path) -> None:
    try:
        tmp.mkdir()
        for k, t in enumerate(spec.tensors):
            with open(tmp / _file_name(k, t.name), "wb") as f:
                write_stored(f, spec.arrays[t.name])
                f.flush()
                os.fsync(f.fileno())
        if final.exists():
            os.rename(final, old)  # whole: recovery may put it back until the new one is in
        os.rename(tmp, final)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if old.exists() and not final.exists():
            os.rename(old, final)
        if isinstance(exc, OSError) and not isinstance(exc, AscendAccuracyError):
            raise BaselineWriteError(final, f"cannot write stored inputs: "
                                            f"{exc.strerror or exc}", exc.errno) from exc
        raise
    if old.exists():  # the new inputs are in place: a failure here only leaves a leftover
        try:
            os.rename(old, doomed)
        except OSError:
            doomed = old  # still whole; recovery restores an .old-* only when it checks so
        shutil.rmtree(doomed, ignore_errors=True)


class InputsRecovery(Recovery):
    """What ``recover_stored_inputs`` found and did, said as stored goldens say it (the golden
    side's ``Recovery``): ``installed`` the old directory put back, ``removed`` every leftover
    deleted, ``discarded`` ({name: why}) the old directories among them not put back although
    the inputs directory was gone."""

    def note(self) -> str:
        rest = Recovery.note(replace(self, installed=None))
        if not self.installed:
            return rest
        head = (f"recovered the previous stored inputs (the directory itself was missing) from "
                f"{self.installed}")
        return "; ".join(p for p in (head, rest) if p)


def recover_stored_inputs(baseline_path) -> InputsRecovery:
    """Repair what writers killed mid-replace left (the caller holds the baseline's lock): when
    the inputs directory is gone, put back the newest ``.old-*`` known complete (every input the
    baseline file lists, with its sha256: one left by a writer before ``.del-*`` existed may be
    half deleted); remove every other leftover of a dead writer. Says what it did."""
    final = inputs_dir(baseline_path)
    out = InputsRecovery(final)
    head = f".{final.name}."
    with writer_lock.Leftovers(final.parent, head) as gone:  # their writers' locks held
        olds = gone.find(f"{head}{_OLD}-")
        if not final.exists() and olds:
            for old in sorted(olds, key=lambda p: p.stat().st_mtime, reverse=True):
                why = _not_restorable(baseline_path, old)
                if why is None:
                    os.rename(old, final)
                    olds.remove(old)
                    out.installed = old.name
                    break
                out.discarded[old.name] = why
        for kind in (_DEL, _TMP):
            olds += gone.find(f"{head}{kind}-")
        for stale in olds:
            out.removed.append(stale.name)
            shutil.rmtree(stale, ignore_errors=True)
    return out


def _first_differing(directory: Path, spec: InputSpec):
    """``(name, file, "missing" | "changed" | "unreadable: <why>")`` of the first input
    ``spec`` lists that ``directory`` lacks, holds with other bytes or cannot be read back
    (``stored_npy.read_stored``), or None."""
    for k, t in enumerate(spec.tensors):
        p = directory / _file_name(k, t.name)
        if not p.is_file():
            return t.name, p, "missing"
        try:
            same = array_sha256(read_stored(p, t)) == t.sha256
        except AscendAccuracyError as exc:
            return t.name, p, f"unreadable: {getattr(exc, 'problem', exc)}"
        if not same:
            return t.name, p, "changed"
    return None


def _not_restorable(baseline_path, old: Path) -> Optional[str]:
    """Why the old inputs directory ``old`` may not come back (None: it holds every input the
    baseline file lists, each of its recorded sha256)."""
    try:
        spec = read_baseline(baseline_path).inputs
    except AscendAccuracyError:
        return "its baseline file cannot be read to check it"
    if not spec.stored:
        return "the baseline file records no stored inputs"
    differing = _first_differing(old, spec)
    if differing is None:
        return None
    name, _, state = differing
    return f"incomplete: stored input {name!r} the baseline lists is {state}"


def stored_inputs_problem(baseline_path, spec: InputSpec) -> Optional[str]:
    """What is wrong with the arrays stored next to a baseline that records them (``spec``):
    one missing, or read back with other bytes than it lists; None otherwise. A test passing
    its own arrays never reads them, so a folder left out of a commit or edited went unseen
    while the file said ``stored: true``. The caller holds the baseline's lock: what a killed
    writer left is recovered first, as every reader does. An ml_dtypes array (bfloat16...) is
    read back from its bits (``stored_npy``), so it is judged like any other; a file that
    cannot be read back is a problem too (nobody could rerun the baseline on it)."""
    _report(recover_stored_inputs(baseline_path), baseline_path)
    differing = _first_differing(inputs_dir(baseline_path), spec)
    if differing is None:
        return None
    name, p, state = differing
    if state == "missing":
        return f"missing stored input {name!r} ({p.name})"
    if state == "changed":
        return f"changed: stored input {name!r} ({p.name}) is not the array it records"
    return (f"unreadable: stored input {name!r} ({p.name}) cannot be read back "
            f"({state[len('unreadable: '):]})")


def _report(done: InputsRecovery, baseline_path) -> None:
    """Say what a recovery repaired (the golden side lists it in the session summary; a
    baseline has no summary of its own, so it is a warning naming the baseline)."""
    if done:
        from ..core.locations import shown  # relative to here, as every printed path

        from ..core.caller_warning import warn_at_caller

        warn_at_caller(UserWarning(f"stored inputs of baseline "
                                   f"{shown(baseline_path, os.getcwd())}: {done.note()}"))


def load_stored_inputs(baseline_path, spec: InputSpec) -> Dict[str, np.ndarray]:
    """The stored arrays of a baseline, by input name (read fully, ``allow_pickle=False``)."""
    directory = inputs_dir(baseline_path)
    out: Dict[str, np.ndarray] = {}
    for k, t in enumerate(spec.tensors):
        p = directory / _file_name(k, t.name)
        if not p.is_file():
            raise ConfigError(os.fspath(p), f"stored input {t.name!r} of the baseline is missing")
        out[t.name] = read_stored(p, t)
    return out


__all__ = ["BaselineInputs", "InputsRecovery", "inputs_for_baseline", "input_spec", "array_sha256",
           "inputs_dir", "write_stored_inputs", "load_stored_inputs", "recover_stored_inputs",
           "stored_inputs_problem"]
