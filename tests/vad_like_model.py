"""A model shaped as silero-vad's (``silero_vad.onnx``, 6.2.3) is where it matters here: the
whole network inside an ``If`` that the sample rate, a value of the run, decides, so the device
runs it as one operator and dumps only its outputs, copied to the graph outputs by ``Identity``
nodes.

``vad_like_model``: ``x`` [1, 16] and ``sr`` (int64, no dimension); ``Equal(sr, 16000)``
decides If ``pick``. Its then branch computes ``tanh(x @ W * 1e-7)`` with W = 30 * I (an outer
weight) through six ops; fed int16-scale audio (``PCM``, up to 30000) its MatMul reaches
|9e5|, which float16 makes Inf, and the Tanh then outputs +-1 where the golden's stay near 0
(cosine 0.91); fed audio in [-1, 1] (``AUDIO``) it passes. Its else branch is one Tanh.
``copies``: that many ``Identity`` nodes copy pick's output one after another, the last
being the graph output (silero's ``Introduce_0_id0``; 0: pick's output is the graph's)."""
import numpy as np

N = 16
PCM = (np.linspace(-1, 1, N) * 30000).astype(np.float32)[None]
AUDIO = np.linspace(-1, 1, N).astype(np.float32)[None]
SR = np.array(16000, np.int64)


def vad_like_model(path, copies: int = 0):
    import onnx
    from onnx import TensorProto as TP, helper as h, numpy_helper as nh

    def vi(name, shape, elem=TP.FLOAT):
        return h.make_tensor_value_info(name, elem, shape)

    then = h.make_graph([
        h.make_node("MatMul", ["x", "W"], ["mm"], name="then/matmul"),
        h.make_node("Mul", ["mm", "scale"], ["sc"], name="then/scale"),
        h.make_node("Add", ["sc", "bias"], ["bi"], name="then/bias"),
        h.make_node("Tanh", ["bi"], ["th"], name="then/tanh"),
        h.make_node("Neg", ["th"], ["ng"], name="then/neg"),
        h.make_node("Neg", ["ng"], ["t_out"], name="then/neg2")],
        "then", [], [vi("t_out", [1, N])])
    other = h.make_graph([h.make_node("Tanh", ["x"], ["e_out"], name="else/tanh")],
                         "else", [], [vi("e_out", [1, N])])
    out = "y" if copies else "speech"
    nodes = [h.make_node("Constant", [], ["rate"], name="rate",
                         value=nh.from_array(np.array(16000, np.int64))),
             h.make_node("Equal", ["sr", "rate"], ["is16k"], name="is16k"),
             h.make_node("If", ["is16k"], [out], name="pick", then_branch=then,
                         else_branch=other)]
    for k in range(copies):
        last = k == copies - 1
        nodes.append(h.make_node("Identity", [out], ["speech" if last else f"copy{k}"],
                                 name=f"copy_{k}"))
        out = f"copy{k}"
    inits = [nh.from_array((30 * np.eye(N)).astype(np.float32), "W"),
             nh.from_array(np.array([1e-7], np.float32), "scale"),
             nh.from_array(np.zeros(N, np.float32), "bias")]
    graph = h.make_graph(nodes, "vad_like", [vi("x", [1, N]), vi("sr", [], TP.INT64)],
                         [vi("speech", [1, N])], inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, str(path))
    return path
