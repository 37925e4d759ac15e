"""Names of models as the plugin prints them: a model file's stem (``graph.onnx_graph.
model_label``, the graph's name for an in-memory model), or, where other files of one name
are checked too, the shortest end of each file's path that tells it from them: ``bert/model``
and ``gpt2/model``. Every ONNX node test is ``model.onnx`` in its own folder, and Hugging Face
optimum writes ``model.onnx`` in each model's folder: an audit's sweep of 299 checks read
``(1 model x 1 mode)`` with one grid row ``model  296/299 passed`` and ``[model, default]`` on
every FAILED line.

A file is one model however it is reached (its real path, ``CheckRecord.model_file``: two
spellings of one file, or a link to it, are one row), but its label is made of the path its
test gave (``CheckRecord.model_as_given``: absolute, ``..`` resolved, links not followed; the
first one met where one file is reached by several), as printed from where pytest ran
(``Settings.show``): a link's target names a folder the test never named (``links/bert/
model.onnx`` into ``store/s1`` read ``s1/model``; Hugging Face's hub cache,
``snapshots/<rev>/model.onnx`` linking ``../../blobs/<sha>``, read ``models--org--gpt2/blobs/
model``, a path that does not exist).

The summary and the run's report index name them over every record of the session
(``relabelled``), met in test-id order: the xdist controller holds every worker's records, so
a label does not depend on which worker ran which test. A check's own texts (its failure
block's advice, its report page and compare.json's ``run.check``) are written while its test
runs, when the session's other models are not known: they tell apart the models its test
converted so far (``label_in_test``), the same way. Records keep the stem
(``CheckRecord.model``, JUnit's ``accuracy_model``) with the file; no cache key or stored
golden changes.
"""
from __future__ import annotations

import os
from dataclasses import replace
from pathlib import PurePath
from typing import Dict, Iterable, Mapping, Optional, Sequence, Tuple

#: (the model's label, the real path of its file, or None: an in-memory model, a dump)
Key = Tuple[str, Optional[str]]
#: a ``Key`` and the file's path as its test gave it, made absolute (None: as ``Key``'s)
Named = Tuple[str, Optional[str], Optional[str]]


def distinct_labels(named: Iterable[Named], base=None) -> Dict[Key, str]:
    """{key: label}: the label where no other file of ``named`` has it; else the file's path
    (as its test gave it, the first one met, as ``shown`` from ``base``: where pytest ran)
    without its suffix, cut to as few of its last folders as tell it from every other file of
    that label (``gpt2/model``; a file in no folder of its own: its whole path, ``model.onnx``;
    two files of one folder, ``model.onnx`` and ``model.pb``: their paths, suffix kept). A key
    without a file (a check of dumps it did not run, whose file is not known) keeps the bare
    label and makes no file's label longer."""
    from ..core.locations import shown

    by_label: Dict[str, Dict[Optional[str], str]] = {}
    for label, real, given in named:
        files = by_label.setdefault(label, {})
        if real not in files:
            files[real] = shown(given or real, base) if real is not None else ""
    out: Dict[Key, str] = {}
    for label, files in by_label.items():
        folders = {f: PurePath(p).parent.parts for f, p in files.items() if f is not None}
        for f, path in files.items():
            out[(label, f)] = label if f is None or len(folders) == 1 else _shortest(
                label, path, folders[f], [p for g, p in folders.items() if g != f])
    return out


def _shortest(label: str, path: str, folders: Tuple[str, ...],
              others: Sequence[Tuple[str, ...]]) -> str:
    for k in range(1, len(folders) + 1):
        if all(o[-k:] != folders[-k:] for o in others):
            return PurePath(*folders[-k:], label).as_posix()
    return PurePath(path).as_posix()  # model.onnx beside sub/model.onnx; model.onnx, model.pb


def named_key(model) -> Named:
    """``model``'s label and, for a file, its real path (``CheckRecord.model_file``) and its
    path as given, made absolute (``CheckRecord.model_as_given``)."""
    from ..graph.onnx_graph import model_label

    if not isinstance(model, (str, os.PathLike)):
        return model_label(model), None, None
    path = os.fspath(model)
    return model_label(model), os.path.realpath(path), os.path.abspath(path)


def label_in_test(model, converted: Iterable, base=None) -> str:
    """``model``'s label among the models its test converted so far (``converted``, met in
    that order), its paths shown from ``base`` (where pytest ran)."""
    mine = named_key(model)
    return distinct_labels([*(named_key(m) for m in converted), mine], base)[mine[:2]]


def relabelled(records: Sequence, dataset_records: Sequence[Mapping] = (),
               base=None) -> Tuple[list, list]:
    """``records`` (``CheckRecord``) and ``dataset_records`` (dicts) with each ``model`` as
    ``distinct_labels`` names it among them all, met in test-id order (the summary's grid
    rows, model count, FAILED lines and dataset lines); ``base``: where pytest ran."""
    named = [(r.model, r.model_file, r.model_as_given, r.nodeid) for r in records]
    named += [(str(r.get("model")), r.get("model_file"), r.get("model_as_given"),
               str(r.get("nodeid"))) for r in dataset_records]
    labels = distinct_labels([n[:3] for n in sorted(named, key=lambda n: n[3])], base)
    keys = [n[:2] for n in named]
    return ([replace(r, model=labels[k]) for r, k in zip(records, keys)],
            [{**r, "model": labels[k]} for r, k in zip(dataset_records, keys[len(records):])])


__all__ = ["distinct_labels", "label_in_test", "named_key", "relabelled"]
