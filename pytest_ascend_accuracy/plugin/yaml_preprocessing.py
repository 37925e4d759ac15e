"""YAML suite items of a model with ``aipp:`` and ``reference:``: the reference network's inputs.

The accuracy item runs step 5 first (the AIPP file against the reference pre-processing, as
the ``check_preprocessing`` fixture does: recorded, the corrected AIPP file written beside the
file) and computes the golden on ``reference(raw images)``; the dataset item feeds the
reference run the same transform per sample (``check_dataset(..., reference_inputs=fn)``).
Used by ``yaml_suite`` only.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Dict, List

from ..errors import ConfigError


def _aipp_inputs(case, inputs, where: str):
    """``(config, reference fn, [(aipp op, input name)])`` of ``case`` for ``inputs``."""
    from ..aipp import read_aipp_config
    from ..aipp.user_files import load_reference
    from ..graph.onnx_graph import graph_inputs, load_model

    config = read_aipp_config(case.aipp)
    reference = load_reference(case.reference[0], case.reference[1], where)
    # the input names: no weight is read
    names = [i.name for i in graph_inputs(load_model(case.model, weights=False))]
    pairs = []
    for op in config.ops:
        name = names[op.rank] if op.rank < len(names) else None
        if name is None or name not in inputs:
            raise ConfigError(where, f"inputs: no raw images for AIPP input {op.rank} "
                                     f"({name or 'not in the model'})")
        pairs.append((op, name))
    return config, reference, pairs


def _referenced(op, raw, reference):
    """The batch of reference tensors of one AIPP input's raw images."""
    import numpy as np

    raw = np.asarray(raw)
    images: List = [raw] if raw.ndim == 3 and op.input_format in ("RGB888_U8", "XRGB8888_U8") \
        else list(raw)
    refs = [np.asarray(reference(img), dtype=np.float32) for img in images]
    return np.stack([r[0] if r.ndim == 4 else r for r in refs])


def golden_inputs(item, case, inputs, where: str):
    """Step 5, then the golden run's inputs: each AIPP input's raw images through the reference
    pre-processing (the other inputs as they are). A wrong AIPP file fails here, naming the
    fields and writing the corrected copy beside it (``aipp_check.corrected_copy``)."""
    import numpy as np

    from ..aipp import check_preprocessing as run_preprocessing_check

    config, reference, pairs = _aipp_inputs(case, inputs, where)
    out = dict(inputs)
    for op, name in pairs:
        result = run_preprocessing_check(config, np.asarray(inputs[name]), reference, rank=op.rank)
        _verdict(item, result)
        out[name] = _referenced(op, inputs[name], reference)
    return out


def _verdict(item, result) -> None:
    """Record the check (summary, JUnit); a failed one raises, naming the corrected AIPP file
    (written where the fixture writes it: beside the file) as printed, and as the suite file
    spells it where that differs."""
    __tracebackhide__ = True
    from ..report.assertion import AccuracyFailure
    from .aipp_check import corrected_copy, record_preprocessing
    from .session import get_state

    state = get_state(item.config)
    shown = record_preprocessing(
        state, item.nodeid, result, None if result.passed else corrected_copy(
            state, item.nodeid, result, lambda: _temp_dir(item), suite=str(item.path)),
        lambda k, v: item.user_properties.append((k, v)))
    if not result.passed:
        raise AccuracyFailure(result.report(corrected_path=shown, show=state.settings.show),
                              None, None)


def _temp_dir(item) -> Path:
    """A numbered directory under pytest's base temp (as the fixture's tmp_path)."""
    import tempfile

    factory = getattr(item.config, "_tmp_path_factory", None)
    return (factory.mktemp(f"{case_stem(item)}-aipp", numbered=True) if factory is not None
            else Path(tempfile.mkdtemp(prefix="ascend-accuracy-aipp-")))


def case_stem(item) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in item.case.name)[:30]


def reference_inputs(case, where: str) -> Callable[[Dict], Dict]:
    """``check_dataset``'s ``reference_inputs``: one sample's raw images (per AIPP input)
    through the reference pre-processing, the other inputs as they are."""
    loaded = {}

    def convert(sample: Dict) -> Dict:
        if not loaded:  # read once, on the first sample
            loaded["v"] = _aipp_inputs(case, sample, where)
        _, reference, pairs = loaded["v"]
        out = dict(sample)
        for op, name in pairs:
            if name not in sample:
                raise ConfigError(where, f"sample without raw images for AIPP input {op.rank} "
                                         f"({name})")
            out[name] = _referenced(op, sample[name], reference)
        return out

    return convert
