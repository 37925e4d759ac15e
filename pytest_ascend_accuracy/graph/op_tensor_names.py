"""An entry that names an op and is also the name of a tensor another op makes.

keras2onnx names a Dense layer's MatMul node ``dense_6`` and its output tensor ``dense_6``,
made by the bias node ``Add1`` (MTCNN's onet; its own code fetches ``['dense_5', 'dense_6',
'softmax_2']``). An audit's ``per_op={"dense_6": {"max_abs": 4e-4}}`` meant the model output:
where a mode fuses the two it judged the fused op, the output; under ``fusion_off`` it judged
the MatMul before its bias, which passed where the output failed, so the printed
``modes=[FUSION_OFF]`` turned a real failure into a pass. Entries name ops, so such an entry
is refused, naming the op that makes the tensor (which judges the fused op where a mode fuses
them, and the output where none does)."""
from __future__ import annotations

from typing import Iterable, Optional, Tuple


def op_and_tensor_text(entry: str, what: str, outputs: Iterable[Tuple[str, str, int]],
                       type_of=None) -> Optional[str]:
    """Why ``entry`` (an op's name) is refused where ``outputs`` (``(tensor, op, index)`` of
    every node output) holds a tensor of that name made by another op; None otherwise.
    ``type_of``: ``{op: ONNX type}``, to say which op the entry names."""
    made = next(((op, i) for t, op, i in outputs if t == entry and op != entry), None)
    if made is None:
        return None
    op, i = made
    typ = (type_of or {}).get(entry)
    return (f"{what} {entry!r} names op {entry!r}{f' ({typ})' if typ else ''} and is also "
            f"the name of tensor {entry!r}, output {i} of op {op!r}: an entry names ops, so it "
            f"would judge op {entry!r}, not that tensor, wherever a mode keeps the two apart "
            f"(fusion_off); for the tensor name the op that makes it, {op!r} (where a mode "
            f"fuses the two it judges the fused op, as {entry!r} does); for op {entry!r} "
            f"itself, rename it or that tensor in the model")
