"""``ascend_model(m)`` of a model with dynamic dimensions that no ``input_shape`` fixes: the
conversion waits for the first ``run(inputs)`` and takes the shape from those inputs, as
``golden_dump(m, inputs)`` does (``graph.shape_from_inputs``).

ATC converts one static shape (``--input_shape``), so each input shape run is its own
conversion, cached by shape like any other; every run is remembered with the handle of its
own conversion (``AscendModel``, its ``input_shape`` the shape used), so the check, the
diagnosis and the report see a static-shape conversion.

A model converted with an AIPP file (``aipp``) is run on raw images: the AIPP file fixes its
input's C x H x W (``aipp.shape_from_file``) and the images give the batch, through stand-ins of
the model input AIPP makes of them (``aipp_placeholders``).
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Mapping, Optional

from ..errors import ConfigError


class ShapeDeferredModel:
    """A handle that converts per input shape on ``run``/``outputs``; ``converted`` is the
    latest conversion (a ``ConfigError`` saying how to convert now, before the first run)."""

    def __init__(self, convert: Callable[[Mapping], object], model, mode, *, atc_options,
                 where: str, dynamic, given=None, aipp=None, shown: Optional[str] = None):
        self.aipp = aipp  # the AIPP file (``AippConfig``): run() takes raw images
        from ..graph.per_shape import PerShape

        self._given = given  # the input_shape the call gave (for some inputs, or None)
        # input_shape -> AscendModel; an empty array's 0 is said as the array's, not a setting's
        self._shapes = PerShape(model, given, convert, shown=shown,
                                origin=lambda _: "the array run() was given for it")
        self.model, self.mode, self.where = model, mode, where
        self.atc_options = dict(atc_options or {})
        self.dynamic = tuple(dynamic)  # the inputs whose shape each run's arrays give

    #: the golden of a run takes its shape from the inputs too (``golden_dump(m, inputs)``)
    input_shape = None
    per_shape = True  # one conversion per input shape (``graph.per_shape.PerShape``)

    def for_inputs(self, inputs):
        """The conversion for the shapes of ``inputs`` (made, or the one made before)."""
        __tracebackhide__ = True
        arrays = getattr(inputs, "arrays", inputs)  # BaselineInputs hold their arrays
        if self.aipp is not None:  # raw images: the model input AIPP makes of them
            from ..aipp.shape_from_file import aipp_placeholders

            arrays = aipp_placeholders(self.aipp, self._shapes.proto, arrays)
        return self._shapes.get(arrays, f"{self.where}: run")

    def run(self, inputs, dump: bool = True, dump_mode: Optional[str] = None):
        """Convert for the shapes of ``inputs`` (cached) and run once, as ``AscendModel.run``."""
        __tracebackhide__ = True
        return self.for_inputs(inputs).run(inputs, dump=dump, dump_mode=dump_mode)

    def outputs(self, inputs):
        __tracebackhide__ = True
        return self.for_inputs(inputs).outputs(inputs)

    @property
    def converted(self):
        if self._shapes.latest is None:
            from ..graph.onnx_graph import load_model, model_label, resolve_input_shapes

            try:  # the advice of a conversion without inputs: a shape to paste
                if self.aipp is not None:
                    from ..aipp.shape_from_file import aipp_input_shape

                    aipp_input_shape(self.aipp, self.model, self._given)
                else:
                    resolve_input_shapes(load_model(self.model, weights=False), self._given,
                                         source=self.model)  # its weights: the advice is run
                advice = ""
            except ConfigError as exc:
                advice = f": {exc.problem}"
            raise ConfigError(self.where, f"{model_label(self.model)!r} is converted at its "
                                          "first run(inputs), at the shapes of those inputs; "
                                          f"to convert it before, give ascend_model its "
                                          f"input_shape{advice}")
        return self._shapes.latest.converted

    @property
    def name(self) -> str:
        if self._shapes.latest is not None:
            return self._shapes.latest.name
        from ..graph.onnx_graph import model_label

        return model_label(self.model)

    def __repr__(self) -> str:  # noqa: D105
        return f"AscendModel({self.name!r}, mode={self.mode.name!r}, converted per input shape)"


def deferred_model(convert_model, model, mode, *, keep_dtype, input_shape, atc_options,
                   where: str, others=(), aipp=None,
                   shown: Optional[str] = None) -> Optional[ShapeDeferredModel]:
    """A ``ShapeDeferredModel`` when ``model`` has a dynamic dimension ``input_shape`` leaves
    open, else None (convert now). The mode, its ``keep_dtype`` names and the ATC options are
    checked now, as an immediate conversion checks them; ``convert_model(input_shape)``
    converts for one shape; ``aipp``: the AIPP file it is converted with (``AippConfig``);
    ``shown``: the model file as messages name it."""
    from ..core.modes import keep_dtype as keep_dtype_mode, resolve_mode
    from ..graph.input_names import check_input_names, listed_initializers
    from ..graph.onnx_graph import graph_inputs, load_model, parse_input_shape
    from ..graph.shape_from_inputs import left_dynamic
    from ..core.atc_option_check import check_atc_options
    from .setup_checks import check_mode_names

    given = parse_input_shape(input_shape, model=model)
    dynamic = left_dynamic(model, given)
    if not dynamic:
        return None
    # a name no input has would wait for the first run to be refused: refused now, as a
    # model converted at once refuses it
    graph = load_model(model, weights=False)
    check_input_names(given or {}, [i.name for i in graph_inputs(graph)], "input_shape",
                      listed_initializers(graph))
    check_atc_options(atc_options, where)
    resolved = resolve_mode(mode, where)
    check_mode_names(resolved, model, where, others)
    if keep_dtype:
        kept = keep_dtype_mode([keep_dtype] if isinstance(keep_dtype, str) else list(keep_dtype))
        check_mode_names(kept, model, where)
        resolved = resolved | kept
    return ShapeDeferredModel(convert_model, model, resolved, atc_options=atc_options,
                              where=where, dynamic=dynamic, given=given, aipp=aipp, shown=shown)


@contextmanager
def yaml_shape_advice(where: str):
    """The dynamic-dimension advice of a YAML item spelled as its entry's ``input_shape:`` key
    (``where``: the suite file and the entry's name)."""
    from ..graph.shape_advice import DynamicShapeError

    try:
        yield
    except DynamicShapeError as exc:
        raise ConfigError(where, exc.yaml_text()) from None
