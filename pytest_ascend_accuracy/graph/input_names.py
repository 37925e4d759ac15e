"""The input names a user gives (an ``input_shape``, an inputs mapping, a sample's keys),
checked against the model's: a name the model does not have is refused naming the closest
and all of them, wherever it is given (``golden_dump(m, x, input_shape=...)`` dropped an
unknown name silently, and ``accuracy_inputs(m, inputs=...)`` took it as given).

An initializer a model also lists as a graph input (every IR < 4 export lists its weights so)
is no input to feed: ATC's ONNX parser makes a constant of it ("if the input is initialized by
a default value found in 'initializer', it will be considered as a const node", ``Ascend/parser``
``parser/onnx/onnx_parser.cc`` @069eb8b2, ``ParseInput``), and so do the golden and the
emulator (``onnx_graph.graph_inputs``). Giving it was refused as "no model input named 'W';
inputs: x", untrue of the file, which lists W as an input (an odd-graphs trial): the refusal
says what W is (``listed_initializers``).
"""
from __future__ import annotations

from typing import Callable, Iterable, List, Sequence

from ..errors import ConfigError, closest_text


def check_input_names(given: Iterable, inputs: Sequence[str], where: str,
                      constants: Iterable[str] = ()) -> None:
    """Refuse a name of ``given`` that is not one of the model's ``inputs`` (in their order);
    ``constants``: the initializers the model also lists as inputs (``listed_initializers``),
    refused saying so."""
    unknown = sorted(str(k) for k in set(given) - set(inputs))
    if not unknown:
        return
    listed = [k for k in unknown if k in set(constants)]
    shown = f"inputs: {', '.join(inputs) or '(none)'}"
    if listed:
        raise ConfigError(where, f"{listed_text(listed[0])}; the {shown}")
    raise ConfigError(where, f"no model input named {unknown[0]!r}"
                             f"{closest_text(unknown[0], inputs)}; {shown}")


def listed_text(name: str) -> str:
    """What ``name``, an initializer the model also lists as an input, is, and to leave it out."""
    return (f"{name!r} is an initializer the model also lists as a graph input (as IR version "
            f"< 4 exports list every weight): it is taken as a constant, as ATC takes it, so it "
            f"is not fed; leave it out")


def listed_initializers(model) -> List[str]:
    """The names ``model`` (an ``onnx.ModelProto``) lists both as graph inputs and as
    initializers, in input order."""
    held = {t.name for t in model.graph.initializer}
    return [i.name for i in model.graph.input if i.name in held]


def require_mapping(inputs, input_names: Callable[[], Sequence[str]], where: str) -> None:
    """Refuse ``inputs`` that are not a mapping ``{input name: array}`` (a bare array for a
    one-input model, a list), naming the model's inputs (``input_names()``, asked only then) as
    the mapping to give."""
    from collections.abc import Mapping

    if isinstance(inputs, Mapping):
        return
    names = list(input_names())
    spelled = ", ".join(f"{n!r}: ..." for n in names)
    raise ConfigError(where, f"expected a mapping {{input name: array}}, got "
                             f"{type(inputs).__name__}; the model's inputs: "
                             f"{', '.join(names) or '(none)'} (give {{{spelled}}})")


__all__ = ["check_input_names", "listed_initializers", "listed_text", "require_mapping"]
