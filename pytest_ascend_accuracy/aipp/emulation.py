"""What the emulator backend needs to run a model converted with an AIPP file.

ATC with ``--insert_op_conf`` puts an ``Aipp`` operator in front of each configured input: the
``.om`` then takes raw uint8 images (NHWC; NV12 rows for YUV420SP_U8) and the operator turns
them into the network's float16 NCHW input. The emulator does the same around its onnxruntime
session: the file's content (not its path) goes into the conversion cache key and is stored in
the cache entry; the om json lists one NPU-only ``Aipp`` op per configured input, named
``aipp_<input>`` and run first; each run applies the file (:mod:`.apply`) to the raw inputs,
feeds the result to the model and dumps the ``Aipp`` op (raw bytes in, float16 NCHW out), as a
device dump shows it.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from ..errors import ConfigError
from .apply import apply_aipp
from .config import AippOp, parse_aipp_config, read_aipp_config

#: the AIPP file as stored in a converted model's cache entry
AIPP_FILE = "aipp.cfg"
OPTION = "insert_op_conf"


def aipp_op_name(input_name: str) -> str:
    """The dumped ``Aipp`` operator in front of graph input ``input_name``."""
    return f"aipp_{input_name}"


def conversion_aipp(options: Mapping[str, str]) -> Optional[Tuple[str, str]]:
    """``(text, sha256)`` of the AIPP file named by the ``insert_op_conf`` ATC option, parsed
    (a bad file is a ConfigError now, not at run time); None without the option."""
    path = options.get(OPTION)
    if not path:
        return None
    cfg = read_aipp_config(path)
    return cfg.text, hashlib.sha256(cfg.text.encode("utf-8")).hexdigest()


def key_options(options: Mapping[str, str], aipp: Optional[Tuple[str, str]]) -> Dict[str, str]:
    """The ATC options as the cache key sees them: the AIPP file by content, not by path."""
    out = dict(options)
    if aipp is not None:
        out[OPTION] = f"sha256:{aipp[1]}"
    return out


def _blocks(text: str, model_inputs: Sequence[str], where: str) -> Dict[str, AippOp]:
    cfg = parse_aipp_config(text, where)
    out: Dict[str, AippOp] = {}
    for op in cfg.ops:
        if op.rank >= len(model_inputs):
            raise op.error("related_input_rank", f"input {op.rank} does not exist: the model has "
                                                 f"{len(model_inputs)} input(s) ({', '.join(model_inputs)})")
        out[model_inputs[op.rank]] = op
    return out


def aipp_om_ops(text: str, model_inputs: Sequence[str], where: str = AIPP_FILE) -> list:
    """One NPU-only ``Aipp`` OmOp per configured input (ids 0..n-1: they run first)."""
    from ..dump.om_json import OmOp

    blocks = _blocks(text, model_inputs, where)
    return [OmOp(name=aipp_op_name(name), type="Aipp", id=k, inputs=(f"{name}:0",), npu_only=True)
            for k, name in enumerate(blocks)]


@dataclass
class AippInputs:
    """The AIPP blocks of a converted model, by input name."""

    blocks: Dict[str, AippOp]

    @staticmethod
    def load(entry: Path, model_inputs: Sequence[str]) -> Optional["AippInputs"]:
        """The stored AIPP file of a cache entry (None when the model has none)."""
        path = Path(entry) / AIPP_FILE
        if not path.is_file():
            return None
        return AippInputs(_blocks(path.read_text(encoding="utf-8"), model_inputs, str(path)))

    def preprocess(self, inputs: Mapping[str, np.ndarray]):
        """``(model inputs, [(op name, raw, aipp output)])``: each configured raw input replaced
        by its AIPP output (float16 values, as float32 for the float network)."""
        out = dict(inputs)
        records: List[Tuple[str, np.ndarray, np.ndarray]] = []
        for name, op in self.blocks.items():
            if name not in inputs:
                continue  # check_inputs reports the missing input
            raw = np.asarray(inputs[name])
            if raw.dtype != np.uint8:
                raise ConfigError(f"inputs of the AIPP model ({op.path})",
                                  f"{name!r} must be raw uint8 images ({op.input_format}, NHWC) because "
                                  f"the AIPP file pre-processes it; got {raw.dtype} {tuple(raw.shape)}")
            result = apply_aipp(op, raw, name=name)
            out[name] = result.astype(np.float32)
            records.append((aipp_op_name(name), raw, result))
        return out, records


def preprocess(aipp: Optional[AippInputs], inputs: Mapping[str, np.ndarray]):
    """``AippInputs.preprocess`` when the model has AIPP, else the inputs unchanged."""
    if aipp is None:
        return inputs, []
    return aipp.preprocess(inputs)
