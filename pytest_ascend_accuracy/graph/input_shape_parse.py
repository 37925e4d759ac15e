"""``input_shape`` read: ``{name: shape}`` or ATC's ``"in1:1,3,224,224;in2:1,10"``.

A check converts the model at one static shape, the shape of the inputs it compares. ATC's
``--input_shape`` takes more: ``-1`` for a dimension and ranges ``n1~n2`` make it build a
dynamic-shape model (GE checks positive sizes, E10011, only for an input left static). Such a
value is refused here with that said, and a static shape to paste: the given sizes, the
model's declared size where it declares one, the low end of a range, else 1.
"""
from __future__ import annotations

from typing import Callable, Dict, Iterable, List, Mapping, Optional, Tuple

from ..errors import ConfigError
from .shape_advice import ATC_POSITIVE_DIMS, DynamicDimsGiven

#: what follows ``ATC_POSITIVE_DIMS`` where a size is 0 (also where an array's 0 is refused
#: before its conversion: ``per_shape.refuse_empty_taken``)
EMPTY_INPUT_ADVICE = ("so an empty input cannot be fed to a converted model; make it a constant "
                      "of the model (an initializer), or leave an optional input out of it")
#: a dimension ATC reads as dynamic: -1, or a range "n1~n2" (None: not one of these)
Mark = Optional[str]
#: names -> the model's declared sizes of those inputs (None where dynamic)
Declared = Callable[[Iterable[str]], Mapping[str, Tuple[Optional[int], ...]]]


def parse_input_shape_text(input_shape, where: str = "input_shape", *, empty_ok: bool = False,
                           declared: Optional[Declared] = None
                           ) -> Optional[Dict[str, Tuple[int, ...]]]:
    """``{name: shape}`` or ATC syntax -> {name: tuple of ints}. Dimensions are positive;
    ``empty_ok``: 0 allowed too (the shapes of given arrays, which onnxruntime runs). A ``-1``
    or a range raises ``DynamicDimsGiven``; ``declared(names)``, when given, lends the model's
    declared sizes ({name: (size or None, ...)}) to that error's example
    (``onnx_graph.parse_input_shape`` passes the model's)."""
    if input_shape is None:
        return None
    if isinstance(input_shape, str):
        items: List[Tuple[str, object]] = []
        for part in filter(None, (p.strip() for p in input_shape.split(";"))):
            name, sep, dims = part.rpartition(":")
            if not sep or not name:
                raise ConfigError(where, f"expected 'name:d1,d2,...', got {part!r}")
            items.append((name, dims.split(",") if dims else []))
    elif isinstance(input_shape, Mapping):
        items = [(str(k), v) for k, v in input_shape.items()]
    else:
        raise ConfigError(where, f"expected a mapping {{input name: shape}} or an ATC string, "
                                 f"got {type(input_shape).__name__}")
    marked = {name: _marks(name, dims, where) for name, dims in items}
    if any(m is not None for dims in marked.values() for _, m in dims):
        raise _dynamic_given(where, marked, declared)
    return {name: _dims(name, dims, where, empty_ok) for name, dims in items}


def _marks(name, dims, where) -> List[Tuple[str, Mark]]:
    """Each dimension as text, with ``"-1"`` or ``"a~b"`` where ATC reads it as dynamic."""
    try:
        parts = [str(d).strip() for d in dims]
    except TypeError:
        raise ConfigError(where, f"shape of input {name!r} must be a sequence of ints, "
                                 f"got {dims!r}") from None
    return [(p, p if p == "-1" or _range(p) else None) for p in parts]


def _range(text: str) -> Optional[Tuple[int, int]]:
    low, sep, high = text.partition("~")
    try:
        return (int(low), int(high)) if sep else None
    except ValueError:
        return None


def _dims(name, dims, where, empty_ok: bool = False) -> Tuple[int, ...]:
    try:
        values = tuple(int(d) for d in dims)
    except (TypeError, ValueError):
        raise ConfigError(where, f"shape of input {name!r} must be a sequence of ints, "
                                 f"got {dims!r}") from None
    if any(d < 0 or (d == 0 and not empty_ok) for d in values):
        raise ConfigError(where, f"shape of input {name!r} must be positive ints, got "
                                 f"{list(values)}: {ATC_POSITIVE_DIMS}"
                                 + (f", {EMPTY_INPUT_ADVICE}" if 0 in values else ""))
    return values


def _dynamic_given(where: str, marked: Mapping[str, List[Tuple[str, Mark]]],
                   declared_of: Optional[Declared]) -> DynamicDimsGiven:
    declared = declared_of(list(marked)) if declared_of is not None else {}
    example: Dict[str, Tuple[int, ...]] = {}
    said: List[str] = []
    chosen: List[str] = []
    n_dims = 0
    for name, dims in marked.items():
        own = declared.get(name, ())
        sizes = []
        for k, (text, mark) in enumerate(dims):
            if mark is None:
                sizes.append(_size(text))
                continue
            n_dims += 1
            if k < len(own) and own[k]:
                size, how = own[k], "the model's declared size"
            elif mark != "-1":
                size, how = max(1, _range(mark)[0]), "the low end of each range"
            else:
                size, how = 1, "1 for each -1"
            sizes.append(size)
            if how not in chosen:
                chosen.append(how)
        if any(mark is not None for _, mark in dims):
            said.append(f"{name!r} given [{', '.join(text for text, _ in dims)}]")
        example[name] = tuple(sizes)
    what = ("input " if len(said) == 1 else "inputs ") + "; ".join(said)
    return DynamicDimsGiven(where, what, example, ", ".join(chosen), n_dims=n_dims)


def _size(text) -> int:
    try:
        return max(1, int(text))
    except (TypeError, ValueError):
        return 1
