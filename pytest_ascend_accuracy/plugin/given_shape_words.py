"""A run refused for an input shape that ``ascend_model(..., input_shape=...)`` fixed.

The conversion's model declares the sizes ``input_shape=`` gave, so the run's refusal read
"input 'x' has shape [4, 3, 8, 8], the model declares [2, 3, 8, 8]" where the model declares
[N, 3, 8, 8] (trial t53): here it says where [2, 3, 8, 8] came from, what the model declares,
and the two ways out (inputs of that shape, or no ``input_shape=``: a conversion per shape).
"""
from __future__ import annotations

from contextlib import contextmanager

from ..errors import ConfigError


@contextmanager
def given_shape_words(handle):
    """Re-word the ``ConfigError`` of a run of ``handle`` (an ``AscendModel``) whose input
    shape is not the one its ``input_shape`` fixed; any other error passes as it is."""
    try:
        yield
    except ConfigError as exc:
        problem = _reworded(exc.problem, handle.model, handle.input_shape)
        if problem is None:
            raise
        reworded = ConfigError(exc.where, problem)
        reworded.run_problem = exc.problem  # as the run said it: a caller with its own words
        raise reworded from None


def _reworded(problem: str, model, input_shape):
    from ..graph.onnx_graph import declared_text, graph_inputs, load_model, parse_input_shape

    if not input_shape:
        return None
    try:
        given = parse_input_shape(input_shape) or {}
        inputs = {i.name: i for i in graph_inputs(load_model(model, weights=False))}
    except Exception:  # noqa: BLE001 - the run's own refusal says it as it is
        return None
    for name, dims in given.items():
        said = f"the model declares {_show(dims)}"
        if f"input {name!r} has shape " not in problem or not problem.endswith(said):
            continue
        declared = declared_text(inputs[name]) if name in inputs else None
        if declared is None or declared == _show(dims):
            return None  # the model itself declares it: the words are true
        return (problem[:-len(said)] + f"ascend_model(..., input_shape=...) converted it at "
                f"{_show(dims)} (the model declares {declared}): give run() inputs of that "
                "shape, or drop input_shape= from the ascend_model(...) call: it then converts "
                "at each run's input shapes")
    return None


def _show(dims) -> str:
    return "[" + ", ".join(str(int(d)) for d in dims) + "]"
