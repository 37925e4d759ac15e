"""The inputs of a YAML suite entry: ``inputs:`` (``{seed: N}``, optionally with ``shapes:``,
or ``{input name: file.npy}``) and ``input_shape:``, validated at collection.

``inputs: {seed: N, shapes: {x: [dims]}}`` and ``input_shape: {x: [dims]}`` both set the
shape of input ``x`` (the generated array's and the conversion's, which are one): given for
different inputs they combine; given for one input they must agree, else the suite is refused
naming both keys (a trial's entry ran at ``input_shape`` with ``shapes`` dropped silently).

Each ``.npy`` file of ``inputs:`` is checked against the model's input at collection, from its
header (``check_input_files``): a file of another batch, rank or dtype is refused under its key,
naming the file and a fix that works as printed (a cast spells the dtype as a string,
``.astype('bool')``: ``np.bool`` is missing from numpy 1.24 to 1.26). An input of a type no
file can feed (bfloat16, float8, int4: onnxruntime takes no such array; complex: it loads no
such model; string: a .npy file of strings holds Python objects) is refused saying so, and what
to export instead (``graph.feedable``); so is a sequence, optional or sparse input, before any
advice names it as a file (``inputs_spelling``).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Mapping, Optional, Tuple

from ..core.locations import shown
from ..core.yaml_text import yaml_flow_map
from ..errors import ConfigError, closest_text

Shapes = Dict[str, Tuple[int, ...]]


@dataclass(frozen=True)
class InputsSpec:
    """Seeded random inputs (``seed``) or ``.npy`` files per input name (``files``)."""

    seed: Optional[int] = None
    files: Tuple[Tuple[str, Path], ...] = ()

    def load(self, model, input_shape=None):
        if self.files:
            from ..dump.user_arrays import read_npy

            return {name: read_npy(path, f"a readable input {name!r}") for name, path in self.files}
        from ..graph.onnx_graph import make_inputs

        return make_inputs(model, seed=self.seed or 0, input_shape=input_shape)


def existing_file(base_dir: Path, rel: str, at: str) -> Path:
    """The file ``rel`` names (relative to the suite's folder ``base_dir``); one that is not
    there is an error printing it as a user can paste it where pytest runs (it printed
    ``/abs/suite/dir/../x.onnx``)."""
    p = Path(rel).expanduser()
    p = p if p.is_absolute() else base_dir / p
    if not p.is_file():
        from ..core.closest_paths import closest_in_folder

        near = closest_in_folder(p, False, rel, (p.suffix,) if p.suffix else None)
        raise ConfigError(at, f"file not found: {shown(os.path.normpath(p), Path.cwd())} "
                              f"({rel!r} from the suite's folder){near}")
    return p


def parse_inputs(value, base_dir: Path, at: str) -> Tuple[InputsSpec, Optional[Shapes]]:
    if not isinstance(value, Mapping) or not value:
        raise ConfigError(at, "must be {seed: N} (optionally with shapes) or "
                              "{input name: file.npy}")
    if "seed" in value:
        for key in value:
            if key not in ("seed", "shapes"):
                raise ConfigError(f"{at}.{key}", "a generator spec takes only 'seed' and 'shapes'")
        seed = value["seed"]
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ConfigError(f"{at}.seed", f"must be a non-negative integer, got {seed!r}")
        return InputsSpec(seed=seed), shape_map(value.get("shapes"), f"{at}.shapes")
    files = []
    for name, rel in value.items():
        if not isinstance(rel, str) or not rel.endswith(".npy"):
            raise ConfigError(f"{at}.{name}", f"must be a .npy file, got {rel!r}")
        files.append((str(name), existing_file(base_dir, rel, f"{at}.{name}")))
    return InputsSpec(files=tuple(files)), None


def inputs_spelling(value, model, at: str) -> None:
    """An inputs mapping of files is ``{<input name>: <file>.npy}`` with the model's own input
    names: ``{npz: x.npz}`` and ``{npy: x.npy}`` were refused without saying so (a trial).
    ``model``: a ``yaml_model.EntryModel`` (names None: not a model we can read, the run
    says so)."""
    if not isinstance(value, Mapping) or not value or "seed" in value:
        return
    names = model.input_names
    right = (yaml_flow_map({n: "<file>.npy" for n in names}) if names
             else "{<input name>: <file>.npy}")
    of = "" if names is None else f" (the inputs of {model.name}: {', '.join(names) or '(none)'})"
    from ..graph.input_names import listed_initializers, listed_text

    listed = [] if model.graph is None else listed_initializers(model.graph)
    for vi in model.inputs or ():  # first: no mapping feeds the model (a review: a sequence
        # input was asked for as a .npy file, by the missing-input and the misspelling advice)
        if vi.name in listed:
            continue
        if not vi.type.HasField("tensor_type"):
            raise ConfigError(at, _not_a_tensor(vi, model.name, at))
        from ..graph.feedable import check_feedable  # a string or complex input no advice may

        given = value.get(vi.name)  # ask a file of (two reviews), its file named where given
        check_feedable(vi, f"{at}.{vi.name}: {given}" if isinstance(given, str) else at,
                       from_file=True)
    for key, rel in value.items():
        npz = isinstance(rel, str) and rel.endswith(".npz")
        if not npz and (names is None or str(key) in names):
            continue
        why = (f"a .npz archive is not read in a YAML suite, a .npy file per input is (got "
               f"{rel!r}: save each array with numpy.save)" if npz
               else listed_text(str(key)) if str(key) in listed
               else f"no model input named {str(key)!r}{closest_text(str(key), names)}")
        raise ConfigError(f"{at}.{key}", f"{why}; write inputs: {right}{of}, or {{seed: N}} for "
                                         f"generated inputs")
    given = {str(k) for k in value}
    missing = [n for n in names or () if n not in given and n not in listed]
    if missing:  # (a trial: found only when the item ran, naming no key and no fix)
        shown = ", ".join(repr(n) for n in missing)
        full = yaml_flow_map({n: value.get(n, "<file>.npy") for n in names})
        raise ConfigError(at, f"model input{'s' if len(missing) > 1 else ''} {shown} not given; "
                              f"write inputs: {full}{of}, or {{seed: N}} for generated inputs")


#: an input that is no tensor: (its kind with an article, what ATC has none of, what it is not)
_NOT_TENSOR = {"sequence_type": ("a sequence", "sequence tensors", "a tensor"),
               "optional_type": ("an optional", "optional values", "a tensor"),
               "map_type": ("a map", "maps", "a tensor"),
               "sparse_tensor_type": ("a sparse tensor", "sparse tensors", "a dense tensor")}


def _not_a_tensor(vi, model_name: str, at: str) -> str:
    """Why input ``vi`` (a sequence, optional, map or sparse tensor) is refused; the model named
    where the key is the defaults' (it applies to every model of the suite: a review)."""
    which = vi.type.WhichOneof("value") or ""
    kind, none, dense = _NOT_TENSOR.get(which, ("a non-tensor value", "such values", "a tensor"))
    of = f" of {model_name}" if at.rpartition(": ")[2].startswith("defaults") else ""
    return (f"model input {vi.name!r}{of} is {kind}, not {dense}: ATC has no {none} and no file "
            f"feeds it; export the model with {dense} in its place")


def shape_map(value, at: str) -> Optional[Shapes]:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ConfigError(at, f"must map input names to shapes, got {value!r}")
    out = {}
    for name, dims in value.items():
        if (not isinstance(dims, list) or not all(isinstance(d, int) and not isinstance(d, bool)
                                                  and d > 0 for d in dims)):
            raise ConfigError(f"{at}.{name}", f"must be a list of positive integers, got {dims!r}")
        out[str(name)] = tuple(dims)
    return out


def combined_shapes(input_shape: Optional[Shapes], input_shape_at: str,
                    generated: Optional[Shapes], generated_at: str,
                    model=None) -> Optional[Shapes]:
    """The entry's input shapes from ``input_shape:`` and ``inputs: {seed: N, shapes: ...}``
    (``*_at``: each one's key, ``file: models[0].input_shape``): both set the shape of an input
    (``InputsSpec.load`` generates at the conversion's shape), so they combine, and one input
    given two different shapes is refused naming both keys. Each names inputs of ``model`` (a
    ``yaml_model.EntryModel``), checked here, at collection: a misspelled name failed the item
    when it ran, without the file or key."""
    if model is not None:
        _input_names(model, input_shape, input_shape_at)
        _input_names(model, generated, generated_at)
    if input_shape is None or generated is None:
        return input_shape if generated is None else generated
    for name, dims in generated.items():
        if name in input_shape and input_shape[name] != dims:
            _, _, other = input_shape_at.rpartition(": ")
            raise ConfigError(f"{generated_at}.{name}", (
                f"{list(dims)} disagrees with {other}.{name}: {list(input_shape[name])}; both set "
                f"the shape of input {name!r} (the generated array is converted and run at one "
                f"shape): give it once, in input_shape or in inputs.shapes"))
    return {**generated, **input_shape}


def _input_names(model, shapes: Optional[Shapes], at: str) -> None:
    from ..graph.input_names import check_input_names, listed_initializers

    names = model.input_names if shapes else None
    if names is None:  # nothing to check, or not a model we can read: running it says so
        return
    unknown = [n for n in shapes if n not in names]
    if unknown:  # the model named: a defaults: entry applies to every model of the suite
        check_input_names(unknown[:1], names, f"{at}.{unknown[0]} (model {model.name})",
                          listed_initializers(model.graph))


def check_input_files(inputs: InputsSpec, written, model, input_shape: Optional[Shapes],
                      at: str, input_shape_at: str) -> None:
    """Each ``.npy`` file of ``inputs: {name: file}`` holds what the model's input takes: its
    dtype, its rank and each fixed dimension (``input_shape:``'s, else the model's), read from
    the header alone, at collection. A frames file of batch 4 for a batch-1 model failed the
    item when it ran with ``input 'x' has shape [4, 16], the model declares [1, 16]``, naming
    neither the file nor the key. ``written``: the mapping as the suite writes it (the paths
    the advice names); ``model``: a ``yaml_model.EntryModel`` (not readable: the run says).
    Inputs drawn from a seed (``{seed: N}``, the default) are checked for a type no seed makes
    (``feedable.check_feedable``), here rather than once the item runs."""
    from ..dump.npy_header import read_npy_layout
    from ..errors import DumpFormatError
    from ..graph.feedable import check_feedable
    from ..graph.onnx_graph import declared_shape, input_dtype

    if inputs.seed is not None:  # drawn from the seed: refused here, not once the item runs
        where = (f"{at} (not given: {{seed: 0}})" if written is None  # (a key not in the file)
                 else f"{at} (model {model.name})" if at.endswith("defaults.inputs") else at)
        for vi in model.inputs or ():  # (defaults': the model named, as for shapes, H86)
            if vi.type.HasField("tensor_type"):
                check_feedable(vi, where, generated=True)
        return
    if not inputs.files:
        return
    specs = {i.name: i for i in model.inputs or ()}
    written = {str(k): v for k, v in written.items()}  # as parse_inputs names them
    for name, path in inputs.files:
        vi = specs.get(name)
        if vi is None or not vi.type.HasField("tensor_type"):
            continue  # no such input, or no tensor: inputs_spelling said so
        key, rel = f"{at}.{name}", str(written[name])
        try:  # bfloat16, float8, int4, complex, string: no file feeds it
            check_feedable(vi, key, from_file=True)
        except ConfigError as exc:
            raise ConfigError(key, f"{rel}: {exc.problem}") from None
        try:
            layout = read_npy_layout(path)
        except DumpFormatError as exc:
            raise ConfigError(key, f"{rel}: {exc.problem}") from None
        try:
            want_dtype = input_dtype(vi)
        except ConfigError:
            continue
        shape = list(layout.shape)
        own = declared_shape(vi) if vi.type.tensor_type.HasField("shape") else None
        given = (input_shape or {}).get(name)
        want = given if given is not None else own
        fits = _fits(want, shape)
        if fits and layout.dtype == want_dtype:
            continue
        said = (f"{input_shape_at.rpartition(': ')[2]}.{name} says" if given is not None
                else f"model {model.name}'s input {name!r} is")
        if fits:
            problem = f"{rel} holds {layout.dtype} values; {said} {want_dtype}"
        else:
            problem = (f"{rel} holds an array of shape {_dims(shape)}; {said} {_dims(want)}"
                       + ("" if layout.dtype == want_dtype else
                          f" (and {want_dtype}, not {layout.dtype})"))
        other_shape = None  # input_shape at the file's shape, where the model takes it
        if given is not None and not fits and _fits(own, shape):
            other_shape = {**input_shape, name: tuple(shape)}
        raise ConfigError(key, f"{problem}: " + _input_fix(
            path, written, name, shape, layout.dtype, want, want_dtype, fits, other_shape))


def _fits(want, shape) -> bool:
    """``shape`` is one ``want`` (dims, None where any size goes; None: no declared shape)
    takes."""
    return want is None or (len(want) == len(shape) and all(
        d is None or d == s for d, s in zip(want, shape)))


def _dims(shape) -> str:
    return "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"


def _cast_loses(path: Path, dtype, want_dtype) -> str:
    """What casting ``path``'s values to ``want_dtype`` would change beyond rounding ("" for
    nothing): values past its range (an overflow to inf, an integer that wraps), a NaN or a
    fraction cast to an integer, a value other than 0/1 cast to bool. Read memory-mapped, a
    million values at a time (an input file may be large)."""
    import numpy as np

    try:
        values = np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError):
        return ""
    want = np.dtype(want_dtype)
    if values.size == 0 or values.dtype.kind not in "biuf" or want.kind not in "biuf":
        return ""  # (a string or complex input: a review saw np.iinfo refuse 'O' and 'c')
    flat = values.ravel(order="K")  # a view of a C- or Fortran-ordered file
    bad, odd, low, high = 0, False, np.inf, -np.inf
    for start in range(0, flat.size, 1 << 20):
        chunk = np.asarray(flat[start:start + (1 << 20)])
        if want.kind == "b":
            bad += int(np.count_nonzero((chunk != 0) & (chunk != 1)))
            continue
        finite = chunk[np.isfinite(chunk)] if chunk.dtype.kind == "f" else chunk
        odd |= chunk.dtype.kind == "f" and (finite.size < chunk.size
                                            or bool(np.any(finite != np.round(finite))))
        if finite.size:
            low, high = min(low, float(finite.min())), max(high, float(finite.max()))
    if want.kind == "b":
        return f"{bad} value(s) other than 0 and 1" if bad else ""
    if want.kind == "f":
        top = max(abs(low), abs(high)) if high >= low else 0.0
        limit = float(np.finfo(want).max)
        return f"values up to {top:g}, past {want}'s largest {limit:g}" if top > limit else ""
    if odd:
        return "NaN, infinite or fractional values for an integer input"
    info = np.iinfo(want)
    if high >= low and (low < info.min or high > info.max):
        return f"values from {low:g} to {high:g}, past {want}'s {info.min}..{info.max}"
    return ""


def _input_fix(path: Path, written: Mapping, name: str, shape, dtype, want, want_dtype,
               fits: bool, other_shape: Optional[Shapes]) -> str:
    """The advice for an input file that does not fit: a command writing one that does beside
    it and the key naming that file (the first rows of a bigger batch, the values as the
    model's dtype), or ``input_shape:`` at the file's shape; else what to save."""
    import posixpath

    fixes, rel = [], str(written[name])
    batch_only = (not fits and len(want) == len(shape) and len(shape) > 0
                  and want[0] is not None and shape[0] > want[0]
                  and _fits(list(want[1:]), shape[1:]))
    lost = _cast_loses(path, dtype, want_dtype) if dtype != want_dtype else ""
    if lost:  # (a trial: the pasted .astype('float16') made 1e5 inf, and the test passed with
        # every output +Inf on both sides, none judged)
        fixes.append(f"its values do not fit {want_dtype}: {lost}; the model's input cannot hold "
                     f"them (the device would see other values), so save values {want_dtype} "
                     f"holds")
    elif fits or batch_only:
        cut = f"[:{want[0]}]" if batch_only else ""
        # the dtype's name as a string: np.bool is no attribute of numpy 1.24 to 1.26
        cast = "" if dtype == want_dtype else f".astype({want_dtype.name!r})"
        stem = Path(rel).stem + (f"_{want[0]}" if batch_only else "") + (
            "" if dtype == want_dtype else f"_{want_dtype.name}")
        new_rel = posixpath.join(posixpath.dirname(rel.replace(os.sep, "/")), stem + ".npy")
        src = shown(os.path.normpath(path), Path.cwd())
        dst = shown(os.path.normpath(path.with_name(stem + ".npy")), Path.cwd())
        if not any(c in src + dst for c in "\"'$`\\!"):  # pasted inside "...": plain paths
            keep = (f"keep the first {want[0]} of its {shape[0]}" if batch_only
                    else f"save it as {want_dtype}")
            fixes.append(f'{keep}: python -c "import numpy as np; np.save({dst!r}, '
                         f'np.load({src!r}){cut}{cast})", then write inputs: '
                         + yaml_flow_map({**written, name: new_rel}))
    if other_shape is not None:
        fixes.append("convert at the file's shape: input_shape: "
                     + yaml_flow_map({k: list(v) for k, v in other_shape.items()}))
    if not fixes:
        fixes.append(f"save an array of shape {_dims(want)} and dtype {want_dtype} with "
                     f"numpy.save, then write inputs: "
                     + yaml_flow_map({**written, name: "<file>.npy"}))
    return "; or ".join(fixes)
