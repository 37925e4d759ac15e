"""Helpers for emulator tests: run a rewritten graph directly (no dump files) and a golden run."""
import numpy as np
import pytest


def cosine(a, b) -> float:
    a = np.asarray(a, np.float64).ravel()
    b = np.asarray(b, np.float64).ravel()
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def emulate(model, mode, inputs, **kwargs):
    """(plan, {dumped op name: [output arrays as dumped]}) of the emulated model on ``inputs``."""
    from pytest_ascend_accuracy.backends.emulator.rewrite import emulate_graph
    from pytest_ascend_accuracy.graph.onnx_graph import ort_session

    proto, plan = emulate_graph(model, mode, **kwargs)
    fetch = plan.fetch
    values = dict(zip(fetch, ort_session(proto.SerializeToString()).run(fetch, inputs)))
    outs = {}
    for op in plan.ops:
        arrays = []
        for s in op.outputs:
            arr = values[s.fetch]
            arrays.append(arr.astype(s.dtype) if s.dtype and s.dtype != "bfloat16" else arr)
        outs[op.name] = arrays
    return plan, outs


def golden_values(model, inputs):
    """{original node name: [outputs]} from onnxruntime fp32 on the prepared model."""
    from pytest_ascend_accuracy.graph.onnx_graph import mark_all_outputs, ort_session
    from pytest_ascend_accuracy.graph.prepare import prepare_model

    proto = prepare_model(model, inputs=inputs).model
    names = [o for n in proto.graph.node for o in n.output if o]
    mark_all_outputs(proto)
    vals = dict(zip(names, ort_session(proto.SerializeToString()).run(names, inputs)))
    return {n.name: [vals[o] for o in n.output if o] for n in proto.graph.node}


@pytest.fixture
def cache(tmp_path):
    from pytest_ascend_accuracy.core.cache import Cache

    return Cache(tmp_path / "cache")
