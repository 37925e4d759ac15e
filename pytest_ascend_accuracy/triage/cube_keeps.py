"""A diagnosis fix keeping a Cube op, and the chip the emulator modelled it on.

Audit 36 B F1: ``--accuracy-diagnose`` of openWakeWord's embedding model printed "keep_dtype
{Pad, Conv2D__7, Conv2D} restores cosine 0.999996": the emulator ran the kept Conv wholly in
float32, float32 inputs and weights. CANN gives Conv2D float32 inputs only on Atlas 200I/500 A2,
Atlas A2 and A3 products (conv2d API, aicpuopapi atlaste_07_0050), and the Cube unit of Atlas
inference (310P) and training (910) products takes no float32 (aclnnMatmul's cubeMathType);
there --keep_dtype falls back to "the high precision supported by the operators"
(atlasatcparam_16_0074): float16 inputs, a float32 output. The fix held on A2/A3 chips only;
on an Atlas 300I card the auditor's model of it failed (0.999839).

The emulator models the chip ``--soc-version`` names (``backends.emulator.rounding.
cube_fp32_kernels``); with none, float32 Cube kernels, as before. So:

- where a fix keeps a Cube op and the emulator had float32 Cube kernels, its verdict says, in
  one sentence (``cube_note``), that the fix holds only where the Cube op computes from float32
  inputs, and gives the option that checks it on a float16-only chip: ``--soc-version=
  Ascend310P3`` (the plugin's and the CLI's spelling alike: argparse takes ``--opt=value``);
- with a float16-only SoC a kept Cube op takes float16 inputs, so no fix restores by keeping one
  for its input rounding, and where keeping every op in float32 still differs at a Cube op
  beyond float32 rounding, the verdict says its float16 inputs are that difference
  (``float16_cube_inputs``) instead of blaming the operator's implementation.

The failure block's keep lists (``report``) are not annotated: whether a listed Cube op is there
for its own input rounding or for its output is not known without another conversion.
"""
from __future__ import annotations

from typing import List

#: the chips whose Cube unit takes float32 inputs (conv2d API, atlaste_07_0050)
FLOAT32_CUBE_CHIPS = ("Atlas A2/A3, Atlas 200I/500 A2 and Atlas 350 products (Ascend910B1-B4, "
                      "Ascend910_93*, Ascend310B*, Ascend950*)")
#: the chips where ATC feeds a kept Cube op float16 inputs
FLOAT16_CUBE_CHIPS = "Atlas 300I/300V (310P) and Atlas training (910) products"
#: the option, pasted, that models such a chip (plugin and CLI)
CHECK_OPTION = "--soc-version=Ascend310P3"


def _float32_cube(backend) -> bool:
    """Whether ``backend`` is the emulator modelling float32 Cube kernels (no SoC or A2/A3)."""
    emulator = getattr(backend, "name", "") == "emulator"
    return emulator and bool(getattr(backend, "cube_fp32", True))


def kept_cube_ops(mode, model) -> List[str]:
    """The names of ``model``'s Cube ops (Conv, ConvTranspose, MatMul, Gemm) that ``mode``'s
    keep_dtype keeps (by name, or by ``OpType::`` as ATC's parser types them), in graph order;
    [] where the model cannot be read (a note only)."""
    from ..backends.emulator.rounding import CUBE_OPS, kept_by_parser_type
    from ..graph.onnx_graph import load_model

    if mode is None or not mode.keep_dtype:
        return []
    try:
        nodes = list(load_model(model, weights=False).graph.node)
    except Exception:  # noqa: BLE001 -- the diagnosis read it already
        return []
    keeps = kept_by_parser_type(mode, nodes)
    return [n.name for n in nodes if n.op_type in CUBE_OPS and keeps(n.name, n.op_type)]


def cube_note(names: List[str]) -> str:
    """The sentence appended to the verdict of a fix keeping the Cube ops ``names``."""
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    many = len(names) > 1
    return (f"; this fix keeps Cube op{'s' if many else ''} {shown}, which "
            f"compute{'' if many else 's'} from float32 inputs only on {FLOAT32_CUBE_CHIPS}, as "
            f"this run modelled: on "
            f"{FLOAT16_CUBE_CHIPS} ATC feeds {'them' if many else 'it'} float16 inputs (its "
            f"output stays float32), so where the fix rests on {'their' if many else 'its'} "
            f"inputs it may not hold there: rerun with {CHECK_OPTION} to check")


def with_cube_note(outcome: dict, model, backend) -> dict:
    """``outcome`` (``_Flow.walk``'s) with ``cube_note`` in its verdict where ``backend`` models
    float32 Cube kernels and the fix keeps a Cube op; as it is otherwise."""
    if not _float32_cube(backend) or outcome.get("restored_by") in (None, "default"):
        return outcome
    names = kept_cube_ops(outcome.get("fix_mode"), model)
    if not names:
        return outcome
    return {**outcome, "verdict": outcome["verdict"] + cube_note(names)}


def with_notes(outcome: dict, runner) -> dict:
    """``outcome`` with the notes ``_Flow.walk`` ends on: ``quant_note.with_note`` (ATC does not
    convert the model's quantisation ops) and ``with_cube_note``."""
    from .quant_note import with_note

    return with_cube_note(with_note(outcome, runner.model), runner.model, runner.backend)


def float16_cube_inputs(row, backend, shown: str) -> str:
    """Where keeping every op in float32 still differs from the golden beyond float32 rounding
    first at ``row`` (``fp32_rounding.conclusion``; ``shown``: the op and its error, as it says
    them), and ``row``'s op runs on the Cube unit of a float16-only chip the emulator models
    (``--soc-version``): the verdict's end saying that its float16 inputs are the difference,
    which no keep_dtype set removes there; else ""."""
    from ..report.failure_kinds import on_cube

    if getattr(backend, "name", "") != "emulator" or _float32_cube(backend) or not on_cube(row):
        return ""
    return (f"keeping every op in float32, the run differs from the golden first at op {shown}, "
            f"a Cube op: on {getattr(backend, 'soc_version', None)}, whose Cube unit takes "
            f"float16 only, keep_dtype leaves its inputs float16, as ATC falls back to the "
            f"precision the op supports, so no keep_dtype set removes that rounding there (chips "
            f"with float32 Cube kernels compute it from float32 inputs: {FLOAT32_CUBE_CHIPS})")
