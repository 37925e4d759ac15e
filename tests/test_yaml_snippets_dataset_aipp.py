"""Two more YAML snippets printed to paste go through ``core.yaml_text`` (a review, H335): the
dataset warning's ``dataset: {max_drop: 1e-05}`` was a string to YAML (PyYAML's floats need a
dot), refused pasted as ``must be a number >= 0, got '1e-05'``; the AIPP refusal's
``inputs: {on: frames.npy}`` named an input ``True``."""
import re
import types

import numpy as np
import pytest
import yaml

from pytest_ascend_accuracy.errors import ConfigError


def test_the_dataset_max_drop_snippet_pasted_into_a_suite_entry_is_that_number(tmp_path):
    from pytest_ascend_accuracy.plugin.dataset_check import warn_marker_max_drop, yaml_dataset

    warned = []
    marker = types.SimpleNamespace(kwargs={"max_drop": 1e-05})
    item = types.SimpleNamespace(get_closest_marker=lambda name: marker,
                                 warn=lambda w: warned.append(str(w)))
    ctx = types.SimpleNamespace(dataset_max_drops=[0.01], accuracy_checks=[],
                                nodeid="test_x.py::test_x")
    warn_marker_max_drop(item, ctx)
    snippet = re.search(r"\(YAML: (dataset: \{.*?\})\) to use it", warned[0]).group(1)
    spec = yaml.safe_load(snippet)["dataset"]
    assert spec == {"max_drop": 1e-05}
    (tmp_path / "samples").mkdir()
    parsed = yaml_dataset(dict(spec, samples="samples", metric="agreement"), tmp_path,
                          "models[0].dataset")
    assert parsed["max_drop"] == 1e-05


@pytest.mark.parametrize("name", ["on", "x #1", "a,b", "x"])
def test_the_aipp_inputs_snippet_names_the_input(name):
    from pytest_ascend_accuracy.aipp import parse_aipp_config
    from pytest_ascend_accuracy.aipp.raw_images import seeded_raw_images

    config = parse_aipp_config("aipp_op {\n aipp_mode: static\n input_format: RGB888_U8\n"
                               " src_image_size_w: 0\n src_image_size_h: 0\n}\n")
    with pytest.raises(ConfigError) as refused:
        seeded_raw_images(config, {name: np.zeros((2, 16, 12), np.float32)}, [name], seed=1)
    snippet = re.search(r"\((inputs: \{.*\})\)", str(refused.value)).group(1)
    assert yaml.safe_load(snippet) == {"inputs": {name: "frames.npy"}}
