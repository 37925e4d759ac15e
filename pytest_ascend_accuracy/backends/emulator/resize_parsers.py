"""Which CANN ONNX parser takes a Resize at which opset, and what op it builds: the table the
Resize warnings (``atc_resize``, ``resize_pixels``) compare the device against.

GraphEngine's ONNX parser looks an op's parser up by ``ai.onnx::<opset>::Resize`` where
``<opset>`` is the *model's* ``ai.onnx`` opset_import version, not the op's since-version
(``ConstructOriType``: ``Ascend/parser`` ``parser/onnx/onnx_parser.cc``; its pre-check refuses a
type no plugin registers, ``E19010``: ``graph/op_domains.py`` cites both). So the model's opset
decides which plugin builds its Resize ops. The plugins found (code search):

* ``hicann/ops-cv`` ``common/src/framework/resize_onnx_plugin.cpp`` @2275f5b6 (2025; the same
  file in ops-nn, as the fork ``jbgztxdy/ops-nn`` @a65b72dc holds it): registers
  ``ai.onnx::11``..``ai.onnx::18::Resize`` (``ParseOpToGraphResize``) and, apart,
  ``ai.onnx::10::Resize``. Opsets 11-18: a nearest Resize is ``ResizeNearestNeighborV2`` with
  ``half_pixel_centers`` for ``half_pixel`` and ``pytorch_half_pixel``, ``align_corners`` for
  ``align_corners`` (``nearest_mode`` is not read); a linear or cubic one is ``Resize`` keeping
  the model's ``coordinate_transformation_mode`` and ``mode`` (``BuildInterpolatingResize``)
  and nothing else: ``cubic_coeff_a``, ``exclude_outside`` and ``extrapolation_value`` take the
  IR's defaults (-0.75, 0, 0.0: ``REG_OP(Resize)``, ONNX's too; ``atc_resize.dropped_settings``
  warns of others); ``antialias``, ``axes`` and ``keep_aspect_ratio_policy`` are only
  logged ("Current antialias unsupported"). Opset 10: nearest with both flags off; linear is
  ``Resize`` given only its mode (``BuildLinearResizeV10``), so its coordinate mode is the IR's
  default, ``half_pixel`` (``REG_OP(Resize)``, CANN's ``image_ops.h``), where ONNX's opset-10
  Resize is ``asymmetric``. ops-cv's README dates its ONNX plugins 2025/12 and says its source
  follows the CANN releases (release notes map versions to tags).
* canndev's ``ops/built-in/framework/onnx_plugin/resize_plugin.cc`` (the mirror
  ``dengguojie/vue-element-admin`` @087d7b34, @f9f56511): registers ``ai.onnx::11``..``13``
  and ``ai.onnx::10::Resize`` only. Opsets 11-13: nearest is ``ResizeNearestNeighborV2``, linear
  ``ResizeBilinearV2``, with ``half_pixel_centers`` for ``pytorch_half_pixel`` only
  (``half_pixel``, ONNX's default, gets neither flag) and ``align_corners`` for
  ``align_corners``; cubic is refused ("Unsupported interpolation mode"). Opset 10: both ops
  with both flags off. Every other canndev version found registers opsets 10-13 too (one
  builds ``Resize`` with every attribute, which its ``ResizeFusionPass`` rewrites into
  ``ResizeNearestNeighborV2D``/``ResizeBilinearV2D`` with these flags).

No plugin found registers a Resize at opset 19 or later, and no canndev one at 14 or later: a
CANN whose plugin is canndev's has no parser for an opset-14+ Resize (refused at conversion)
rather than building it otherwise. Not checked on a real ``atc``; CANN's own ONNX operator lists
(Resize by opset and release) were searched for and not found, so the warnings name the parser
and its opsets, which a user can tell apart on their CANN: the 2025 one converts an opset-14+
Resize, canndev's refuses it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple


@dataclass(frozen=True)
class ResizeParser:
    """One CANN ONNX Resize plugin: the opsets it registers and the flags of the TensorFlow op
    it builds (``ResizeNearestNeighborV2``/``ResizeBilinearV2``: ``align_corners``,
    ``half_pixel_centers``) for each coordinate mode (modes not listed: neither flag)."""

    key: str
    name: str
    opsets: Tuple[int, int]
    nearest: Dict[str, dict] = field(default_factory=dict)
    #: opsets 11+: flags of the ResizeBilinearV2 a linear Resize is, or None where it stays
    #: ``Resize`` with its coordinate mode (computed as ONNX defines it)
    linear: Optional[Dict[str, dict]] = None
    #: opset 10: the source coordinates of its linear op, as TensorFlow's flags give them
    linear_opset10: dict = field(default_factory=dict)

    def takes(self, opset: int) -> bool:
        return self.opsets[0] <= opset <= self.opsets[1]

    def nearest_flags(self, ctm: str, opset: int) -> dict:
        return {} if opset < 11 else dict(self.nearest.get(ctm, {}))

    def linear_flags(self, ctm: str, opset: int) -> Optional[dict]:
        """The flags whose TensorFlow coordinates its linear op reads, None where it computes
        the Resize as ONNX does."""
        if opset < 11:
            return dict(self.linear_opset10)
        return None if self.linear is None else dict(self.linear.get(ctm, {}))

    def builds(self, kind: str, ctm: str, opset: int) -> str:
        """What it builds of a ``kind`` ("nearest" or "linear") Resize, in words."""
        if kind == "linear" and self.linear_flags(ctm, opset) is None:
            return "Resize keeping the model's coordinate mode"
        if kind == "linear" and self.key == "ops-cv":  # opset 10
            return "Resize without a coordinate mode, so the IR's default, half_pixel"
        flags = self.nearest_flags(ctm, opset) if kind != "linear" else \
            self.linear_flags(ctm, opset)
        op = "ResizeBilinearV2" if kind == "linear" else "ResizeNearestNeighborV2"
        return f"{op} with {' and '.join(sorted(flags)) or 'neither flag'}"


#: the plugins found, newest first (the module docstring cites each)
OPS_CV = ResizeParser(
    "ops-cv", "the 2025 parser (hicann/ops-cv resize_onnx_plugin.cpp, opsets 10-18)", (10, 18),
    nearest={"half_pixel": {"half_pixel_centers": True},
             "pytorch_half_pixel": {"half_pixel_centers": True},
             "align_corners": {"align_corners": True}},
    linear=None, linear_opset10={"half_pixel_centers": True})
CANNDEV = ResizeParser(
    "canndev", "canndev's parser (resize_plugin.cc, opsets 10-13)", (10, 13),
    nearest={"pytorch_half_pixel": {"half_pixel_centers": True},
             "align_corners": {"align_corners": True}},
    linear={"pytorch_half_pixel": {"half_pixel_centers": True},
            "align_corners": {"align_corners": True}}, linear_opset10={})
RESIZE_PARSERS = (OPS_CV, CANNDEV)


def parsers_for(opset: int) -> List[ResizeParser]:
    """The plugins that take a Resize of a model of this ``ai.onnx`` opset."""
    return [p for p in RESIZE_PARSERS if p.takes(opset)]


def parser_named(key: str) -> Optional[ResizeParser]:
    return next((p for p in RESIZE_PARSERS if p.key == key), None)


def which_cann(kind: str, ctm: str, opset: int, differ: Sequence[str]) -> Tuple[str, str]:
    """Which CANN parsers a Resize of a model of ``opset`` meets and which of them take other
    source pixels than the emulator (``differ``: their keys): (the clause a warning ends on,
    the condition its "a pass on the emulator proves nothing" holds under, "" for always).
    Where the opset leaves two parsers that build it differently, the clause says that the
    emulator does not know which the user's CANN has, rather than asserting one."""
    takers = parsers_for(opset)
    bad = [p for p in takers if p.key in differ]
    if not bad:  # (rows of an older entry: no parser recorded)
        return ("the device takes other source pixels than the emulator here (as some CANN "
                "parser builds it)", "")
    if len(takers) == 1:
        older = ("; canndev's parser registers opsets 10-13 only, so a CANN built on it has "
                 "no parser for this model's Resize" if opset > CANNDEV.opsets[1] else "")
        return (f"the only CANN ONNX parser found that takes a Resize at opset {opset}, "
                f"{bad[0].name}, builds {bad[0].builds(kind, ctm, opset)} and takes other "
                f"source pixels than the emulator here{older}", "")
    if len(bad) == len(takers):
        each = "; ".join(f"{p.name}: {p.builds(kind, ctm, opset)}" for p in bad)
        return (f"every CANN ONNX parser found that takes a Resize at opset {opset} ({each}) "
                f"takes other source pixels than the emulator here", "")
    said = "; ".join(
        f"{p.name} builds {p.builds(kind, ctm, opset)}, which takes "
        + ("other source pixels than the emulator here" if p in bad
           else "the same source pixels as the emulator") for p in takers)
    return (f"two CANN ONNX parsers take a Resize at opset {opset} and build it differently: "
            f"{said}; the emulator does not know which one your CANN has (the 2025 parser "
            f"converts a Resize at opsets 14-18 too, canndev's refuses it there)",
            "under " + " and ".join(p.name.split(" (")[0] for p in bad) + " ")


__all__ = ["CANNDEV", "OPS_CV", "RESIZE_PARSERS", "ResizeParser", "parser_named", "parsers_for",
           "which_cann"]
