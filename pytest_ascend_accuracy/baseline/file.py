"""The accuracy baseline file: per-operator metrics of one model x mode, as small readable YAML.

A baseline records what the comparison against the fp32 golden looked like when it was accepted,
so a later run can tell that an operator *got worse* even when it still passes the fixed
threshold. One file per model x mode x inputs case (where: ``baseline.cases``)::

    # pytest-ascend-accuracy accuracy baseline ...
    format: "pytest-ascend-accuracy/baseline"
    version: 3
    environment:                      # a change here means "rebaseline required"
      backend: "emulator"
      toolkit_version: "onnxruntime 1.18.0"
      soc_version: "emulator"
      atc_args: ["--precision_mode=force_fp16"]
    info:                             # shown, never judged
      mode: "default"
      model: "mlp"
    inputs:                           # so a rerun uses the same data (see baseline_inputs)
      seed: 0
      input_shape: null
      stored: false
      tensors:
      - {name: "x", dtype: "float32", shape: [1, 16], sha256: "..."}
    ops:                              # graph order, one line per compared tensor
    - {op: "MatMul_0", slot: "output:0", cosine: 0.999998, rel_l2: 1.234e-03, max_abs: 2.441e-04, nan: 0, inf: 0}

The file is rendered by hand (not by a YAML emitter) so that its formatting is fixed: keys in a
fixed order, strings always double-quoted with YAML escapes for anything unprintable, cosine
rounded to 6 decimals and rel_l2 / max_abs to 4 significant digits. The same metrics therefore
always produce the same bytes, and a rerun that regenerates a baseline leaves ``git diff`` empty.
It holds no tensors, no machine paths and no timestamps. Writes are atomic (a hidden temp file
in the same directory, fsynced, renamed over the old file).

Versions: an op line's ``cosine`` is the cosine the threshold judges
(``TensorMetrics.value("cosine")``: for a float16 tensor of values below float16's smallest
normal, those positions counted as equal where close; ``compare/tiny_values.py``) from version
2 on, and its ``rel_l2`` the one judged from version 3 on. Version 1 recorded msaccucmp's plain
cosine (``TensorMetrics.cosine``, the CSV's), versions 1 and 2 its plain rel_l2: such a file is
still read, keeps its version when rendered again, and is judged against the run's plain figure
as it recorded (``baseline.check``). ``check_baseline`` writes version 3 where some line's judged
rel_l2 differs from the plain one, else version 2, which earlier releases read too.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Tuple

from ..core.atomic_files import BaselineWriteError, atomic_write_text
from ..core.safe_yaml import fast_safe_loader, load_yaml
from ..core.yaml_text import yaml_float, yaml_quoted
from ..errors import ConfigError
from .file_values import key_text, scalar

FORMAT = "pytest-ascend-accuracy/baseline"
#: the version written: 3, whose op lines' ``cosine`` and ``rel_l2`` are the ones judged
VERSION = 3
#: the version whose op lines' ``cosine`` is msaccucmp's plain cosine (still read and judged)
PLAIN_COSINE_VERSION = 1
#: the version whose ``cosine`` is judged and ``rel_l2`` msaccucmp's plain one (read, judged):
#: on float16 subnormal values the plain rel_l2 is rounding noise the threshold does not judge,
#: and a judged rel_l2 regression of 0 -> 0.0173 hid under a noisy plain 0.0329 (a review)
PLAIN_REL_L2_VERSION = 2
#: versions read
VERSIONS = (PLAIN_COSINE_VERSION, PLAIN_REL_L2_VERSION, VERSION)
#: environment keys every baseline has, in file order (others follow, sorted)
ENVIRONMENT_KEYS = ("backend", "toolkit_version", "soc_version", "atc_args")
#: metric columns of an op line and how they are rounded
COSINE_DECIMALS = 6
ERROR_DIGITS = 4  # significant digits of rel_l2 and max_abs

_HEADER_COMMENT = """\
# pytest-ascend-accuracy accuracy baseline: per-operator metrics of one model x mode against
# its fp32 golden, in graph order. Written when missing; rewritten only by --accuracy-regen
# (when the check fails) or --accuracy-regen-all. A change in 'environment' means
# "rebaseline required". cosine and rel_l2 are the ones the threshold judges (float16 values
# below its smallest normal may count as equal; the CSV's are msaccucmp's plain ones); cosine
# rounded to 6 decimals, rel_l2 and max_abs to 4 significant digits; nan / inf count the actual
# tensor's NaN and +-Inf values.
"""
#: a version 2 file's comment (its rel_l2: msaccucmp's plain one), kept when it is rendered again
_HEADER_COMMENT_V2 = """\
# pytest-ascend-accuracy accuracy baseline: per-operator metrics of one model x mode against
# its fp32 golden, in graph order. Written when missing; rewritten only by --accuracy-regen
# (when the check fails) or --accuracy-regen-all. A change in 'environment' means
# "rebaseline required". cosine is the one the threshold judges (float16 values below its
# smallest normal may count as equal; the CSV's CosineSimilarity is msaccucmp's plain cosine),
# rounded to 6 decimals; rel_l2 and max_abs to 4 significant digits; nan / inf count the actual
# tensor's NaN and +-Inf values.
"""
#: the line a version 2 file this package writes carries after its comment: no line's rel_l2
#: differs from the one the threshold judges, so a rel_l2 test judges it as version 3 (a
#: review: a cosine test writing a shared file first left the rel_l2 test judging plain against
#: plain, and a correct device's subnormal noise failed it); earlier releases read the comment
#: as a comment, so the file stays theirs to read
REL_L2_AS_JUDGED_MARK = ("# rel_l2 is also the one the threshold judges on every line here (it is "
                         "msaccucmp's plain one too)")
#: a version 1 file's comment (its cosine: msaccucmp's plain one), kept when it is rendered again
_HEADER_COMMENT_V1 = """\
# pytest-ascend-accuracy accuracy baseline: per-operator metrics of one model x mode against
# its fp32 golden, in graph order. Written when missing; rewritten only by --accuracy-regen
# (when the check fails) or --accuracy-regen-all. A change in 'environment' means
# "rebaseline required". cosine is rounded to 6 decimals, rel_l2 and max_abs to 4 significant
# digits; nan / inf count the actual tensor's NaN and +-Inf values.
"""


# --------------------------------------------------------------------------- values
def round_cosine(value: float) -> float:
    """Cosine as stored: 6 decimals (NaN and infinities unchanged)."""
    if not math.isfinite(value):
        return value
    return float(f"{value:.{COSINE_DECIMALS}f}")


def round_error(value: float) -> float:
    """rel_l2 / max_abs as stored: 4 significant digits."""
    if not math.isfinite(value):
        return value
    return float(f"{value:.{ERROR_DIGITS - 1}e}")


@dataclass(frozen=True)
class OpBaseline:
    """The recorded metrics of one compared tensor (``slot`` is ``output:0``, ``input:1``...).
    ``compared`` is False when the tensor could not be compared (its metrics are NaN then)."""

    op: str
    slot: str = "output:0"
    cosine: float = math.nan
    rel_l2: float = math.nan
    max_abs: float = math.nan
    nan: int = 0
    inf: int = 0
    compared: bool = True

    @property
    def key(self) -> Tuple[str, str]:
        return (self.op, self.slot)

    @property
    def label(self) -> str:
        return self.op if self.slot == "output:0" else f"{self.op}:{self.slot}"

    @staticmethod
    def from_row(row, *, plain_cosine: bool = False,
                 version: Optional[int] = None) -> "OpBaseline":
        """The rounded baseline values of one ``compare.result.TensorCompare`` row as a file of
        ``version`` records them (default ``VERSION``): its cosine and rel_l2 the ones judged
        (``TensorMetrics.value``); msaccucmp's plain rel_l2 in version 2, plain cosine too in
        version 1 (``plain_cosine``)."""
        version = PLAIN_COSINE_VERSION if plain_cosine else (version or VERSION)
        m = row.metrics
        if m is None:
            return OpBaseline(op=row.op_name, slot=row.slot, compared=False)
        cosine = m.cosine if version == PLAIN_COSINE_VERSION else m.value("cosine")
        rel_l2 = m.rel_l2 if version <= PLAIN_REL_L2_VERSION else m.value("rel_l2")
        return OpBaseline(op=row.op_name, slot=row.slot, cosine=round_cosine(cosine),
                          rel_l2=round_error(rel_l2), max_abs=round_error(m.max_abs),
                          nan=int(m.nan_actual), inf=int(m.posinf_actual + m.neginf_actual))


@dataclass(frozen=True)
class TensorSpec:
    """One model input as recorded: name, dtype, shape and the sha256 of its bytes."""

    name: str
    dtype: str
    shape: Tuple[int, ...]
    sha256: str


@dataclass(frozen=True)
class InputSpec:
    """How the inputs of a baselined run were made. ``seed`` (with ``input_shape``) regenerates
    them with ``onnx_graph.make_inputs``; ``stored`` means the arrays are kept as ``.npy`` files
    next to the baseline instead (user-supplied data). ``arrays`` travels with a spec made from
    live inputs so they can be stored; it is not part of the value."""

    seed: Optional[int]
    tensors: Tuple[TensorSpec, ...]
    input_shape: Optional[Tuple[Tuple[str, Tuple[int, ...]], ...]] = None
    stored: bool = False
    arrays: Optional[Mapping[str, object]] = field(default=None, compare=False, repr=False)

    def as_dict(self) -> Dict[str, object]:
        return {"seed": self.seed,
                "input_shape": None if self.input_shape is None else
                {n: list(d) for n, d in self.input_shape},
                "stored": self.stored,
                "tensors": [{"name": t.name, "dtype": t.dtype, "shape": list(t.shape),
                             "sha256": t.sha256} for t in self.tensors]}


@dataclass(frozen=True)
class Baseline:
    """A whole baseline file. ``environment`` is judged (any change: rebaseline required);
    ``info`` (model name, model hash, mode) is shown but never judged."""

    environment: Mapping[str, object]
    inputs: InputSpec
    ops: Tuple[OpBaseline, ...]
    info: Mapping[str, object] = field(default_factory=dict)
    #: the file format's version: what its ops' ``cosine`` is (``VERSIONS``); a file read keeps
    #: its own, so rendering it again never relabels a plain cosine as the judged one
    version: int = VERSION
    #: a version 2 file carrying ``REL_L2_AS_JUDGED_MARK``: its rel_l2 is the judged one too
    rel_l2_as_judged: bool = False

    @property
    def judged_as(self) -> int:
        """The version whose figures its lines hold: a marked version 2 file's are version 3's."""
        marked = self.version == PLAIN_REL_L2_VERSION and self.rel_l2_as_judged
        return VERSION if marked else self.version

    @property
    def plain_cosine(self) -> bool:
        """Whether its ops' ``cosine`` is msaccucmp's plain cosine (version 1), not the judged."""
        return self.version == PLAIN_COSINE_VERSION

    def by_key(self) -> Dict[Tuple[str, str], OpBaseline]:
        return {op.key: op for op in self.ops}


def ops_from_result(result, *, plain_cosine: bool = False,
                    version: Optional[int] = None) -> Tuple[OpBaseline, ...]:
    """Baseline lines of a ``CompareResult``: every row that has a golden counterpart, in graph
    order (unmatched actual ops have nothing to record). A (op, slot) seen twice keeps the
    first row, as the lines are keyed by it. ``plain_cosine``: msaccucmp's plain cosine, as a
    version 1 file recorded, instead of the one judged; ``version``: the figures as a file of
    that version records them (``OpBaseline.from_row``)."""
    seen = set()
    out: List[OpBaseline] = []
    for row in result.rows:
        if "no_golden" in row.flags:
            continue
        line = OpBaseline.from_row(row, plain_cosine=plain_cosine, version=version)
        if line.key in seen:
            continue
        seen.add(line.key)
        out.append(line)
    return tuple(out)


# --------------------------------------------------------------------------- rendering
def render_op(op: OpBaseline) -> str:
    head = f"- {{op: {yaml_quoted(op.op)}, slot: {yaml_quoted(op.slot)}"
    if not op.compared:
        return head + ", compared: false}"
    cosine, rel_l2, max_abs = op_numbers(op)
    return (f"{head}, cosine: {cosine}, rel_l2: {rel_l2}, max_abs: {max_abs}, "
            f"nan: {op.nan}, inf: {op.inf}}}")


def op_numbers(op: OpBaseline) -> Tuple[str, str, str]:
    return (yaml_float(op.cosine, f".{COSINE_DECIMALS}f"),
            yaml_float(op.rel_l2, f".{ERROR_DIGITS - 1}e"),
            yaml_float(op.max_abs, f".{ERROR_DIGITS - 1}e"))


def environment_order(env: Mapping[str, object]) -> List[str]:
    return [k for k in ENVIRONMENT_KEYS if k in env] + sorted(k for k in env if k not in ENVIRONMENT_KEYS)


def render(baseline: Baseline) -> str:
    """The file text (deterministic: the same baseline always renders to the same bytes)."""
    comment = {PLAIN_COSINE_VERSION: _HEADER_COMMENT_V1,
               PLAIN_REL_L2_VERSION: _HEADER_COMMENT_V2}.get(baseline.version, _HEADER_COMMENT)
    lines = [comment.rstrip("\n")]
    if baseline.version == PLAIN_REL_L2_VERSION and baseline.rel_l2_as_judged:
        lines.append(REL_L2_AS_JUDGED_MARK)
    lines += [f"format: {yaml_quoted(FORMAT)}", f"version: {baseline.version}", "environment:"]
    env = baseline.environment
    lines += [f"  {key_text(key)}: {scalar(env[key])}" for key in environment_order(env)]
    if baseline.info:
        lines.append("info:")
        lines += [f"  {key_text(k)}: {scalar(baseline.info[k])}" for k in sorted(baseline.info)]
    spec = baseline.inputs.as_dict()
    lines += ["inputs:", f"  seed: {scalar(spec['seed'])}",
              f"  input_shape: {scalar(spec['input_shape'])}",
              f"  stored: {scalar(spec['stored'])}"]
    if spec["tensors"]:
        lines.append("  tensors:")
        lines += [f"  - {{name: {yaml_quoted(t['name'])}, dtype: {yaml_quoted(t['dtype'])}, "
                  f"shape: {scalar(t['shape'])}, sha256: {yaml_quoted(t['sha256'])}}}"
                  for t in spec["tensors"]]
    else:
        lines.append("  tensors: []")
    if baseline.ops:
        lines.append("ops:")
        lines += [render_op(op) for op in baseline.ops]
    else:
        lines.append("ops: []")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- parsing
def read_baseline(path, *, shown: Optional[str] = None) -> Baseline:
    """Read a baseline file; anything malformed raises ``ConfigError(path, problem)``
    (``shown``: how errors spell the path, e.g. relative to where pytest ran)."""
    import yaml

    path = Path(path)
    where = shown if shown is not None else os.fspath(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(where, f"baseline is not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise ConfigError(where, f"cannot read baseline: {exc.strerror or exc}") from None
    try:  # bounded: an alias bomb is refused before anything walks the document
        data = load_yaml(text, where, loader=fast_safe_loader(yaml), unique_keys=True)
    except yaml.YAMLError as exc:
        raise ConfigError(where, f"baseline is not valid YAML: {exc}") from None
    baseline = baseline_from_data(data, where)
    if baseline.version == PLAIN_REL_L2_VERSION and _marked(text.lstrip("\ufeff")):  # (a BOM)
        baseline = replace(baseline, rel_l2_as_judged=True)
    return baseline


def _marked(text: str) -> bool:
    """Whether the comment lines heading ``text`` hold ``REL_L2_AS_JUDGED_MARK``."""
    for line in text.splitlines():
        if not line.startswith("#"):
            return False
        if line.rstrip() == REL_L2_AS_JUDGED_MARK:
            return True
    return False


#: the keys a baseline file's parts hold (``render``): any other is a typo, refused (a
#: misspelled ``cosine``/``slot``/``stored`` was ignored, or refused as "must be a number")
_TOP_KEYS = ("format", "version", "environment", "info", "inputs", "ops")
_OP_KEYS = ("op", "slot", "compared", "cosine", "rel_l2", "max_abs", "nan", "inf")
_INPUT_KEYS = ("seed", "input_shape", "stored", "tensors")
_TENSOR_KEYS = ("name", "dtype", "shape", "sha256")


def _known_keys(mapping: dict, known, what: str, where: str) -> None:
    from ..errors import closest_text

    for key in mapping:
        if key not in known:
            raise ConfigError(where, f"{what}: unknown key {key!r}{closest_text(key, known)}; "
                                     f"known: {', '.join(known)}")


def baseline_from_data(data, where: str) -> Baseline:
    """Validate a loaded YAML document and build the ``Baseline``."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ConfigError(where, f"not an accuracy baseline (expected 'format: {FORMAT}')")
    _known_keys(data, _TOP_KEYS, "baseline", where)
    version = data.get("version")
    if isinstance(version, bool) or version not in VERSIONS:
        newer = ("; a newer pytest-ascend-accuracy wrote it: upgrade to read it (--accuracy-"
                 "regen here writes it back as older)" if type(version) is int
                 and version > VERSION else "")
        raise ConfigError(where, f"baseline version {version!r} is not supported (this "
                                 f"pytest-ascend-accuracy reads versions "
                                 f"{', '.join(map(str, VERSIONS))}){newer}")
    version = int(version)
    env = data.get("environment")
    if not isinstance(env, dict) or not all(isinstance(k, str) for k in env):
        raise ConfigError(where, "'environment' must be a mapping of names to values")
    info = data.get("info") or {}
    if not isinstance(info, dict):
        raise ConfigError(where, "'info' must be a mapping")
    ops_data = data.get("ops")
    if not isinstance(ops_data, list):
        raise ConfigError(where, "'ops' must be a list of operator lines")
    ops = tuple(_op_from(item, i, where) for i, item in enumerate(ops_data))
    _no_line_twice([op.key for op in ops], where)
    inputs = _inputs_from(data.get("inputs"), where)
    _required_environment(env, where)
    return Baseline(environment=_plain(env), inputs=inputs, ops=ops, info=_plain(info),
                    version=version)


def _no_line_twice(keys, where: str) -> None:
    if len(set(keys)) != len(keys):
        seen = set()
        dup = next(k for k in keys if k in seen or seen.add(k))
        raise ConfigError(where, f"operator {dup[0]!r} slot {dup[1]!r} is listed twice")


def _required_environment(env, where: str) -> None:
    """Every baseline written records ``ENVIRONMENT_KEYS``: one missing was edited out or
    misspelled (``backnd``), which read as "rebaseline required: backend None -> 'emulator'",
    a setup change that never happened."""
    import difflib

    missing = [k for k in ENVIRONMENT_KEYS if k not in env]
    if missing:
        others = [str(k) for k in env if k not in ENVIRONMENT_KEYS]
        named = []
        for key in missing:
            near = difflib.get_close_matches(key, others, n=1, cutoff=0.6)
            named.append(f"{key!r}" + (f" (misspelled {near[0]!r}?)" if near else ""))
        raise ConfigError(where, f"environment: missing {', '.join(named)}; every baseline "
                                 f"records {', '.join(ENVIRONMENT_KEYS)}")


def _plain(value):
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _number(item: dict, key: str, where: str, line: int, kind=float):
    value = item.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(where, f"ops line {line + 1}: {key} must be a number, got {value!r}")
    if kind is int:
        if isinstance(value, float) or value < 0:
            raise ConfigError(where, f"ops line {line + 1}: {key} must be a count, got {value!r}")
        return int(value)
    return float(value)


def _op_from(item, line: int, where: str) -> OpBaseline:
    if not isinstance(item, dict):
        raise ConfigError(where, f"ops line {line + 1}: expected a mapping, got {item!r}")
    _known_keys(item, _OP_KEYS, f"ops line {line + 1}", where)
    op, slot = item.get("op"), item.get("slot", "output:0")
    if not isinstance(op, str) or not op or not isinstance(slot, str):
        raise ConfigError(where, f"ops line {line + 1}: needs 'op' and 'slot' strings")
    compared = item.get("compared", True)
    if compared is False:
        return OpBaseline(op=op, slot=slot, compared=False)
    if compared is not True:
        raise ConfigError(where, f"ops line {line + 1}: compared must be true or false")
    cosine = _number(item, "cosine", where, line)
    if not (-1.0 <= cosine <= 1.0 or math.isnan(cosine)):
        raise ConfigError(where, f"ops line {line + 1}: cosine must be within [-1, 1], got "
                                 f"{cosine!r}")
    return OpBaseline(op=op, slot=slot, cosine=cosine,
                      rel_l2=_number(item, "rel_l2", where, line),
                      max_abs=_number(item, "max_abs", where, line),
                      nan=_number(item, "nan", where, line, int),
                      inf=_number(item, "inf", where, line, int))


def _inputs_from(data, where: str) -> InputSpec:
    if not isinstance(data, dict):
        raise ConfigError(where, "'inputs' must be a mapping (seed, input_shape, stored, tensors)")
    _known_keys(data, _INPUT_KEYS, "inputs", where)
    seed, stored = data.get("seed"), data.get("stored", False)
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise ConfigError(where, f"inputs.seed must be an integer or null, got {seed!r}")
    if not isinstance(stored, bool):
        raise ConfigError(where, "inputs.stored must be true or false")
    shape = data.get("input_shape")
    if shape is not None:
        if not isinstance(shape, dict) or not all(
                isinstance(v, list) and all(isinstance(d, int) for d in v) for v in shape.values()):
            raise ConfigError(where, "inputs.input_shape must map input names to lists of ints")
        shape = tuple((str(k), tuple(v)) for k, v in shape.items())
    tensors = []
    for i, t in enumerate(data.get("tensors") or []):
        if isinstance(t, dict):
            _known_keys(t, _TENSOR_KEYS, f"inputs.tensors[{i}]", where)
        if not (isinstance(t, dict) and isinstance(t.get("name"), str)
                and isinstance(t.get("dtype"), str) and isinstance(t.get("sha256"), str)
                and isinstance(t.get("shape"), list)
                and all(isinstance(d, int) and not isinstance(d, bool) for d in t["shape"])):
            raise ConfigError(where, f"inputs.tensors[{i}] needs name, dtype, shape (ints), sha256")
        tensors.append(TensorSpec(t["name"], t["dtype"], tuple(t["shape"]), t["sha256"]))
    if seed is None and not stored:
        raise ConfigError(where, "inputs have no seed and are not stored: random unseeded inputs "
                                 "cannot be reproduced")
    return InputSpec(seed=seed, tensors=tuple(tensors), input_shape=shape, stored=stored)


__all__ = ["FORMAT", "VERSION", "VERSIONS", "PLAIN_COSINE_VERSION", "PLAIN_REL_L2_VERSION",
           "ENVIRONMENT_KEYS", "OpBaseline", "TensorSpec", "InputSpec", "Baseline",
           "BaselineWriteError", "ops_from_result", "render", "read_baseline", "op_numbers",
           "atomic_write_text", "round_cosine", "round_error"]
