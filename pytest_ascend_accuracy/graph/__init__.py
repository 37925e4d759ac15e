"""ONNX graph preparation shared by the golden run and the emulator.

Node naming for messy exports (``names``), static tensors and folding (``static``), inlining of
``If`` branches (``inline``) and model loading / inputs / sessions (``onnx_graph``). May import
``core``, ``dump`` and ``errors``; onnx and onnxruntime are imported inside functions.
"""
