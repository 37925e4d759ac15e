"""Whether onnxruntime runs a model whole where this package's run of it in segments failed.

The golden and the emulator run a model in segments (``stream.SegmentedModel``), each its own
onnxruntime session. A failure there was reported as "onnxruntime could not run the golden
model" with onnxruntime's message, which named the model's op: IMG.LY's ISNet failed so at a
Resize (a Constant fed to a later segment as an input, fixed since), while the user's own
onnxruntime run of the file worked (audit 35). Where a segmented run fails, one plain inference
of the same prepared model (its outputs only, optimisations off) tells the two cases apart: the
error then says whether the fault is this package's way of running the model."""
from __future__ import annotations

from typing import Mapping, Optional

#: what ``runs_whole`` returns where the model could not be tried whole
UNKNOWN = None


def runs_whole(proto, feeds: Mapping[str, object], folder: Optional[str] = None) -> Optional[bool]:
    """True where onnxruntime runs ``proto`` (a prepared ModelProto, its big weights possibly
    left in ``folder``) on ``feeds`` as one session; False where it fails too; ``UNKNOWN`` where
    it cannot be tried (a model over protobuf's 2 GB)."""
    from .external import EXTERNAL_FOLDER_KEY
    from .onnx_graph import ort_session

    try:
        data = proto.SerializeToString()
    except Exception:  # (ValueError: over 2 GB)
        return UNKNOWN
    config = {EXTERNAL_FOLDER_KEY: folder} if folder else None
    try:
        session = ort_session(data, threads=1, arena=False, spinning=False, config=config)
        session.run(None, dict(feeds))
    except Exception:
        return False
    return True


def segmented_failure_note(whole: Optional[bool]) -> str:
    """What to add to a segmented run's failure, given ``runs_whole``'s answer."""
    if whole:
        return (" (onnxruntime runs this model whole on these inputs: the failure is in "
                "pytest-ascend-accuracy's run of it in segments, one session per segment, "
                "not in the model; please report it with the model)")
    return ""
