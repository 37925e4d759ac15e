"""What to say when a model input has dynamic dimensions and nothing gives their sizes.

ATC converts one static shape (``--input_shape``), so a dynamic dimension needs a size. Where
the test's inputs are known (``ascend_model(m).run(inputs)``, a YAML entry's ``.npy`` files)
the sizes come from them (``shape_from_inputs``); this module covers the case where nothing
tells them (seeded inputs without a shape, ``atc_convert``, the CLI without ``--input-shape``).

The advice is a complete value that runs when pasted: every static dimension as the model
declares it and every dynamic one given a size -- the size another input was given for the
same named dimension (``'S'`` of ``ids`` and ``mask``), else 1 -- with the plain word that the
user chooses them. It is spelled three ways: the Python keyword ``input_shape={...}``, the
YAML key ``input_shape: {...}`` and the CLI's ``--input-shape 'x:1,3,1,1'`` (ATC syntax).
"""
from __future__ import annotations

from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from ..errors import ConfigError

#: ATC's refusal of a 0 (or negative) size of an input it converts static (CANN error E10011)
ATC_POSITIVE_DIMS = "ATC refuses a size below 1 for an input it converts static (E10011)"

#: why a check wants sizes where ATC would take -1 or a range (a dynamic-shape model)
ONE_STATIC_SHAPE = "a check converts one static shape, the shape of the inputs it compares"

#: {input name: [(dimension size or None, dim_param or "")...]} of the inputs left dynamic
Declared = Mapping[str, Sequence[Tuple[Optional[int], str]]]


class DynamicShapeError(ConfigError):
    """Inputs left dynamic: ``what`` says which dimensions, ``example`` is a static shape for
    each of them that the user may paste (``python_text``, ``yaml_text``, ``cli_text``)."""

    def __init__(self, where: str, what: str, example: Mapping[str, Tuple[int, ...]],
                 chosen: str, unranked: Sequence[str] = (), n_dims: int = 2):
        self.what, self.example, self.chosen = what, dict(example), chosen
        self.n_dims = n_dims  # how many dimensions want a size (its/their)
        self.unranked = tuple(unranked)
        super().__init__(where, self._text(python_form(self.example)),
                         cli_text=f"--input-shape: {self._text(cli_form(self.example))}")

    def _text(self, pasted: str) -> str:
        their, them = ("its size", "it") if self.n_dims == 1 else ("their sizes", "them")
        rank = ""
        if self.unranked:
            rank = (f"; {', '.join(repr(n) for n in self.unranked)} declare"
                    f"{'s' if len(self.unranked) == 1 else ''} no rank: give as many dimensions "
                    "as the model reads there (the example's (1,) is 1-D)")
        return (f"{self.what}; nothing gives {their}: choose {them} (the sizes of the data you "
                f"test with; {ONE_STATIC_SHAPE}, each size 1 or more (E10011)), e.g. with "
                f"{self.chosen}: {pasted}{rank}")

    def yaml_text(self) -> str:
        """The advice for a YAML suite entry: its ``input_shape:`` key."""
        return self._text(f"add to the entry: {yaml_form(self.example)}")


class DynamicDimsGiven(DynamicShapeError):
    """``input_shape`` gave ``-1`` or a range ``n1~n2``: a dynamic-shape build in ATC's reading
    (GE checks positive sizes only for an input left static); a check wants one static shape."""

    def __init__(self, where: str, what: str, example: Mapping[str, Tuple[int, ...]],
                 chosen: str, n_dims: int):
        super().__init__(where, what, example, chosen, (), n_dims)

    def _text(self, pasted: str) -> str:
        return (f"{self.what}: -1 and ranges (n1~n2) make ATC build a dynamic-shape model, and "
                f"{ONE_STATIC_SHAPE}: give each dimension its size (of the data you test with), "
                f"e.g. with {self.chosen}: {pasted}")


def python_form(example: Mapping[str, Sequence[int]]) -> str:
    return "input_shape={" + ", ".join(f"{n!r}: {_tuple(d)}" for n, d in example.items()) + "}"


def yaml_form(example: Mapping[str, Sequence[int]]) -> str:
    items = (f"{_yaml_key(n)}: [{', '.join(map(str, d))}]" for n, d in example.items())
    return "input_shape: {" + ", ".join(items) + "}"


def cli_form(example: Mapping[str, Sequence[int]]) -> str:
    items = (f"{n}:" + ",".join(map(str, d)) for n, d in example.items())
    return "--input-shape '" + ";".join(items) + "'"


def _tuple(dims: Sequence[int]) -> str:
    return "(" + ", ".join(map(str, dims)) + ("," if len(dims) == 1 else "") + ")"


def _yaml_key(name: str) -> str:
    import json
    import re

    return name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", name) else json.dumps(name)


def dynamic_shape_error(where: str, what: str, dynamic: Declared,
                        given: Mapping[str, Tuple[Tuple[int, str], ...]],
                        order: Sequence[str] = ()) -> DynamicShapeError:
    """The error for the inputs of ``dynamic`` (each dimension as ``(size or None, dim_param)``;
    an input with no declared shape has no dimensions); ``given``: the dimensions of the inputs
    ``input_shape`` gave (``(size, dim_param)``): the example keeps them, so that it replaces
    the call's ``input_shape`` whole, and reuses their named sizes. ``order``: the model's
    input names, the example's order."""
    # a dim_value of 0 or less (an export's -1) is dynamic as an unset one is (declared_shape)
    dynamic = {n: tuple((s if s is not None and int(s) > 0 else None, p) for s, p in dims)
               for n, dims in dynamic.items()}
    sizes: Dict[str, int] = {}
    for dims in given.values():
        for size, param in dims:
            if param and param != "?" and size:
                sizes.setdefault(param, int(size))
    example: Dict[str, Tuple[int, ...]] = {
        n: tuple(int(s) for s, _ in given[n]) for n in order if n in given}
    reused: List[str] = []
    unranked: List[str] = []
    for name, dims in dynamic.items():
        if not dims:
            unranked.append(name)
            example[name] = (1,)
            continue
        shape = []
        for size, param in dims:
            if size is None and param in sizes:
                shape.append(sizes[param])
                said = f"{param!r} = {sizes[param]} as given"
                if said not in reused:
                    reused.append(said)
            else:
                shape.append(1 if size is None else int(size))
        example[name] = tuple(shape)
    if order:
        example = {n: example[n] for n in order if n in example}
    chosen = "1 for each dynamic dimension" if not reused else (
        ", ".join(reused) + " and 1 for each other dynamic dimension")
    n_dims = sum(1 for dims in dynamic.values() for size, _ in dims if size is None)
    return DynamicShapeError(where, what, example, chosen, unranked, n_dims + len(unranked))
