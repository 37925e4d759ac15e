"""A reference figure no device could fail against, refused as ``detection.vacuous_reference``
refuses a map of ~0: a check that cannot fail proves nothing, yet reads as PASSED.

Top-k (``vacuous_score``): the onnxruntime fp32 reference runs the original model, so on the
right labels it scores well above chance. Below chance, ``k / C`` with ``C`` classes (a
label drawn at random is in a row's top k that often), the labels likely do not match the
model's outputs (another class numbering, 1-based, another class order, or a list in another
order than the samples): a device guessing at random scores better, a dead one (all NaN)
passes where the reference scores 0 -- the bound is chance where ``C`` is known, and no row
right where it is not (an output of class ids whose graph leaves the class axis open). At
chance exactly a few samples score so honestly (a 2-class model right on 2 of 4, H106): not
refused. A top k over k classes or fewer scores 1 on every finite row: refused. At or above
chance, a ``max_drop`` at or over the reference figure is refused: a device getting every row
wrong scores 0 and would still pass. Agreement's reference is 1.0 by definition, so only a
``max_drop`` of 1 or more makes it vacuous. A callable metric's range is unknown: not judged.
"""
from __future__ import annotations

from typing import Optional

from ..errors import ConfigError
from .figure_decimals import apart_decimals, figure_text


def vacuous_score(metric: str, scorer, reference: float, max_drop: float,
                  output: Optional[str]) -> Optional[ConfigError]:
    """The error of a ``metric`` (top1, top5, agreement) check whose reference figure no device
    could fail against, or which labels that do not match the model give; None when sound.
    ``scorer`` is the ``scoring.TopK`` that scored it (``rows``, ``correct``, ``classes``)."""
    if metric == "agreement":
        return max_drop_refusal(metric, reference, max_drop, "where every top-1 differs")
    if metric not in ("top1", "top5"):
        return None
    k, classes = scorer.k, scorer.classes
    right, rows = scorer.correct[0], scorer.rows
    if classes and k >= classes:  # every label is in every finite row's top k
        return ConfigError("metric", f"metric {metric} of output {output!r}, which has "
                                     f"{classes} classes: every label is among a row's top "
                                     f"{k}, so every device whose outputs are finite scores 1 "
                                     f"and only NaN rows could fail; judge it by top1")
    chance = k / classes if classes else None
    # at chance exactly is an honest result of a few samples (a 2-class model right on 2 of 4)
    if chance is None and right or chance is not None and reference >= chance:
        return max_drop_refusal(metric, reference, max_drop, "where every row is wrong")
    odds = (f", below chance ({k} in {classes} classes: {chance:.4f})"
            if chance is not None else "")
    why = ("no device could fail this check (one getting every row wrong scores 0)"
           if reference <= max_drop else
           "a device guessing classes at random would score better")
    return ConfigError("labels", f"metric {metric}: the onnxruntime fp32 reference gets {right} "
                                 f"of {rows} rows right ({reference:.4f}){odds}, so {why}: "
                                 f"the labels likely do not match output {output!r}. Check "
                                 f"their class numbering (label c is column c of the output, "
                                 f"counting from 0, in the model's class order: not 1-based, "
                                 f"not another dataset's order) and their order (a list follows "
                                 f"the samples' order; a mapping is keyed by sample id)")


def max_drop_refusal(metric: str, reference: float, max_drop: float,
                     worst: str) -> Optional[ConfigError]:
    """The error of a ``max_drop`` at or above the reference figure (None below it): the worst
    device (``worst``: "where every row is wrong", "finding nothing") scores 0 and passes."""
    if reference > max_drop:
        return None
    d = apart_decimals((reference, 0.0), (reference, max_drop))
    ref = figure_text(reference, d)
    return ConfigError("max_drop", f"metric {metric}: the onnxruntime fp32 reference scores "
                                   f"{ref} and max_drop is {figure_text(max_drop, d)}, so no "
                                   f"device could fail this check (one {worst} scores 0): "
                                   f"give a max_drop below {ref}")
