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

#: what ``runs_whole`` returns where the model was not tried whole
UNKNOWN = None
#: the most bytes of a model (weights included) tried whole: one session holds every weight,
#: where the segmented run holds one segment's (a review: a 1.6 GB model's failure peaked at
#: 4.9 GB of memory, against 0.53 GB without the retry)
WHOLE_RUN_BYTES = 256 << 20


def runs_whole(proto, feeds: Mapping[str, object], folder: Optional[str] = None) -> Optional[bool]:
    """True where onnxruntime runs ``proto`` (a prepared ModelProto) on ``feeds`` as one
    session; False where it fails too; ``UNKNOWN`` where it is not tried: weights left in
    external data (``folder``: a big model) or a model over ``WHOLE_RUN_BYTES``."""
    from .onnx_graph import ort_session

    if folder or proto.ByteSize() > WHOLE_RUN_BYTES:
        return UNKNOWN
    data = proto.SerializeToString()
    try:
        session = ort_session(data, threads=1, arena=False, spinning=False)
        session.run(None, dict(feeds))
    except Exception:
        return False
    return True


def segmented_failure_note(whole: Optional[bool]) -> str:
    """What to add to a segmented run's failure, given ``runs_whole``'s answer."""
    if whole:
        return ("; yet onnxruntime runs this model whole on these inputs, as one session: the "
                "failure is in pytest-ascend-accuracy's run of it in segments (one session per "
                "segment, so that no run holds every tensor at once), not in the model: report "
                "it to pytest-ascend-accuracy's maintainers with the model and this message")
    return ""
