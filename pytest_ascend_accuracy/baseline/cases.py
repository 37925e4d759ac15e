"""One baseline per inputs case: where the baseline of a model x mode on given inputs lives.

The figures of a conversion depend on the inputs it ran on, so a test parametrized over input
shapes, or two tests of one model and mode on different inputs, each need their own baseline.
They shared ``<model key>/<mode>.yaml`` before: each run one case found the other's inputs
("rebaseline required"), and ``--accuracy-regen`` / ``--accuracy-regen-all`` only moved the
failure to the other case.

A case is named by how its inputs are made (``case_name``), not by the test that makes them:

* seeded inputs by the seed and the ``input_shape`` given: ``seed0``, ``seed0_x=1x3x48x320``
  (the same seed and shapes under another numpy, whose bytes differ, is still the same case and
  reported as "rebaseline required");
* stored arrays (``accuracy_inputs(model, inputs=...)``, YAML ``inputs:`` files) by a digest of
  their names and bytes, with their shapes: ``arrays-1a2b3c4d5e_x=1x3x48x160``.

The default inputs (``accuracy_inputs(model)``: seed 0, the model's own input shapes) keep
``<model key>/<mode>.yaml``; every other case has ``<model key>/<mode>/<case>.yaml`` (stored
arrays beside it, ``<case>.inputs/``). Two tests of one model and mode on the same inputs share
one (their figures are the same). The file format is unchanged: each file records one case's
inputs, so a ``<mode>.yaml`` written before cases existed (format version 1 or 2, whatever
inputs it records) is read, in place, by the case whose inputs it records, and rewritten there
by ``--accuracy-regen``; another case gets its own file (even the default one, then
``<mode>/seed0.yaml``). Which file is a case's is decided by what is on disk, never by which
test ran first.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional

from .env import BASELINE_SUFFIX, _exact, _safe, locate_baseline
from .file import InputSpec
from ..core.locations import Located
from ..errors import AscendAccuracyError

#: how many other cases a "missing" note names before "+N more"
_SHOWN = 5


def _dims(shape) -> str:
    return "x".join(str(int(d)) for d in shape) or "scalar"


def case_name(spec: InputSpec) -> str:
    """The name of the inputs case ``spec`` describes (see the module docstring): readable,
    file-name safe, and different for different cases (a name that making it safe changed
    carries a digest of itself)."""
    if spec.stored:
        h = hashlib.sha256()
        for t in sorted(spec.tensors, key=lambda t: t.name):
            h.update(f"{t.name}\0{t.sha256}\n".encode("utf-8", "surrogatepass"))
        shapes = ",".join(f"{t.name}={_dims(t.shape)}"
                          for t in sorted(spec.tensors, key=lambda t: t.name))
        text = f"arrays-{h.hexdigest()[:10]}" + (f"_{shapes}" if shapes else "")
    else:
        text = f"seed{spec.seed}"
        if spec.input_shape is not None:
            text += "_" + ",".join(f"{n}={_dims(d)}" for n, d in sorted(spec.input_shape))
    return _safe(_exact(text))


def case_path(mode_file, spec: InputSpec) -> Path:
    """``<dir>/<mode>.yaml`` -> ``<dir>/<mode>/<case>.yaml``: the file of ``spec``'s case."""
    mode_file = Path(mode_file)
    folder = mode_file.with_name(mode_file.name[:-len(BASELINE_SUFFIX)]
                                 if mode_file.name.endswith(BASELINE_SUFFIX) else mode_file.name)
    return folder / f"{case_name(spec)}{BASELINE_SUFFIX}"


def recorded_case(path) -> Optional[str]:
    """The case a baseline file records (``case_name`` of its inputs); None when that cannot be
    read (reading the file to judge it then reports why). Only the part before ``ops:`` is
    parsed (the file is rendered in that order): a model's thousands of op lines are read once,
    by the check."""
    import re

    import yaml

    from .file import FORMAT, _inputs_from
    from ..core.safe_yaml import fast_safe_loader, load_yaml

    where = os.fspath(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
        head = re.split(r"^ops:", text, maxsplit=1, flags=re.M)[0]
        data = load_yaml(head, where, loader=fast_safe_loader(yaml), unique_keys=True)
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            return None
        return case_name(_inputs_from(data.get("inputs"), where))
    except (AscendAccuracyError, OSError, UnicodeDecodeError, yaml.YAMLError):
        return None


@dataclass(frozen=True)
class CaseLocated(Located):
    """A located case baseline; ``mode_file``: the model and mode's ``<mode>.yaml`` at its
    current place, beside the ``<mode>/`` folder of the other cases."""

    mode_file: Optional[Path] = None


def is_default_case(spec: InputSpec) -> bool:
    """Whether ``spec`` is of the default inputs (``accuracy_inputs(model)``: seed 0, the
    model's own input shapes), whose file is ``<mode>.yaml`` itself."""
    return not spec.stored and spec.seed == 0 and spec.input_shape is None


def locate_case(root, model, mode, rootdir, inputs, owner: Optional[str] = None) -> CaseLocated:
    """The baseline of ``model`` x ``mode`` on ``inputs`` (a ``BaselineInputs`` or its
    ``InputSpec``) under ``root`` (see the module docstring), in this order: the case's file
    ``<mode>/<case>.yaml`` when it exists; ``<mode>.yaml`` (``locate_baseline``: or at an older
    place, then with ``belongs``) when it records these inputs' case or cannot be read (so its
    error, and the advice rewriting it, are reported); where it is to be written:
    ``<mode>.yaml`` for the default case when no file is there, else the case's file."""
    spec = getattr(inputs, "spec", inputs)
    shared = locate_baseline(root, model, mode, rootdir, owner)
    home = shared.belongs if shared.belongs is not None else shared.path
    own = case_path(home, spec)
    if own.exists():
        return CaseLocated(own, mode_file=home)
    if shared.path.exists():
        found = recorded_case(shared.path)
        if found is None or found == case_name(spec):
            return CaseLocated(shared.path, shared.belongs, mode_file=home)
        return CaseLocated(own, mode_file=home)
    return CaseLocated(home if is_default_case(spec) else own, mode_file=home)


def other_cases(located: CaseLocated, spec: InputSpec) -> List[Path]:
    """The baselines of the same model and mode for inputs other than ``spec``'s (``<mode>.yaml``
    and the files in ``<mode>/``, but ``located.path``): named when ``located.path`` was
    missing, so a baseline no test uses any more (its seed or arrays changed) can be found."""
    path, home = Path(located.path), Path(located.mode_file or located.path)
    out = []
    if home.is_file() and home != path and recorded_case(home) != case_name(spec):
        out.append(home)
    folder = case_path(home, spec).parent
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        names = []
    out += [folder / n for n in names
            if n.endswith(BASELINE_SUFFIX) and not n.startswith(".") and folder / n != path]
    return out


def other_cases_note(located: CaseLocated, spec: InputSpec, show=os.fspath) -> str:
    """The note a missing case's message ends with ("" when there is no other case):
    ``show`` spells the paths (the plugin: relative to where pytest ran)."""
    others = other_cases(located, spec)
    if not others:
        return ""
    listed = ", ".join(f"{show(p)} ({recorded_case(p) or 'unreadable'})"
                       if p == located.mode_file else show(p) for p in others[:_SHOWN])
    more = f", +{len(others) - _SHOWN} more" if len(others) > _SHOWN else ""
    return (f"note: a model and mode keep one baseline per inputs case (these inputs: "
            f"{case_name(spec)}); its other cases: {listed}{more}. A file no test uses any "
            f"more (its seed, shapes or arrays changed) can be deleted")


def with_other_cases(outcome, located: CaseLocated, spec: InputSpec, show=os.fspath):
    """``outcome`` (a ``BaselineOutcome`` of ``located``), its message ending with
    ``other_cases_note`` when it found its case's baseline missing."""
    from dataclasses import replace

    from .check import MISSING

    note = other_cases_note(located, spec, show) if outcome.status == MISSING else ""
    return replace(outcome, message=f"{outcome.message}\n{note}") if note else outcome


__all__ = ["CaseLocated", "is_default_case", "case_name", "case_path", "recorded_case",
           "locate_case", "other_cases", "other_cases_note", "with_other_cases"]
