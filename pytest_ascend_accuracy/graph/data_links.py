"""Where a model file's external data is read from when the file is reached through a symbolic
link (the Hugging Face hub cache: ``snapshots/<rev>/model.onnx -> ../../blobs/<sha>``, its data
file a link into ``blobs`` too), as onnxruntime reads it from the path (T2: the golden run of
such a model failed "External data path escapes model directory" where onnxruntime loads it).
Used by ``external.load_model_refs`` (weights left in their files) and ``onnx_graph.load_model``
(weights loaded); it imports neither.
"""
from __future__ import annotations

import os
import shlex

from ..errors import ConfigError


def _location(tensor) -> str:
    return next((e.value for e in tensor.external_data if e.key == "location"), "")


def data_folder(proto, path) -> str:
    """The folder ``proto``'s external data (the model file ``path``'s) is read from, as
    onnxruntime reads it from ``path``: each ``location`` joined to the folder of ``path`` as
    given (a link's folder, as onnx and onnxruntime join it), the file that resolves to inside
    that folder or inside the folder of the file the link points to (onnxruntime's check of a
    model path, which the hub cache's data link into ``blobs`` passes). Where no link is in the
    way: the folder of ``path``, the locations as they are. Where one is, each reference is
    rewritten to the file the link resolves to, relative to the folder returned: onnxruntime
    given the model as bytes checks every file against that one folder (the link's folder: the
    target "escapes model directory"), and onnx refuses a data file that is a link. A file
    outside both folders, which onnxruntime refuses, is a ``ConfigError`` with the fix."""
    from onnx.external_data_helper import _get_all_tensors

    path = os.fspath(path)
    base = os.path.dirname(os.path.abspath(path))
    real_base = os.path.realpath(base)
    refs = [(t, _location(t)) for t in _get_all_tensors(proto) if t.data_location == 1]
    resolved = [os.path.realpath(os.path.join(base, location)) for _, location in refs]
    if all(real == os.path.join(real_base, os.path.normpath(location))
           for (_, location), real in zip(refs, resolved)):
        return base
    real_dir = os.path.dirname(os.path.realpath(path))
    for (t, location), real in zip(refs, resolved):
        if not any(os.path.commonpath([real, d]) == d for d in (real_base, real_dir)):
            where = real_base if real_dir == real_base else \
                f"{real_base} and {real_dir} (where the model's link points)"
            given = os.path.join(base, location)
            fix = (f"put a copy in place of the link: cp --remove-destination {shlex.quote(real)} "
                   f"{shlex.quote(given)}") if os.path.islink(given) else \
                "put the data file itself (not a link to its folder) next to the model"
            raise ConfigError(path, f"external data file {location!r} of initializer {t.name!r} "
                                    f"resolves to {real}, outside {where}: onnxruntime refuses it "
                                    f"(External data path escapes model directory); {fix}")
    folder = os.path.commonpath([os.path.dirname(real) for real in resolved])
    for (t, _), real in zip(refs, resolved):
        for entry in t.external_data:
            if entry.key == "location":
                entry.value = os.path.relpath(real, folder)
    return folder


def load_weights(proto, path) -> None:
    """Read the external data of ``proto`` (loaded from the model file ``path`` without it)
    into it, from where onnxruntime reads it (``data_folder``), as ``onnx.load`` does."""
    from onnx.external_data_helper import load_external_data_for_model

    folder = data_folder(proto, path)
    try:
        load_external_data_for_model(proto, folder)
    except Exception as exc:
        raise ConfigError(path, f"cannot read its external data "
                                f"({type(exc).__name__}: {exc})") from exc
