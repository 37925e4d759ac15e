"""Dataset samples and their labels, streamed one sample at a time.

``samples`` is either a sequence (or any iterable) of input dicts ``{input name: array}`` whose
ids are their indexes (``"0"``, ``"1"``, ...), or a directory of ``.npz`` files, one sample per
file, arrays keyed by input name, whose ids are the file stems in sorted order. Files are
opened one at a time, so memory does not grow with the number of samples.

``labels`` is a sequence in sample order or a ``{sample id: label}`` mapping (the natural form
for an ``.npz`` directory; integer keys are read as their string). A sample holding a batch of
``B > 1`` rows takes a sequence of ``B`` labels, one per row. ``read_labels(path)`` reads them
from a ``.json`` or ``.npy`` file, and errors about them then name that file.
"""
from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Mapping, Optional

import numpy as np

from ..core.closest_paths import closest_in_folder
from ..dump.user_arrays import read_npz
from ..errors import ConfigError


@dataclass(frozen=True)
class Sample:
    """One sample: its id, its position in sample order and its inputs."""

    id: str
    index: int
    inputs: Dict[str, np.ndarray]


class SampleSource:
    """Samples from a sequence of input dicts or a directory of ``.npz`` files (see module doc)."""

    def __init__(self, samples, where: str = "samples"):
        self.where = where
        self.directory: Optional[Path] = None
        self._files: List[Path] = []
        self._items: Optional[Iterable] = None
        if isinstance(samples, (str, os.PathLike)):
            self.directory = Path(samples)
            if not self.directory.is_dir():
                what = "is a file, not a directory of .npz samples" if self.directory.exists() \
                    else "not found"
                near = "" if self.directory.exists() else closest_in_folder(self.directory, True)
                raise ConfigError(where, f"sample directory {os.fspath(samples)!r} {what}{near}")
            self._files = sorted(p for p in self.directory.iterdir()
                                 if p.suffix == ".npz" and p.is_file())
            if not self._files:
                raise ConfigError(where, f"no .npz files in {self.shown} (one sample per "
                                         f"file, arrays keyed by input name)")
        elif isinstance(samples, Mapping):
            raise ConfigError(where, "expected a sequence of input dicts or a directory of .npz "
                                     "files, got one dict (wrap a single sample in a list)")
        else:
            try:
                iter(samples)
            except TypeError:
                raise ConfigError(where, f"expected a sequence of input dicts or a directory of "
                                         f".npz files, got {type(samples).__name__}") from None
            self._items = samples

    @property
    def shown(self) -> str:
        """The sample directory as printed: relative to where the process runs (pytest's
        invocation directory), normalised (``core.locations.shown``)."""
        from ..core.locations import shown

        return shown(self.directory, os.getcwd()) if self.directory is not None else "samples"

    def __len__(self) -> int:
        if self.directory is not None:
            return len(self._files)
        return len(self._items)  # TypeError for generators, as len() does

    def count(self) -> Optional[int]:
        """The number of samples when it is known before streaming them, else None."""
        try:
            return len(self)
        except TypeError:
            return None

    def ids(self) -> Optional[List[str]]:
        """The sample ids when known up front (a directory, or a sized sequence)."""
        if self.directory is not None:
            return [p.stem for p in self._files]
        n = self.count()
        return None if n is None else [str(i) for i in range(n)]

    def __iter__(self) -> Iterator[Sample]:
        if self.directory is not None:
            for index, path in enumerate(self._files):
                yield Sample(path.stem, index, read_npz(path, what="a readable .npz sample"))
            return
        for index, item in enumerate(self._items):
            if not isinstance(item, Mapping):
                raise ConfigError(f"{self.where}[{index}]", "expected a dict {input name: "
                                  f"array}}, got {type(item).__name__}")
            yield Sample(str(index), index, {str(k): np.asarray(v) for k, v in item.items()})

    def describe(self) -> str:
        if self.directory is not None:
            return f"{self.shown} ({len(self._files)} .npz files)"
        n = self.count()
        return f"{n} samples" if n is not None else "samples"


#: top-level keys of a COCO instances file (``instances_val2017.json``)
COCO_INSTANCES_KEYS = frozenset({"info", "licenses", "images", "annotations", "categories"})


class Labels:
    """Labels looked up by sample id and position; reports the labels no sample used.
    ``where`` (the labels file, when read from one) starts every error about them."""

    def __init__(self, labels, where: str = "labels"):
        self.where = where
        self.data = labels
        self._seq = None
        self._map: Optional[Dict[str, object]] = None
        self._used = set()
        if labels is None:
            return
        if isinstance(labels, Mapping):
            _refuse_coco_instances(labels, where)
            self._map = {str(k): v for k, v in labels.items()}
        elif isinstance(labels, (str, bytes, os.PathLike)):
            raise ConfigError(where, "expected a sequence in sample order or a {sample id: label} "
                                     f"mapping, got {type(labels).__name__}")
        else:
            try:
                len(labels)
            except TypeError:
                raise ConfigError(where, "expected a sequence in sample order or a {sample id: "
                                         f"label}} mapping, got {type(labels).__name__}") from None
            self._seq = labels

    def fresh(self) -> "Labels":
        """The same labels with no sample seen yet (one ``Labels`` may serve several checks)."""
        return Labels(self.data, self.where)

    @property
    def given(self) -> bool:
        return self._seq is not None or self._map is not None

    def check_pairing(self, source: "SampleSource") -> None:
        """Labels given in sample order pair by position; a directory's samples are in file-name
        order, which for names numbered without zero-padding (``img10`` before ``img2``) is not
        the order their numbers suggest: refused then, naming a pair, instead of pairing
        labels with other samples silently (a user's Top-1 read 0.25 for 1.0)."""
        if self._seq is None or source.directory is None:
            return
        ids = source.ids() or []
        out_of_order = _numbered_out_of_order(ids)
        if out_of_order is not None:
            here, there = out_of_order
            raise ConfigError(self.where, (
                f"labels in sample order pair with the samples of {source.shown} by "
                f"position, in file-name order, where {here!r} comes before {there!r} (the "
                "numbers in the names are not zero-padded): give the labels as a {sample "
                f"id: label}} mapping (JSON {{\"{there}\": ...}}), or zero-pad the file "
                "names"))

    def for_sample(self, sample: Sample, rows: int) -> List[object]:
        """The label of each of the sample's ``rows`` rows."""
        if self._map is not None:
            if sample.id not in self._map:
                raise ConfigError(self.where, f"no label for sample {sample.id!r}"
                                              f"{_closest(sample.id, self._map, 'label keys')}")
            value = self._map[sample.id]
            self._used.add(sample.id)
        else:
            if sample.index >= len(self._seq):
                raise ConfigError(self.where, f"{len(self._seq)} labels for more samples "
                                              f"(no label for sample {sample.id!r})")
            value = self._seq[sample.index]
            self._used.add(sample.index)
        return _per_row(value, rows, f"{self.where} of sample {sample.id!r}")

    def raw(self, sample: Sample):
        """The label as given (detection labels are lists of boxes, not per-row values)."""
        if self._map is not None:
            if sample.id not in self._map:
                raise ConfigError(self.where, f"no label for sample {sample.id!r}"
                                              f"{_closest(sample.id, self._map, 'label keys')}")
            self._used.add(sample.id)
            return self._map[sample.id]
        if sample.index >= len(self._seq):
            raise ConfigError(self.where, f"{len(self._seq)} labels for more samples (no label "
                                          f"for sample {sample.id!r})")
        self._used.add(sample.index)
        return self._seq[sample.index]

    def check_all_used(self, ids: List[str]) -> None:
        """Labels naming samples that do not exist are a mistake (a typo, a stale file)."""
        if self._map is not None:
            unused = [k for k in self._map if k not in self._used]
            if unused:
                known = ids or [str(u) for u in self._used]
                raise ConfigError(self.where, f"label for sample {unused[0]!r} but no such sample"
                                              f"{_closest(unused[0], known)}")
        elif self._seq is not None and len(self._seq) > len(self._used):
            raise ConfigError(self.where, f"{len(self._seq)} labels for {len(self._used)} samples")


def read_labels(path, shown: Optional[str] = None) -> Labels:
    """Labels from a ``.json`` file (``{sample id: label}`` or a list in sample order) or a
    ``.npy`` array in sample order; errors about them name the file (as ``shown``, default
    as given)."""
    import json

    p = Path(path)
    where = shown or os.fspath(path)
    if not p.is_file():
        raise ConfigError(where, f"labels file not found{closest_in_folder(p, False, shown)}")
    if p.suffix == ".npy":
        from ..dump.user_arrays import read_npy

        return Labels(read_npy(p, "a readable labels array"), where)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:  # RecursionError: runaway nesting
        raise ConfigError(where, f"cannot read labels as JSON: {exc}") from exc
    if not isinstance(data, (dict, list)):
        raise ConfigError(where, "labels JSON must be {sample id: label} or a list")
    return Labels(data, where)


def _refuse_coco_instances(labels: Mapping, where: str) -> None:
    """A COCO instances file (images/annotations/categories) holds every image's boxes keyed by
    image id, not one label per sample: read as ``{sample id: label}`` it would name no
    sample, and the error would say only that ``'images'`` is the closest sample id."""
    keys = {str(k) for k in labels}
    if "annotations" in keys and "images" in keys and keys <= COCO_INSTANCES_KEYS:
        raise ConfigError(where, (
            "this is a COCO instances file (top-level images/annotations/categories), not "
            "labels per sample: labels are {sample id: label} or a list in sample order; for "
            "metric map each label is that sample's ground-truth boxes, {\"<sample id>\": "
            "[{\"bbox\": [x, y, w, h], \"category_id\": c}, ...]} (the annotations of the "
            "image the sample was made from)"))


def _per_row(value, rows: int, where: str) -> List[object]:
    if rows == 1:
        if np.ndim(value) == 1 and len(value) == 1:
            return [value[0]]
        return [value]
    if np.ndim(value) != 1 or len(value) != rows:
        raise ConfigError(where, f"the sample holds a batch of {rows} rows: give {rows} labels, "
                                 f"one per row")
    return list(value)


def _closest(name: str, names, what: str = "sample ids") -> str:
    """``"; closest label keys: S00"``, or where none is near, the first few of ``names`` (keys
    ``0, 1, 2`` for samples ``img0, ...``: nothing is near, and the error must still show what
    is there)."""
    names = [str(n) for n in names]
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
    if close:
        return f"; closest {what}: {', '.join(close)}"
    if not names:
        return f"; there are no {what}"
    more = f", ... ({len(names)} in all)" if len(names) > 3 else ""
    return f"; none is near: {what} are {', '.join(names[:3])}{more}"


def _numbered_out_of_order(ids: List[str]):
    """``(a, b)``, the first neighbours of ``ids`` (file-name order) whose numbers run backwards,
    when every id is one stem numbered without zero-padding (``img10`` before ``img2``); None
    otherwise -- ids that are not all ``<stem><number><suffix>`` of one stem (words, hashes,
    UUIDs) have no order but the file names'."""
    import re

    parts = [re.fullmatch(r"(\D*)(\d+)(\D*)", i) for i in ids]
    if len(ids) < 2 or not all(parts) or len({(m.group(1), m.group(3)) for m in parts}) != 1:
        return None
    numbers = [int(m.group(2)) for m in parts]
    for k in range(len(ids) - 1):
        if numbers[k] > numbers[k + 1]:
            return ids[k], ids[k + 1]
    return None
