"""Where a test's reports go under ``--accuracy-report DIR``: one folder per test id
(``report_slug``), emptied when the test starts (``empty_report_folders``)."""
from __future__ import annotations

import re
from pathlib import Path


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

    k, folder = 1, root / slug
    while folder.is_dir():
        shutil.rmtree(folder, ignore_errors=True)
        k += 1
        folder = root / f"{slug}-{k}"
