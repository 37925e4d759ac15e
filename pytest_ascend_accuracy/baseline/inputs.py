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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterator, Mapping, Optional

import numpy as np

from .file import InputSpec, TensorSpec, read_baseline
from ..core.atomic_files import BaselineWriteError, dead_writer_leftovers
from ..core.path_lock import PathLocked
from ..dump.npy_writer import write_npy
from ..dump.user_arrays import read_npy
from ..errors import AscendAccuracyError, ConfigError

INPUTS_SUFFIX = ".inputs"


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
    (arrays given now) or ``stored-arrays`` (the baseline's ``.npy`` files)."""

    arrays: Mapping[str, np.ndarray] = field(repr=False)
    spec: InputSpec
    origin: str

    def __getitem__(self, name: str) -> np.ndarray:
        return self.arrays[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.arrays)

    def __len__(self) -> int:
        return len(self.arrays)


def inputs_for_baseline(model, path, *, seed: Optional[int] = None, input_shape=None,
                        inputs: Optional[Mapping[str, np.ndarray]] = None) -> BaselineInputs:
    """The inputs a baselined test runs on.

    * ``seed=N``: ``make_inputs(model, seed=N, input_shape=...)`` (recorded in the baseline);
    * ``inputs={...}``: your arrays, stored as ``.npy`` next to the baseline when it is written;
    * neither: taken from the existing baseline at ``path`` (its seed and input_shape, or its
      stored arrays). With no baseline either, unseeded random inputs would be the only
      choice, and they are refused with a ``ConfigError``.

    An explicit argument always wins over what the baseline holds; ``check_baseline`` then
    reports the difference as "rebaseline required"."""
    from ..graph.onnx_graph import make_inputs

    if seed is not None and inputs is not None:
        raise ConfigError("inputs_for_baseline", "give seed= or inputs=, not both")
    if inputs is not None:
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
            recover_stored_inputs(path)
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
    one is complete. The caller holds the baseline's lock (``check_baseline`` does): two
    writers renaming at once failed each other's writes and left one's file with the other's
    arrays."""
    if not spec.stored or spec.arrays is None:
        raise ConfigError("baseline inputs", "only a spec made from live arrays (stored=True) can "
                                             "be written")
    final = inputs_dir(baseline_path)
    token = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
    tmp = final.parent / f".{final.name}.tmp-{token}"
    old = final.parent / f".{final.name}.old-{token}"
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        recover_stored_inputs(baseline_path)
        tmp.mkdir()
        for k, t in enumerate(spec.tensors):
            with open(tmp / _file_name(k, t.name), "wb") as f:
                write_npy(f, np.asarray(spec.arrays[t.name]))
                f.flush()
                os.fsync(f.fileno())
        if final.exists():
            os.rename(final, old)
        os.rename(tmp, final)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if old.exists() and not final.exists():
            os.rename(old, final)
        if isinstance(exc, OSError) and not isinstance(exc, AscendAccuracyError):
            raise BaselineWriteError(final, f"cannot write stored inputs: "
                                            f"{exc.strerror or exc}", exc.errno) from exc
        raise
    shutil.rmtree(old, ignore_errors=True)
    return final


def recover_stored_inputs(baseline_path) -> None:
    """Repair what a writer killed mid-replace left: put the old directory back when it died
    between its two renames, and remove the hidden directories of dead writers."""
    final = inputs_dir(baseline_path)
    olds = dead_writer_leftovers(final.parent, f".{final.name}.old-")
    if not final.exists() and olds:
        newest = max(olds, key=lambda p: p.stat().st_mtime)
        os.rename(newest, final)
        olds.remove(newest)
    for stale in olds + dead_writer_leftovers(final.parent, f".{final.name}.tmp-"):
        shutil.rmtree(stale, ignore_errors=True)


def load_stored_inputs(baseline_path, spec: InputSpec) -> Dict[str, np.ndarray]:
    """The stored arrays of a baseline, by input name (read fully, ``allow_pickle=False``)."""
    directory = inputs_dir(baseline_path)
    out: Dict[str, np.ndarray] = {}
    for k, t in enumerate(spec.tensors):
        p = directory / _file_name(k, t.name)
        if not p.is_file():
            raise ConfigError(os.fspath(p), f"stored input {t.name!r} of the baseline is missing")
        out[t.name] = read_npy(p, f"a readable stored input {t.name!r}")
    return out


__all__ = ["BaselineInputs", "inputs_for_baseline", "input_spec", "array_sha256", "inputs_dir",
           "write_stored_inputs", "load_stored_inputs", "recover_stored_inputs"]
