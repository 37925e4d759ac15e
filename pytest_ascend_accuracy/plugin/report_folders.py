"""Where a test's reports go under ``--accuracy-report DIR``: one folder per test id
(``report_slug``), emptied when the test starts (``empty_report_folders``), each check's set
written aside and moved into place complete (``begin_report_set``, ``report.report_set``), and
the run's ``DIR/index.json`` and ``index.html`` written when the session ends
(``finish_report_dir``, ``report.run_index``)."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Optional


def report_slug(nodeid: str) -> str:
    """A file-system-safe directory name for a test id: ``test_a.py--test_f`` for
    ``test_a.py::test_f``. Where that spelling loses anything (a folder's slash, a parameter
    id's brackets, any other character made ``_``, or a cut at 150), a short digest of the
    whole id follows (``tests_test_a.py--test_f_default-1a2b3c4d``), so two tests never share
    one directory, whichever xdist worker runs each: ``test_f[a+b]`` and ``test_f[a b]``,
    ``test_f[a]`` and ``test_f_a``, ``tests/a_b.py`` and ``tests/a/b.py`` each wrote one
    directory, and one report was lost."""
    spelled = re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid.replace("::", "--"))
    slug = spelled.strip("._")
    path, _, name = nodeid.partition("::")
    if (len(slug) > 150 or slug != spelled or re.search(r"[^A-Za-z0-9_.-]", path)
            or re.search(r"[^A-Za-z0-9_.-]", name.replace("::", ""))):
        import hashlib

        digest = hashlib.sha1(nodeid.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        slug = f"{slug[:141]}-{digest}"
    return slug or "test"


def empty_report_folders(root: Path, slug: str) -> None:
    """When a test starts (each attempt): its report folders of an earlier run go, so none of
    its files stays beside this run's (a failure's tensor copies beside a later pass's report).
    ``<slug>``, ``<slug>-2``, ... : a test's own, which no other test's slug can name (a digest
    makes slugs unique, and a Python or YAML id cannot end in ``-N``)."""
    import shutil

    from ..report.report_set import remove_partials

    remove_partials(root, slug)  # the staging folders of a writer that was killed
    k, folder = 1, root / slug
    while folder.is_dir():
        shutil.rmtree(folder, ignore_errors=True)
        k += 1
        folder = root / f"{slug}-{k}"


def report_dir_for(state, nodeid: str) -> Optional[Path]:
    """``DIR/<test slug>``; the second check of the same test goes to ``<slug>-2``."""
    root = state.settings.report_dir
    if root is None:
        return None
    slug = report_slug(nodeid)
    n = state.report_slugs.get(slug, 0)
    state.report_slugs[slug] = n + 1
    return root / (slug if n == 0 else f"{slug}-{n + 1}")


def begin_report_set(state, nodeid: str):
    """The ``report.report_set.ReportSet`` of the test's next check, None without
    ``--accuracy-report``."""
    final = report_dir_for(state, nodeid)
    if final is None:
        return None
    from ..report.report_set import ReportSet

    return ReportSet.begin(final)


#: compare.json's ``run.actual_dump`` (and the page's "actual:" line) for a run dumped into the
#: test's own folder (``plugin.dump_cleanup``): it is not there after a passing test
#: (its body: the folder is settled when the call ends, so an error in a fixture's teardown after
#: a passing body finds it removed)
OWN_DUMP_FATE = ("the test's own dump folder: kept if the test's body fails; removed when the body "
                 "passes or xfails")


def run_fields(state, nodeid: str, check: str, actual_root=None) -> dict:
    """What a check's compare.json says of the run that wrote it (``report_set.run_block``
    adds the time written and the outcome): the session's id (the xdist controller's on every
    worker), when this process started, the test and the check; ``actual_dump`` where the
    run's dump (``actual_root``) lies in a folder of the test's own dumps, which a passing
    test removes (a passing check's page named a folder that was gone, or never written)."""
    fields = {"id": state.session_key, "started": state.started, "nodeid": nodeid,
              "check": check, "worker": state.worker_id}
    if actual_root:
        path = Path(actual_root)
        if any(state.unsettled_dumps.get(d) == nodeid for d in (path, *path.parents)):
            fields["actual_dump"] = OWN_DUMP_FATE
    return fields


def finish_report_dir(state, *, index: bool, interrupted: bool) -> None:
    """At the session's end: this process's staging folders that never settled go; the
    controller (or a serial session, ``index``) writes the run's index of its folders."""
    root = state.settings.report_dir
    if root is None or not root.is_dir():
        return
    from ..report.report_set import remove_own_partials

    remove_own_partials(root)
    if index:
        from ..report.run_index import write_run_index
        from .model_labels import relabelled

        reported = None
        if interrupted:  # only the tests pytest reported (a worker may finish one after it)
            reported = {r.nodeid for r in state.records} | {
                str(d.get("nodeid")) for d in state.dataset_records}
        records, dataset_records = relabelled(state.records, state.dataset_records,
                                              state.settings.invocation_dir)
        checks = {Path(r.report).name: f"{r.model}, {r.mode}" for r in records if r.report}
        write_run_index(root, {"id": state.session_key, "started": state.started,
                               "interrupted": interrupted}, dataset_records, reported, checks)
