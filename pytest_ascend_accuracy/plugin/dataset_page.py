"""A dataset check's page in the report directory: ``<test>/dataset.html`` (``dataset-2.html``
for a test's second dataset check), and, when the check traced a failing sample to an
operator, that sample's failing tensors copied next to it (``dataset-tensors/``,
``dataset-2-tensors/``) so the page's links outlive the dumps, as a check's ``report.html``
has its ``tensors/``. The copies are written aside (``report.report_set``) and moved into place
with the page: a Ctrl-C while they are written leaves neither. The page opens on the traced
sample's first failure and indexes its failing ops (``report.html_report.dataset_html_text``).
An earlier run's pages and copies go when the test starts
(``report_folders.empty_report_folders``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from .session import AccuracyState

_KEY = "{slug}/dataset"  # state.report_slugs: dataset pages written for the test so far


@dataclass
class DatasetPage:
    """Where the next dataset page of a test goes, and the tensors its trace copied."""

    directory: Path
    stem: str
    key: str
    links: dict = field(default_factory=dict)
    #: the copies being written (``ReportSet``), moved into place with the page
    staged: Optional[object] = None
    #: (test id, DatasetResult, CompareResult, Verdict) the page was written from
    written: Optional[tuple] = None

    @classmethod
    def next_for(cls, state: AccuracyState, nodeid: str) -> Optional["DatasetPage"]:
        """The test's next page (None without ``--accuracy-report``); taken by ``write``."""
        root = state.settings.report_dir
        if root is None:
            return None
        from .accuracy_check import report_slug

        slug = report_slug(nodeid)
        key = _KEY.format(slug=slug)
        n = state.report_slugs.get(key, 0)
        return cls(Path(root) / slug, "dataset" if n == 0 else f"dataset-{n + 1}", key)

    @property
    def path(self) -> Path:
        return self.directory / f"{self.stem}.html"

    @property
    def tensors(self) -> str:
        return f"{self.stem}-tensors"

    def copy_tensors(self, actual, golden, verdict) -> None:
        """``dataset.run_dataset_check``'s ``on_traced``: the traced sample's failing tensors,
        copied (aside) while its dumps can be read."""
        from ..report.report_set import ReportSet
        from ..report.tensor_copies import copy_failing_tensors

        self.staged = ReportSet.begin(self.directory / self.tensors, at=self.directory.parent)
        self.links = copy_failing_tensors(actual, golden, verdict, self.directory,
                                          folder=self.tensors, into=self.staged.staging)

    def discard(self) -> None:
        """The check stopped before its page (a Ctrl-C, an error): no copies stay."""
        if self.staged is not None:
            self.staged.discard()

    def write(self, state: AccuracyState, nodeid: str, result, compared, verdict) -> str:
        """Write the page (atomically), its copies moved into place with it; its path."""
        from ..report.report_set import interrupts_held

        state.report_slugs[self.key] = state.report_slugs.get(self.key, 0) + 1
        self.directory.mkdir(parents=True, exist_ok=True)
        self.written = (nodeid, result, compared, verdict)
        with interrupts_held():  # the copies and their page, together
            if self.staged is not None:
                self.staged.settle()
            return self._render(None)

    def link_diagnosis(self, diagnosis: Optional[Path]) -> None:
        """The page again, linking the failure's ``--accuracy-diagnose`` page (written after
        it: a job cancelled in the diagnosis's conversions keeps the page; None: the diagnosis
        did not run, and the page is only made again with the advice as it reads now)."""
        import os

        if self.written is not None:
            self._render(None if diagnosis is None else
                         Path(os.path.relpath(diagnosis, self.directory)).as_posix())

    def _render(self, diagnosis: Optional[str]) -> str:
        from ..dataset.result import LISTED
        from ..report.html_report import write_dataset_html

        nodeid, result, compared, verdict = self.written
        return str(write_dataset_html(
            self.path, result.message().splitlines()[0], result.passed, _figures(result),
            title=f"{nodeid} [dataset]", result=compared, verdict=verdict, links=self.links,
            traced=_traced(result.culprit), diagnosis=diagnosis,
            flipped=result.flipped if len(result.flipped) > LISTED else ()))


def _first_ids(ids) -> str:
    """The flipped samples the terminal names (the page lists them all at its end): 200
    ImageNet file names ran the figures past the window's height, and the page no longer
    opened on the traced sample's first failure (a review)."""
    from ..dataset.result import LISTED, listed

    if len(ids) <= LISTED:
        return ", ".join(ids) or "none"
    return f"{listed(ids)} (all {len(ids)} at the end of the page)"


def _traced(culprit) -> str:
    """The heading of the traced sample's section: which sample, and why that one."""
    return f"{culprit.role} {culprit.sample}, every operator compared" if culprit else ""


def _figures(result):
    figures = [("model", result.model), ("mode", result.mode), ("metric", result.metric),
               ("reference", f"{result.reference:.6f}"), ("device", f"{result.device:.6f}"),
               ("drop", f"{result.drop:.6f} (max_drop {result.max_drop:g}"
                        + ("" if result.higher_is_better else "; lower is better: "
                                                              "device - reference") + ")"),
               ("samples", str(result.samples)),
               ("flipped", _first_ids(result.flipped))]
    if result.positions > 1:  # a sequence output: a sample flips when any position does
        figures.append(("flipped positions", f"{result.flipped_positions} of "
                                             f"{result.all_positions()}"))
    if result.untracked:
        figures.append(("flips", f"not tracked ({result.untracked})"))
    if result.culprit is not None:
        figures.append(("traced", result.culprit.line()))
        if result.culprit.next_step:  # as the terminal says it
            figures.append(("advice", result.culprit.next_step))
    return figures
