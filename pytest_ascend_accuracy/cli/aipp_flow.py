"""``ascend-accuracy diagnose MODEL --aipp F --images I --reference MODULE:FN``: the flow after
step 5 converts as the model is deployed, with the AIPP file.

Step 5 (``aipp_step``) checks the AIPP file against the reference pre-processing. The flow's
steps 1-4 then ran without the file on seeded inputs, so the fix it printed (``atc_args.txt``,
the ``ATC:`` line) lacked ``--insert_op_conf``: pasted into an atc command it converted a model
that takes no raw images. Here the model converts with ``--insert_op_conf=F`` (the fix folder
holds a copy, ``triage.fix_folder``), its AIPP input is fed the raw images, and the golden runs
on ``reference(image)`` of each (``diagnose(..., golden_inputs=)``, as the plugin's
``--accuracy-diagnose`` of an AIPP model does). A static batch of B takes the first B images;
a dynamic one takes them all, and dimensions the model leaves open are those of the reference
tensors. The model's other inputs are the ``--inputs`` given or seeded ones.
"""
from __future__ import annotations

import argparse
from typing import Dict, Mapping, Tuple

import numpy as np

from ..errors import ConfigError


def aipp_flow_inputs(args: argparse.Namespace, given: Mapping[str, np.ndarray]
                     ) -> Tuple[Dict[str, np.ndarray], Dict[str, np.ndarray], dict, object, str]:
    """(the device's inputs, the golden's inputs, ATC options, input_shape, a note on which
    images the flow runs) for ``args``' model converted with ``args.aipp``."""
    from ..aipp.check import _image_list, _reference_tensor
    from ..aipp.config import read_aipp_config
    from ..aipp.user_files import load_reference
    from ..graph.onnx_graph import declared_shape, graph_inputs, load_model, make_inputs
    from ..graph.onnx_graph import parse_input_shape
    from .aipp_step import _images

    config = read_aipp_config(args.aipp)
    op = next((o for o in config.ops if o.rank == args.aipp_input), None)
    if op is None:
        from ..aipp.check import missing_block

        raise missing_block(config, args.aipp_input)
    inputs = graph_inputs(load_model(args.model, weights=False))
    if args.aipp_input >= len(inputs):
        raise ConfigError("--aipp-input", f"{args.model} has {len(inputs)} input(s); "
                                          f"rank {args.aipp_input} names none")
    name = inputs[args.aipp_input].name
    if name in given:
        raise ConfigError("--inputs", f"{name!r} is the input the AIPP file feeds: its raw images "
                                      f"come from --images (the golden's from --reference); "
                                      f"give --inputs for the model's other inputs only")
    images = _image_list(op, _images(args.images))
    batch = (declared_shape(inputs[args.aipp_input]) or (None,))[0]
    if batch is not None and len(images) < batch:
        raise ConfigError("--images", f"{args.model}'s input {name!r} takes a batch of {batch} "
                                      f"images; {args.images} holds {len(images)}")
    used = images[:batch] if batch is not None else images
    reference = load_reference(args.reference)
    golden = np.stack([_reference_tensor(reference, img, i) for i, img in enumerate(used)])
    shape = dict(parse_input_shape(args.input_shape, "--input-shape") or {})
    if name not in shape and None in declared_shape(inputs[args.aipp_input]):
        shape[name] = list(golden.shape)  # the open dims: the reference tensors'
    seeded = make_inputs(args.model, seed=args.seed, input_shape=shape or None)
    device = {**{k: v for k, v in seeded.items() if k != name}, **given, name: np.stack(used)}
    golden_inputs = {**device, name: golden}
    note = (f"the flow ran on {len(used)} of {len(images)} image(s) of {args.images} (the model's "
            f"batch)" if len(used) < len(images) else "")
    return device, golden_inputs, {"insert_op_conf": args.aipp}, shape or args.input_shape, note
