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

Where the caller passes the model on (``source``), the example is run in onnxruntime on seeded
inputs when the text is first made (``shape_trial``): 1 fails in real models (silero_vad's
reflect Pad, nudenet's Concat of two branches), and then the first of a few common sizes that
runs is offered instead, said as such, or, where none runs, no value at all: the dimensions to
fill are shown as ``?``. Without the model (``atc_convert``'s check) the text is as before.
"""
from __future__ import annotations

from functools import partial
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from ..core.yaml_text import yaml_scalar
from ..errors import ConfigError
from .shape_trial import Run, Slot, Trial, first_that_runs, slots_of

#: ATC's refusal of a 0 (or negative) size of an input it converts static (CANN error E10011)
ATC_POSITIVE_DIMS = "ATC refuses a size below 1 for an input it converts static (E10011)"

#: why a check wants sizes where ATC would take -1 or a range (a dynamic-shape model)
ONE_STATIC_SHAPE = "a check converts one static shape, the shape of the inputs it compares"

#: {input name: [(dimension size or None, dim_param or "")...]} of the inputs left dynamic
Declared = Mapping[str, Sequence[Tuple[Optional[int], str]]]


class DynamicShapeError(ConfigError):
    """Inputs left dynamic: ``what`` says which dimensions, ``example`` is a static shape for
    each of them (1 for each dynamic dimension nothing sizes), ``chosen`` says how it was made.
    ``trial``: a call giving the ``shape_trial.Trial`` of ``example`` (None: not judged), made
    once when the text is first wanted (``problem``, ``cli_text``, ``yaml_text``, ``str``):
    a caller that catches the error and goes on runs nothing. ``pasted`` is the shape the text
    offers (None where none runs); ``reused`` the named sizes ``chosen`` says were given and
    ``slots`` the dimensions the example sizes itself (``shape_trial.Slot``)."""

    def __init__(self, where: str, what: str, example: Mapping[str, Tuple[int, ...]],
                 chosen: str, unranked: Sequence[str] = (), n_dims: int = 2, *,
                 trial: Optional[Callable[[], Optional[Trial]]] = None,
                 reused: Sequence[str] = (), slots: Sequence[Slot] = ()):
        self.what, self.example, self.chosen = what, dict(example), chosen
        self.n_dims = n_dims  # how many dimensions want a size (its/their)
        self.unranked = tuple(unranked)
        self.reused, self.slots = tuple(reused), tuple(slots)
        self._trial_call, self._trial = trial, None
        self.where = where
        self._args: Optional[tuple] = None  # the message as a caller rewrote it (``args``)

    # -- the text, made once it is wanted ------------------------------------------------
    @property
    def problem(self) -> str:
        return self._advice(python_form)

    @property
    def cli_text(self) -> str:
        return f"--input-shape: {self._advice(cli_form)}"

    def yaml_text(self) -> str:
        """The advice for a YAML suite entry: its ``input_shape:`` key."""
        return self._advice(lambda example: f"add to the entry: {yaml_form(example)}")

    @property
    def args(self) -> tuple:
        if self._args is not None:
            return self._args
        return (f"{self.where}: {self.problem}" if self.where else self.problem,)

    @args.setter
    def args(self, value) -> None:  # (a message amended by a caller, as any error's)
        self._args = tuple(value)

    def __str__(self) -> str:
        args = self.args
        return str(args[0]) if len(args) == 1 else str(args)

    @property
    def pasted(self) -> Optional[Dict[str, Tuple[int, ...]]]:
        """The shape the text offers: ``example``, or the sizes that ran where 1 did not;
        None where none of them runs."""
        trial = self._tried()
        if trial is None or trial.size == 1:
            return dict(self.example)
        return None if trial.example is None else dict(trial.example)

    def _tried(self) -> Optional[Trial]:
        if self._trial_call is not None:
            call, self._trial_call = self._trial_call, None
            try:
                self._trial = call()
            except Exception:  # noqa: BLE001 - the advice is shown unchecked, never lost
                self._trial = None
        return self._trial

    def _advice(self, form: Callable[[Mapping[str, Sequence]], str]) -> str:
        trial = self._tried()
        if trial is None or trial.size == 1:
            return self._text(form(self.example))
        if trial.example is None:
            return self._none_ran(form, trial)
        parts = list(self.reused)
        if trial.lone:
            parts.append(f"{trial.size} for each dynamic dimension of {trial.lone!r} but its "
                         f"batch, 1 for each other one")
        else:
            if trial.batch_1:
                parts.append("1 for the batch (each dynamic dimension 0)")
            parts.append(f"{trial.size} for each {'other ' if parts else ''}dynamic dimension")
        chosen = (", ".join(parts[:-1]) + " and " if len(parts) > 1 else "") + parts[-1]
        chosen += (f", sizes that ran in onnxruntime on seeded inputs where 1 failed "
                   f"({trial.failed})")
        return self._text(form(trial.example), chosen)

    def _none_ran(self, form, trial: Trial) -> str:
        template = {n: list(d) for n, d in self.example.items()}
        for name, k, _ in self.slots:
            template[name][k] = "?"
        sizes = ", ".join(map(str, trial.tried))
        batch = " (and with 1 for the batch)" if any(b for _, _, b in self.slots) else ""
        one_at_a_time = (" or for those of one input at a time"
                         if len({name for name, _, _ in self.slots}) > 1 else "")
        others = (f", and so does each of {sizes} for each dynamic dimension{batch}"
                  f"{one_at_a_time}" if trial.tried else "")
        their, them = ("its size", "it") if self.n_dims == 1 else ("their sizes", "them")
        return (f"{self.what}; nothing gives {their}: choose {them} (the sizes of the data you "
                f"test with; {ONE_STATIC_SHAPE}, each size 1 or more (E10011)); no example is "
                f"offered: {self.chosen} fails in onnxruntime on seeded inputs "
                f"({trial.failed}){others}; give the sizes the model is made for in place of "
                f"each ?: {form(template)}{self._rank()}")

    def _rank(self) -> str:
        if not self.unranked:
            return ""
        return (f"; {', '.join(repr(n) for n in self.unranked)} declare"
                f"{'s' if len(self.unranked) == 1 else ''} no rank: give as many dimensions "
                "as the model reads there (the example's (1,) is 1-D)")

    def _text(self, pasted: str, chosen: Optional[str] = None) -> str:
        their, them = ("its size", "it") if self.n_dims == 1 else ("their sizes", "them")
        return (f"{self.what}; nothing gives {their}: choose {them} (the sizes of the data you "
                f"test with; {ONE_STATIC_SHAPE}, each size 1 or more (E10011)), e.g. with "
                f"{chosen or self.chosen}: {pasted}{self._rank()}")


class DynamicDimsGiven(DynamicShapeError):
    """``input_shape`` gave ``-1`` or a range ``n1~n2``: a dynamic-shape build in ATC's reading
    (GE checks positive sizes only for an input left static); a check wants one static shape."""

    def __init__(self, where: str, what: str, example: Mapping[str, Tuple[int, ...]],
                 chosen: str, n_dims: int):
        super().__init__(where, what, example, chosen, (), n_dims)

    def _text(self, pasted: str, chosen: Optional[str] = None) -> str:
        return (f"{self.what}: -1 and ranges (n1~n2) make ATC build a dynamic-shape model, and "
                f"{ONE_STATIC_SHAPE}: give each dimension its size (of the data you test with), "
                f"e.g. with {self.chosen}: {pasted}")


def python_form(example: Mapping[str, Sequence[int]]) -> str:
    return "input_shape={" + ", ".join(f"{n!r}: {_tuple(d)}" for n, d in example.items()) + "}"


def yaml_form(example: Mapping[str, Sequence[int]]) -> str:
    """``input_shape: {x: [1, 4], "on": [1, 4]}`` (a ``?`` left to fill stays plain)."""
    items = (f"{yaml_scalar(n)}: [{', '.join(map(str, d))}]" for n, d in example.items())
    return "input_shape: {" + ", ".join(items) + "}"


def cli_form(example: Mapping[str, Sequence[int]]) -> str:
    items = (f"{n}:" + ",".join(map(str, d)) for n, d in example.items())
    return "--input-shape '" + ";".join(items) + "'"


def _tuple(dims: Sequence[int]) -> str:
    return "(" + ", ".join(map(str, dims)) + ("," if len(dims) == 1 else "") + ")"


def dynamic_dims_text(vi, declared) -> str:
    """What is dynamic about an input: "dimension 1 ('S') is dynamic", "dimensions 0 ('B'),
    1 ('S') are dynamic" or "has no declared shape"."""
    dims = vi.type.tensor_type.shape.dim
    ks = [k for k, d in enumerate(declared) if d is None]
    if not ks:
        return "has no declared shape"
    zero = [k for k in ks if dims[k].HasField("dim_value") and dims[k].dim_value == 0]
    shown = ", ".join(f"{k} ({dims[k].dim_param!r})" if dims[k].dim_param else
                      f"{k} (declared 0)" if k in zero else f"{k}" for k in ks)
    return (f"dimension {shown} is dynamic" if len(ks) == 1 else
            f"dimensions {shown} are dynamic") + (ZERO_DECLARED if zero else "")


#: a dim_value 0, read as a size left open as exporters write it (an onnx sweep: a real 0 read
#: so was asked for, though ATC converts no empty input)
ZERO_DECLARED = (" (a declared 0 is read as a size left open, as exporters write it; a real "
                 "size 0 is no input ATC converts, E10011: make an empty input a constant of "
                 "the model, or leave it out)")


def dynamic_shape_error(where: str, what: str, dynamic: Declared,
                        given: Mapping[str, Tuple[Tuple[int, str], ...]],
                        order: Sequence[str] = (), *,
                        runner: Optional[Callable[[], Optional[Run]]] = None,
                        exported: Optional[Tuple[int, int]] = None) -> DynamicShapeError:
    """The error for the inputs of ``dynamic`` (each dimension as ``(size or None, dim_param)``;
    an input with no declared shape has no dimensions); ``given``: the dimensions of the inputs
    ``input_shape`` gave (``(size, dim_param)``): the example keeps them, so that it replaces
    the call's ``input_shape`` whole, and reuses their named sizes. ``order``: the model's
    input names, the example's order. ``runner``: makes the ``run`` the example is tried with
    (``shape_trial.runner`` of the model, bound by ``onnx_graph``) when the text is made;
    None (the model is not at hand): the text is as it was, unchecked. ``exported``: the
    ``(height, width)`` the model's metadata says it was exported for (``export_metadata``),
    given to the last two dimensions of a 4-D input that leaves both open."""
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
        if (exported and len(dims) == 4 and dims[1][0] is not None and dims[2][0] is None
                and dims[3][0] is None):  # (NCHW: an NHWC input's last is its channels)
            dims = (*dims[:2], (exported[0], ""), (exported[1], ""))
            said = f"the {exported[0]}x{exported[1]} its metadata's imgsz gives for its image"
            if said not in reused:
                reused.append(said)
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
    slots = slots_of(dynamic, sizes)
    trial = None if runner is None else partial(first_that_runs, runner, dict(example), slots)
    return DynamicShapeError(where, what, example, chosen, unranked, n_dims + len(unranked),
                             trial=trial, reused=reused, slots=slots)
