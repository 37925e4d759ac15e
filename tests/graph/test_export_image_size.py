"""The dynamic-shape advice offers the image size an exporter recorded: NudeNet's YOLOv8
``320n.onnx`` (``images`` [batch, 3, height, width], Ultralytics' metadata ``imgsz: [320, 320]``)
was offered 32x32, its first common size that runs, a 1x1 top feature map and a 21-anchor head,
not the graph it is deployed as (audit 34)."""
import onnx
import pytest
from onnx import TensorProto, helper

from pytest_ascend_accuracy.graph.export_metadata import image_size
from pytest_ascend_accuracy.graph.onnx_graph import make_inputs
from pytest_ascend_accuracy.graph.shape_advice import DynamicShapeError


def _model(imgsz=None):
    x = helper.make_tensor_value_info("images", TensorProto.FLOAT, ["batch", 3, "height", "width"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    graph = helper.make_graph([helper.make_node("Relu", ["images"], ["y"], name="act")], "det",
                              [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    if imgsz is not None:
        onnx.helper.set_model_props(model, {"author": "Ultralytics", "imgsz": imgsz,
                                            "stride": "32"})
    return model


@pytest.mark.parametrize("imgsz, size", [("[320, 320]", (320, 320)), ("[480, 640]", (480, 640)),
                                         ("640", (640, 640)), ("", None), (None, None)])
def test_the_metadata_size_is_read(imgsz, size):
    assert image_size(_model(imgsz)) == size


def test_the_advice_offers_the_exported_size_and_it_runs_pasted():
    with pytest.raises(DynamicShapeError) as info:
        make_inputs(_model("[320, 320]"), seed=0)
    text = str(info.value)
    assert ("e.g. with the 320x320 its metadata's imgsz gives for its image and 1 for each "
            "other dynamic dimension: input_shape={'images': (1, 3, 320, 320)}") in text, text
    inputs = make_inputs(_model("[320, 320]"), seed=0, input_shape={"images": (1, 3, 320, 320)})
    assert inputs["images"].shape == (1, 3, 320, 320)


def test_without_metadata_the_advice_is_as_before():
    with pytest.raises(DynamicShapeError) as info:
        make_inputs(_model(), seed=0)
    assert "imgsz" not in str(info.value)


def test_an_nhwc_input_is_not_given_the_image_size():
    """A final review: ``[batch, height, width, 3]`` was offered ``(1, 1, 320, 320)``."""
    x = helper.make_tensor_value_info("images", TensorProto.FLOAT, ["batch", "height", "width", 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    graph = helper.make_graph([helper.make_node("Relu", ["images"], ["y"], name="act")], "nhwc",
                              [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.helper.set_model_props(model, {"imgsz": "[320, 320]"})
    with pytest.raises(DynamicShapeError) as info:
        make_inputs(model, seed=0)
    assert "imgsz" not in str(info.value) and "320" not in str(info.value)


def test_an_image_size_the_model_refuses_is_told_its_stride(pytester):
    """NudeNet at 300x300 was refused at a Concat of two branches ("Inferred=19 Declared=20"),
    which said nothing of the sizes it takes (audit 34): the refusal names the export's stride
    and the size it was exported for."""
    x = helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, "height", "width"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    scales = helper.make_tensor("scales", TensorProto.FLOAT, [4], [1.0, 1.0, 2.0, 2.0])
    nodes = [helper.make_node("MaxPool", ["images"], ["p"], name="down", kernel_shape=[2, 2],
                              strides=[2, 2]),
             helper.make_node("Resize", ["p", "", "scales"], ["u"], name="up", mode="nearest"),
             helper.make_node("Add", ["images", "u"], ["y"], name="join")]
    model = helper.make_model(helper.make_graph(nodes, "fpn", [x], [y], [scales]),
                              opset_imports=[helper.make_opsetid("", 17)])
    onnx.helper.set_model_props(model, {"stride": "32", "imgsz": "[64, 64]"})
    onnx.save(model, str(pytester.path / "fpn.onnx"))
    pytester.makepyfile(test_odd="""
        import numpy as np
        from pytest_ascend_accuracy import accuracy

        @accuracy(threshold=0.99)
        def test_odd(ascend_model, golden_dump, check_accuracy, accuracy_inputs):
            x = np.random.default_rng(0).random((1, 3, 31, 31), dtype=np.float32)
            inputs = accuracy_inputs("fpn.onnx", inputs={"images": x})
            actual = ascend_model("fpn.onnx").run(inputs)
            check_accuracy(actual, golden_dump("fpn.onnx", inputs))
    """)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    assert ("its metadata's stride is 32 (an Ultralytics export): the height and width of input "
            "'images' (31x31) must be multiples of 32, e.g. 64x64, the imgsz it was exported "
            "for") in result.stdout.str(), result.stdout.str()[-3000:]
