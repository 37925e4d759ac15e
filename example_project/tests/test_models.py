"""Accuracy tests of the example models, run on the CPU emulator unless --ascend-device is given.

Exactly one test here fails, the way a real fp16 overflow fails on an NPU: the ``overflow``
model's BatchNormalization has running variances of 1e9, past float16's 65504, so the default
(fp16) conversion breaks at op ``norm``. The same test passes under ``high_precision`` and with
``keep_dtype(["norm"])``; that is what ``modes=[...]`` is for.
"""
from pytest_ascend_accuracy import accuracy, keep_dtype


@accuracy(threshold=0.99)
def test_mlp_matches_golden(model_file, sample_inputs, ascend_model, golden_dump, check_accuracy):
    model = model_file("passing_mlp")
    inputs = sample_inputs(model)
    golden = golden_dump(model, inputs)  # first: the run is compared with it as it runs
    check_accuracy(ascend_model(model).run(inputs), golden)


@accuracy(threshold=0.99)
def test_mlp_against_stored_golden(model_file, sample_inputs, ascend_model, golden_dump,
                                   check_accuracy):
    # a golden kept in the repository: written on first run, rewritten only with
    # --accuracy-regen (failing tests) or --accuracy-regen-all
    model = model_file("passing_mlp")
    inputs = sample_inputs(model)
    golden = golden_dump(model, inputs, path="golden/passing_mlp")
    check_accuracy(ascend_model(model).run(inputs), golden)


@accuracy(threshold=0.95, modes=["default", "high_precision", keep_dtype(["norm"])])
def test_overflow_model(model_file, sample_inputs, ascend_model, golden_dump, check_accuracy):
    # fails in [default] (fp16 overflow in norm), passes in the two fixed modes
    model = model_file("overflow")
    inputs = sample_inputs(model)
    golden = golden_dump(model, inputs)
    check_accuracy(ascend_model(model).run(inputs), golden)


@accuracy(threshold=0.99, modes=["default", "fusion_off"])
def test_conv_bn_relu(model_file, sample_inputs, ascend_model, golden_dump, check_accuracy):
    # with fusion on, Conv+BatchNormalization+Relu run as one fused op, dumped once
    model = model_file("conv_bn_relu")
    inputs = sample_inputs(model)
    golden = golden_dump(model, inputs)
    check_accuracy(ascend_model(model).run(inputs), golden)


def test_conversion_is_cached(model_file, atc_convert, ascend_device):
    # the same model + mode + options converts once; the second call is a cache hit
    first = atc_convert(model_file("transformer_block"), "default")
    again = atc_convert(model_file("transformer_block"), "default")
    assert first.path == again.path
    assert ascend_device is None or isinstance(ascend_device, int)
