"""Equality of result values where NaN counts as equal to NaN, for the tests.

A dataclass's ``==`` compared its fields as two tuples up to Python 3.12, and a tuple compares
an element with itself by identity first, so two values holding the same NaN object (the
metrics' ``NAN`` default, ``math.nan``) were equal. From 3.13 it compares field by field with
``==`` (cpython #120645) and ``nan != nan``: the same metrics are unequal there. ``differences``
compares dataclasses, tuples, lists and dicts element by element, NaN equal to NaN, everything
else with ``==`` (a NaN against a number, a missing field, another type are differences).
"""
import dataclasses
import math


def differences(a, b, path="value"):
    """Where ``a`` and ``b`` differ, as ``"path: a != b"`` lines (empty: equal)."""
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        if type(a) is not type(b):
            return [f"{path}: {type(a).__name__} != {type(b).__name__}"]
        return [d for f in dataclasses.fields(a) if f.compare
                for d in differences(getattr(a, f.name), getattr(b, f.name), f"{path}.{f.name}")]
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)) and type(a) is type(b):
        if len(a) != len(b):
            return [f"{path}: {len(a)} items != {len(b)}"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, f"{path}[{i}]")]
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return [f"{path}: keys {sorted(map(str, a))} != {sorted(map(str, b))}"]
        return [d for k in a for d in differences(a[k], b[k], f"{path}[{k!r}]")]
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return []
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]
