"""``--accuracy-diagnose`` of a failed check whose model takes raw images through an AIPP file.

The device runs on raw images, the golden on the network's own inputs (the reference
pre-processing's output), so the flow gets both: step 5 compares the device's ``Aipp`` output
with the golden inputs (``triage.inputs.input_check``: a mean/scale mistake reads as
``golden * a + b``), and the conversions of the other steps keep the AIPP file. When step 5
fails, the AIPP file is checked against those golden inputs field by field
(``aipp.check_preprocessing``, a reference that returns each image's golden input), which names
the fields to correct and writes the corrected copy as the ``check_preprocessing`` fixture does;
the images, the golden inputs and that reference are written to the diagnosis folder, so the
printed ``ascend-accuracy diagnose --aipp`` command runs pasted.
"""
from __future__ import annotations

import shlex
from pathlib import Path
from typing import Dict, List, Mapping

import numpy as np

_REFERENCE_SOURCE = '''"""The golden inputs of {nodeid} as a reference pre-processing for
``ascend-accuracy diagnose --aipp``: each image of {images} -> its golden input of {golden}.
It knows only these images: to check your own pre-processing function, give it instead
(--reference path/to/file.py:FN or MODULE:FN, FN(image) -> float CHW)."""
import os

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
IMAGES = np.load(os.path.join(_HERE, {images!r}))
GOLDEN = np.load(os.path.join(_HERE, {golden!r}))


def reference(image):
    for raw, golden in zip(IMAGES, GOLDEN):
        if raw.shape == image.shape and np.array_equal(raw, image):
            return golden
    raise ValueError("not one of the images in {images}: give your own pre-processing "
                     "function as --reference MODULE:FN")
'''


def aipp_diagnosis(state, handle, inputs, golden, spec, nodeid: str, head: str,
                   one_model: str = "", *, run_flow, golden_inputs=None, on: str = "") -> str:
    """The diagnosis lines of a failed check of ``handle`` (an ``AscendModel`` with ``aipp``)
    run on the raw ``inputs`` and compared with ``golden``; ``run_flow``: the flow's lines
    (``check_flow.diagnosis_lines``, passed in: that module imports this one).
    ``golden_inputs``: the reference run's inputs where they are known without a golden (a
    dataset check's ``reference_inputs(sample)``), the golden then computed from them; ``on``:
    what ``inputs`` are (a dataset check's flipped sample)."""
    from ..graph.onnx_graph import graph_inputs, load_model
    from ..triage.inputs import golden_graph_inputs

    config = handle.aipp
    names = [i.name for i in graph_inputs(load_model(handle.model, weights=False))]
    if golden_inputs is not None:
        wanted = {n: np.asarray(v) for n, v in golden_inputs.items() if n in names}
        missing = [n for n in names if n not in wanted]
        if missing:
            return (f"{head}: not run: the reference inputs hold no value of input(s) "
                    f"{', '.join(map(repr, missing))}, and step 5 compares the device's Aipp "
                    f"output with them")
        return _run_step_5(state, handle, inputs, None, wanted, names, spec, nodeid, one_model,
                           run_flow, on)
    if golden is None:
        return (f"{head}: not run: the inputs this model's reference run saw are not known here "
                f"(step 5 compares the device's Aipp output with them); check the AIPP file "
                f"{state.settings.show(config.path)} against your pre-processing with "
                f"check_preprocessing(om, images, reference=FN), FN your pre-processing "
                f"function (image -> float CHW)")
    wanted = golden_graph_inputs(golden, handle.model, names)
    missing = [n for n in names if n not in wanted]
    if missing:
        return (f"{head}: not run: the golden holds no value of input(s) "
                f"{', '.join(map(repr, missing))} (a stored golden keeps op outputs only unless "
                f"written with --accuracy-store-inputs; --accuracy-store-inputs "
                f"--accuracy-regen-all rewrites it with them), and step 5 compares the device's "
                f"Aipp output with the golden inputs")
    return _run_step_5(state, handle, inputs, golden, wanted, names, spec, nodeid, one_model,
                       run_flow, on)


def _run_step_5(state, handle, inputs, golden, wanted, names: List[str], spec, nodeid: str,
                one_model: str, run_flow, on: str) -> str:
    """The flow from step 5 on, with the AIPP file checked field by field where step 5 fails."""
    arrays = dict(getattr(inputs, "arrays", inputs))
    lines, d, out_dir = run_flow(state, handle, arrays, spec, nodeid=nodeid, one_model=one_model,
                                 on=on, golden=golden, golden_inputs=wanted)
    data = d.step("data")
    if data is not None and data.passed is False:
        lines[1:1] = _preprocessing_lines(state, handle, handle.aipp, arrays, wanted, names,
                                          nodeid, out_dir)
    return "\n".join(lines)


def _preprocessing_lines(state, handle, config, raw: Mapping[str, np.ndarray],
                         wanted: Mapping[str, np.ndarray], names: List[str], nodeid: str,
                         out_dir: Path) -> List[str]:
    """Each AIPP block checked against the golden inputs of its model input: the fields to
    correct, the corrected copy, and the command that repeats the check from the shell."""
    from ..aipp import check_preprocessing
    from ..aipp.apply import _is_single_image
    from ..errors import AscendAccuracyError
    from .aipp_check import corrected_copy

    show = state.settings.show
    lines: List[str] = []
    for op in config.ops:
        if op.rank >= len(names) or names[op.rank] not in raw:
            continue
        name = names[op.rank]
        images = np.asarray(raw[name])
        images = images[None] if _is_single_image(op, images) else images
        golden = np.asarray(wanted[name])
        golden = golden[None] if golden.ndim == 3 else golden
        if len(images) != len(golden):
            lines.append(f"  the AIPP file's block for input {name!r} was not checked field by "
                         f"field: {len(images)} image(s) against {len(golden)} golden input(s)")
            continue
        reference = _lookup(images, golden)
        try:
            result = check_preprocessing(config, images, reference, rank=op.rank)
        except AscendAccuracyError as exc:
            lines.append(f"  the AIPP file's block for input {name!r} could not be checked field "
                         f"by field: {exc}")
            continue
        written = corrected_copy(state, nodeid, result, lambda: out_dir)
        text = result.report(corrected_path=written and written[1], show=show)
        lines.append(f"  the AIPP file against this test's golden inputs (the reference "
                     f"pre-processing's output) of input {name!r}:")
        lines.extend("    " + line for line in text.splitlines())
        command, module = _shell_command(config, op.rank, name, images, golden, nodeid,
                                         out_dir, show)
        lines.append(f"  the same check from the shell, where pytest ran: {command}")
        lines.append(f"    ({module} returns this test's golden input of each of these "
                     f"images; to check your pre-processing function on any image, give it "
                     f"instead: --reference path/to/file.py:FN or MODULE:FN, FN(image) -> float "
                     f"CHW)")
    return lines


def _lookup(images: np.ndarray, golden: np.ndarray):
    """``reference(image)``: the golden input of the image (the check passes its images)."""
    def reference(image):
        for raw, value in zip(images, golden):
            if raw.shape == image.shape and np.array_equal(raw, image):
                return value
        raise ValueError("an image the check was not given")  # (never: it passes its own)

    return reference


def _shell_command(config, rank: int, name: str, images: np.ndarray, golden: np.ndarray,
                   nodeid: str, out_dir: Path, show):
    """``ascend-accuracy diagnose --aipp ... --images ... --reference ...`` over files written to
    ``out_dir``: the raw images, the golden inputs and the reference that pairs them; and
    the reference module's file name."""
    from ..core.atomic_files import atomic_write_text

    out_dir.mkdir(parents=True, exist_ok=True)
    stem = "".join(c if c.isalnum() or c in "_-" else "_" for c in name)
    files: Dict[str, np.ndarray] = {f"images_{stem}.npy": images, f"golden_{stem}.npy": golden}
    for file, array in files.items():
        np.save(out_dir / file, np.ascontiguousarray(array))
    module = out_dir / f"golden_reference_{stem}.py"
    atomic_write_text(module, _REFERENCE_SOURCE.format(
        nodeid=nodeid, images=f"images_{stem}.npy", golden=f"golden_{stem}.npy"))
    words = ["ascend-accuracy", "diagnose", "--aipp", show(config.path),
             "--images", show(out_dir / f"images_{stem}.npy"),
             "--reference", f"{show(module)}:reference"]
    if rank:
        words += ["--aipp-input", str(rank)]
    return " ".join(shlex.quote(w) for w in words), module.name
