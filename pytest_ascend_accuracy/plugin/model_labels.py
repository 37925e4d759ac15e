"""Names of models as the plugin prints them: a model file's stem (``graph.onnx_graph.
model_label``, the graph's name for an in-memory model), or, where other files of one name
are checked too, the shortest end of each file's path that tells it from them: ``bert/model``
and ``gpt2/model``. Every ONNX node test is ``model.onnx`` in its own folder, and Hugging Face
optimum writes ``model.onnx`` in each model's folder: an audit's sweep of 299 checks read
``(1 model x 1 mode)`` with one grid row ``model  296/299 passed`` and ``[model, default]`` on
every FAILED line.

The summary and the run's report index name them over every record of the session
(``relabelled``): the xdist controller holds every worker's records, so a label does not depend
on which worker ran which test. A check's own texts (its failure block's advice, its report
page and compare.json's ``run.check``) are written while its test runs, when the session's
other models are not known: they tell apart the models its test converted so far
(``label_in_test``), the same way. Records keep the stem (``CheckRecord.model``, JUnit's
``accuracy_model``) with the file (``CheckRecord.model_file``); no cache key or stored golden
changes.
"""
from __future__ import annotations

import os
from dataclasses import replace
from pathlib import PurePath
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

#: (the model's label, the real path of its file, or None: an in-memory model, a dump)
Key = Tuple[str, Optional[str]]


def distinct_labels(keys: Iterable[Key]) -> Dict[Key, str]:
    """{key: label}: the label where no other file of ``keys`` has it; else the file's path
    without its suffix, cut to as few of its last folders as tell it from every other file of
    that label (``gpt2/model``; a file in no folder of its own: its whole path; two files of
    one folder, ``model.onnx`` and ``model.pb``: their whole paths, suffix kept). A key
    without a file (a check of dumps it did not run, whose file is not known) keeps the bare
    label and makes no file's label longer."""
    by_label: Dict[str, List[Optional[str]]] = {}
    for label, path in keys:
        files = by_label.setdefault(label, [])
        if path not in files:
            files.append(path)
    out: Dict[Key, str] = {}
    for label, files in by_label.items():
        folders = {f: PurePath(f).parent.parts for f in files if f is not None}
        for f in files:
            out[(label, f)] = label if f is None or len(folders) == 1 else _shortest(
                label, f, folders[f], [p for g, p in folders.items() if g != f])
    return out


def _shortest(label: str, path: str, folders: Tuple[str, ...],
              others: Sequence[Tuple[str, ...]]) -> str:
    for k in range(1, len(folders) + 1):
        if all(o[-k:] != folders[-k:] for o in others):
            return PurePath(*folders[-k:], label).as_posix()
    return PurePath(path).as_posix()  # one folder's model.onnx and model.pb: the whole path


def label_key(model) -> Key:
    """``model``'s key: its label and, for a file, the file's real path (as
    ``CheckRecord.model_file`` holds it)."""
    from ..graph.onnx_graph import model_label

    path = os.path.realpath(os.fspath(model)) if isinstance(model, (str, os.PathLike)) else None
    return model_label(model), path


def label_in_test(model, converted: Iterable) -> str:
    """``model``'s label among the models its test converted so far (``converted``)."""
    mine = label_key(model)
    return distinct_labels([mine, *(label_key(m) for m in converted)])[mine]


def relabelled(records: Sequence, dataset_records: Sequence[Mapping] = ()) -> Tuple[list, list]:
    """``records`` (``CheckRecord``) and ``dataset_records`` (dicts) with each ``model`` as
    ``distinct_labels`` names it among them all (the summary's grid rows, model count, FAILED
    lines and dataset lines)."""
    keys = [(r.model, r.model_file) for r in records]
    data_keys = [(str(r.get("model")), r.get("model_file")) for r in dataset_records]
    labels = distinct_labels(keys + data_keys)
    return ([replace(r, model=labels[k]) for r, k in zip(records, keys)],
            [{**r, "model": labels[k]} for r, k in zip(dataset_records, data_keys)])


__all__ = ["distinct_labels", "label_in_test", "label_key", "relabelled"]
