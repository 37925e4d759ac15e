"""The inputs of a YAML suite entry: ``inputs:`` (``{seed: N}``, optionally with ``shapes:``,
or ``{input name: file.npy}``) and ``input_shape:``, validated at collection.

``inputs: {seed: N, shapes: {x: [dims]}}`` and ``input_shape: {x: [dims]}`` both set the
shape of input ``x`` (the generated array's and the conversion's, which are one): given for
different inputs they combine; given for one input they must agree, else the suite is refused
naming both keys (a trial's entry ran at ``input_shape`` with ``shapes`` dropped silently).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Mapping, Optional, Tuple

from ..core.locations import shown
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
        raise ConfigError(at, f"file not found: {shown(os.path.normpath(p), Path.cwd())} "
                              f"({rel!r} from the suite's folder)")
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
    right = "{" + ", ".join(f"{n}: <file>.npy" for n in names or ["<input name>"]) + "}"
    of = "" if names is None else f" (the inputs of {model.name}: {', '.join(names) or '(none)'})"
    for key, rel in value.items():
        npz = isinstance(rel, str) and rel.endswith(".npz")
        if not npz and (names is None or str(key) in names):
            continue
        why = (f"a .npz archive is not read in a YAML suite, a .npy file per input is (got "
               f"{rel!r}: save each array with numpy.save)" if npz
               else f"no model input named {str(key)!r}{closest_text(str(key), names)}")
        raise ConfigError(f"{at}.{key}", f"{why}; write inputs: {right}{of}, or {{seed: N}} for "
                                         f"generated inputs")


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
    from ..graph.input_names import check_input_names

    names = model.input_names if shapes else None
    if names is None:  # nothing to check, or not a model we can read: running it says so
        return
    unknown = [n for n in shapes if n not in names]
    if unknown:  # the model named: a defaults: entry applies to every model of the suite
        check_input_names(unknown[:1], names, f"{at}.{unknown[0]} (model {model.name})")
