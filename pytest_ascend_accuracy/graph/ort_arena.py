"""One onnxruntime CPU arena shared by the segment sessions of a process (``graph.stream``).

Segment sessions run one after another: with an arena each, every segment's arena kept its
peak; with none, every tensor was a fresh ``mmap`` whose pages the kernel faulted in and zeroed
(300,000 page faults, about half a second of system time, per det 736x736 emulated run; 50,000
shared). Shared (``session.use_env_allocators``), the next segment reuses the pages the last
one freed.

A run's outputs are numpy arrays over arena memory (onnxruntime does not copy them), so the
arena holds them until they are dropped; ``release_shared_arena`` then gives the unused regions
(as large as requested: ``arena_extend_strategy`` 1) back. onnxruntime shrinks an arena only at
the end of a run that asks for it, so a one-element Identity session on the shared arena runs
with ``memory.enable_memory_arena_shrinkage``. A run of several segments first reserves its
largest segment's bytes as one region (``reserve_shared_arena``), which its tensors are then
split out of.
"""
from __future__ import annotations

#: ``ort_session(arena=SHARED_ARENA)``: the session allocates from the shared arena
SHARED_ARENA = "shared"

_REGISTERED: list = []  # [True] once registered, [False] where this onnxruntime cannot
_RELEASER: list = []  # [(session, run options)]


def shared_arena() -> bool:
    """Register (once per process) the shared CPU arena; False where this onnxruntime cannot
    (sessions asking for it then use no arena)."""
    if not _REGISTERED:
        from .onnxruntime_version import require_onnxruntime

        ort = require_onnxruntime()
        try:
            info = ort.OrtMemoryInfo("Cpu", ort.OrtAllocatorType.ORT_ARENA_ALLOCATOR, 0,
                                     ort.OrtMemType.DEFAULT)
            ort.create_and_register_allocator(info, ort.OrtArenaCfg({"arena_extend_strategy": 1}))
            _REGISTERED.append(True)
        except Exception:  # an onnxruntime without it (its errors are plain Exceptions)
            _REGISTERED.append(False)
    return _REGISTERED[0]


def _one_node_session(graph):
    """A one-thread onnxruntime session of ``graph`` (opset 13) on the shared arena."""
    import onnxruntime as ort
    from onnx import helper

    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    so.log_severity_level = 3
    so.add_session_config_entry("session.use_env_allocators", "1")
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])


def release_shared_arena() -> None:
    """Give the shared arena's unused regions back (a no-op when there is none)."""
    if not (_REGISTERED and _REGISTERED[0]):
        return
    import numpy as np
    import onnxruntime as ort

    if not _RELEASER:
        from onnx import TensorProto, helper

        graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "release",
                                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
        options = ort.RunOptions()
        options.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
        _RELEASER.append((_one_node_session(graph), options))
    session, options = _RELEASER[0]
    # input and output bound to memory of this call's own: the shrink at the end of the run
    # frees every region with nothing left in it, and a returned output would sit in one
    x, y = np.zeros(1, np.float32), np.zeros(1, np.float32)
    binding = session.io_binding()
    binding.bind_cpu_input("x", x)
    binding.bind_output("y", "cpu", 0, np.float32, [1], y.ctypes.data)
    session.run_with_iobinding(binding, options)


_RESERVER: list = []  # [session]


def reserve_shared_arena(nbytes: int) -> None:
    """Grow the shared arena by one region of ``nbytes``, its pages touched, then free in it
    (a no-op where this onnxruntime has none, or for less than ``MIN_RESERVE``). A streamed
    run's tensors then come out of that one region, split as they need, instead of each size
    that finds no free chunk adding a region of its own (``arena_extend_strategy`` 1) whose
    pages the computing thread faults in: an emulated PP-OCRv4 det 736 run faulted 35,000
    pages in its runner thread, 10,000-21,000 with 32-64 MB reserved first. The region goes
    back with the others at ``release_shared_arena``. It registers the shared arena when no
    session has yet: a process's first run (a warm check's, its golden read from the cache)
    builds its sessions only after this, and reserved nothing before."""
    if nbytes < MIN_RESERVE or not shared_arena():
        return
    import numpy as np

    if not _RESERVER:
        from onnx import TensorProto, helper

        zero = helper.make_tensor("zero", TensorProto.FLOAT, [1], [0.0])
        graph = helper.make_graph(
            [helper.make_node("ConstantOfShape", ["n"], ["y"], value=zero)], "reserve",
            [helper.make_tensor_value_info("n", TensorProto.INT64, [1])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
        _RESERVER.append(_one_node_session(graph))
    y = _RESERVER[0].run(["y"], {"n": np.array([nbytes // 4], np.int64)})[0]
    del y  # its chunk is free in the arena now, and its pages are there


#: reservations below this are not made (a small model's run needs no help)
MIN_RESERVE = 4 << 20

__all__ = ["MIN_RESERVE", "SHARED_ARENA", "release_shared_arena", "reserve_shared_arena",
           "shared_arena"]
