"""The closest real names to a path a user gave that is not there: ``" (closest:
models/overflow.onnx)"``, spelled as the user spelled the path. A misspelled model, labels
file, samples folder, cache folder or dump is an error with the nearest entries of its folder,
never only "not found"."""
from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Iterable, Optional


def closest_in_folder(path, directory: Optional[bool], shown: Optional[str] = None,
                      suffixes: Optional[Iterable[str]] = (".json", ".npy")) -> str:
    """``" (closest: data/close, data/clf10)"``: the entries of ``path``'s folder nearest its
    misspelled name -- folders for a ``directory``, files for ``directory=False`` (of one of
    ``suffixes``, any where None), either for None -- spelled as the path was (``shown`` for
    ``path``, when the error prints it another way); ``""`` when none is near."""
    path = Path(path)
    folder = path.parent
    if not folder.is_dir():
        return ""
    wanted = None if suffixes is None else tuple(suffixes)
    names = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return ""
    for entry in entries:
        is_dir = entry.is_dir()
        if directory is True and not is_dir or directory is False and not entry.is_file():
            continue
        if not is_dir and wanted is not None and not entry.name.endswith(wanted):
            continue
        names.append(entry.name)
    suffix = next((x for x in wanted or () if path.name.endswith(x)), "")
    if suffix:  # the suffix all candidates share is no likeness: "nope.onnx" is no "overflow.onnx"
        stems = {n[:-len(suffix)] if n.endswith(suffix) else n: n for n in names}
        near = difflib.get_close_matches(path.name[:-len(suffix)], sorted(stems), n=3, cutoff=0.6)
        close = [stems[c] for c in near]
    else:
        close = difflib.get_close_matches(path.name, sorted(names), n=3, cutoff=0.6)
    if not close:
        return ""
    given = shown if shown is not None else os.fspath(path)
    prefix = os.path.dirname(given.rstrip("/" + os.sep) or given)  # ("dumps/rn1/": in dumps)
    return f" (closest: {', '.join(os.path.join(prefix, c) for c in close)})"
