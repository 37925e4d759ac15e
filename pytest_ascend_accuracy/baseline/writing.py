"""Writing a baseline file: only one ``read_baseline`` reads back (``write_baseline``).

Files were written that every later check refused as unreadable (one without ``soc_version``,
an op named "", a cosine of 1.5, an int environment key, a header value from undecodable bytes):
what is rendered is read back first, the header as YAML, the op lines by value, and a baseline
that would not read back is refused (``BaselineRefused``) before anything is written. Text from
undecodable bytes (a lone surrogate, e.g. a model file name that is not UTF-8) is checked by
itself, not left to the YAML loader: libyaml refuses the escape YAML writes for it, the
pure-Python loader reads it (a review: the refusal depended on which PyYAML was installed, and
one machine wrote a file another could not read). In ``info``, shown and never judged, such
text is written with backslash escapes; elsewhere it is refused, naming where.
"""
from __future__ import annotations

import math
import os
from dataclasses import replace
from pathlib import Path
from typing import Dict, Optional

from ..core.atomic_files import BaselineWriteError, atomic_write_text
from ..core.safe_yaml import fast_safe_loader, load_yaml
from ..errors import ConfigError
from .file import VERSIONS, Baseline, OpBaseline, baseline_from_data, op_numbers, render
from .file_values import count_value


class BaselineRefused(ConfigError):
    """A baseline ``write_baseline`` will not write, as it would not read back; nothing was
    written (regenerating cannot help: what it names must change)."""


def _lone_surrogate(value) -> Optional[str]:
    """The first string in ``value`` (a string, or lists and mappings of them) holding a lone
    surrogate, else None."""
    if isinstance(value, str):  # (UTF-8 refuses exactly the lone surrogates: one C pass)
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value
        return None
    items = value.items() if isinstance(value, dict) else (
        ((v, None) for v in value) if isinstance(value, (list, tuple)) else ())
    for k, v in items:
        found = _lone_surrogate(k) or (_lone_surrogate(v) if v is not None else None)
        if found is not None:
            return found
    return None


def _escaped(value):
    """``value`` with lone surrogates written as backslash escapes (``m\\udcff``)."""
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {_escaped(k): _escaped(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_escaped(v) for v in value)
    return value


def _refuse_undecodable(baseline: Baseline, where: str) -> None:
    parts = [("environment", baseline.environment), ("inputs", baseline.inputs.as_dict())]
    parts += [("op", (op.op, op.slot)) for op in baseline.ops]
    for part, value in parts:
        text = _lone_surrogate(value)
        if text is not None:
            raise BaselineRefused(where, f"{part} text {text!r} holds a lone surrogate (text from "
                                         f"undecodable bytes, such as a file name that is not "
                                         f"UTF-8), which YAML cannot read back: not written; "
                                         f"rename what it names to UTF-8 text")


def _op_read_back(op: OpBaseline) -> Dict[str, object]:
    """The op line ``render_op`` writes, as YAML loads it: its strings are ``yaml_quoted``
    (they load as themselves), its numbers ``yaml_float``s (a decimal, ``.nan``, ``.inf``)."""
    if not op.compared:
        return {"op": op.op, "slot": op.slot, "compared": False}
    back = {".nan": math.nan, ".inf": math.inf, "-.inf": -math.inf}
    cosine, rel_l2, max_abs = (back[t] if t in back else float(t) for t in op_numbers(op))
    return {"op": op.op, "slot": op.slot, "cosine": cosine, "rel_l2": rel_l2,
            "max_abs": max_abs, "nan": count_value(op.nan), "inf": count_value(op.inf)}


def write_baseline(path, baseline: Baseline) -> Path:
    """Render and write ``baseline`` to ``path`` atomically, once ``writable`` took it."""
    baseline = writable(path, baseline)
    return atomic_write_text(path, render(baseline), what="baseline", error=BaselineWriteError)


def shown_info(info):
    """``info`` as a file holds it: text from undecodable bytes written as backslash escapes
    (shown, never judged). A check compares the file's info with this, not with the raw text
    (a review: every run noted the model as changed since the baseline, the escaped name
    against the raw one, and no regen could clear it)."""
    return _escaped(info) if _lone_surrogate(info) is not None else info


def writable(path, baseline: Baseline) -> Baseline:
    """``baseline`` as ``write_baseline`` writes it (``shown_info``), or ``BaselineRefused``
    where ``read_baseline`` would refuse the file: what is rendered is read back
    (``baseline_from_data``) first, the header as YAML, the op lines by value. Such files were
    written (one without ``soc_version``, an op named "", a cosine of 1.5, an int environment
    key) and every later check failed on them as unreadable. Called before anything is
    written, stored inputs included (a review: a refused baseline left its inputs behind)."""
    where = os.fspath(path)
    baseline = replace(baseline, info=shown_info(baseline.info))
    _refuse_undecodable(baseline, where)
    if baseline.version not in VERSIONS:
        raise BaselineRefused(where, f"baseline version {baseline.version!r} is not one this "
                                     f"package reads ({', '.join(map(str, VERSIONS))}); not "
                                     f"written")
    for part in ("environment", "info"):
        odd = [k for k in getattr(baseline, part) if not isinstance(k, str)]
        if odd:  # (sorting mixed keys failed with TypeError)
            raise BaselineRefused(where, f"{part} key {odd[0]!r} is not a string (not written)")
    import yaml
    try:  # the header as YAML reads it back; the op lines by value (a whole parse: 3 s a write)
        data = load_yaml(render(Baseline(baseline.environment, baseline.inputs, (),
                                         baseline.info, baseline.version)),
                         where, loader=fast_safe_loader(yaml), unique_keys=True)
        if isinstance(data, dict):
            data["ops"] = [_op_read_back(op) for op in baseline.ops]
        baseline_from_data(data, where)
    except ConfigError as exc:
        raise BaselineRefused(where, f"{exc.problem} (not written)") from None
    except yaml.YAMLError as exc:  # a header value YAML writes but cannot read
        raise BaselineRefused(where, f"its header would not read back as YAML "
                                     f"({getattr(exc, 'problem', None) or exc}); not written"
                              ) from None
    return baseline


__all__ = ["BaselineRefused", "shown_info", "writable", "write_baseline"]
