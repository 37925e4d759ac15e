"""``DIR/index.json`` and ``DIR/index.html``: the report folders one run wrote, with each
check's verdict and first failing op, told apart from the folders older runs left in DIR.

A run's folders are those whose ``compare.json`` names its run id (``"run"``, written by
``report.report_set``), found by reading DIR when the session ends: every xdist worker's, and
after a Ctrl-C those settled before it. Dataset pages (no compare.json) are the run's where
its records name them. Nothing in DIR is deleted: a folder of another run is listed as such.
(A trial reran a nightly into the same DIR with one test deselected: its old folder stayed
beside the new ones and nothing said which run wrote which.)
"""
from __future__ import annotations

import html
import json
import os
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Optional, Tuple
from urllib.parse import quote

from ..core.atomic_files import atomic_write_text

FORMAT = "pytest-ascend-accuracy/report-index"
VERSION = 1
#: the files the index is written to, in DIR (never a test's folder: those are directories)
INDEX_FILES = ("index.json", "index.html")
#: how much of a compare.json is read for its ``"run"`` (written first) before the whole file
_HEAD = 1 << 16


def run_of(folder: Path) -> Optional[dict]:
    """The ``"run"`` of ``folder/compare.json``; None when there is none (no file, unreadable,
    written before runs were recorded)."""
    path = Path(folder) / "compare.json"
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            head = fh.read(_HEAD)
            at = head.find('"run":')
            if not 0 <= at <= 16:
                return None
            at += len('"run":')
            while at < len(head) and head[at].isspace():
                at += 1
            try:
                run, _ = json.JSONDecoder().raw_decode(head, at)
            except ValueError:  # longer than the head: the whole file
                run = json.loads(head + fh.read()).get("run")
    except (OSError, ValueError):
        return None
    return run if isinstance(run, dict) else None


def collect(root: Path, run_id: str,
            dataset_records: Iterable[Mapping[str, object]] = ()) -> Tuple[List[dict], List[str]]:
    """``(entries, other folders)``: one entry per check page this run wrote under ``root``
    (sorted by folder), and the names of the folders in ``root`` it did not write."""
    root = Path(root)
    entries: List[dict] = []
    ours = set()
    folders = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    for folder in folders:
        run = run_of(folder)
        if run is None or run.get("id") != run_id:
            continue
        ours.add(folder.name)
        entries.append({"folder": folder.name, "kind": "accuracy", "nodeid": run.get("nodeid"),
                        "check": run.get("check"), "passed": run.get("passed"),
                        "first_failing_op": run.get("first_failing_op"),
                        "baseline": run.get("baseline"), "written": run.get("written"),
                        "page": f"{folder.name}/report.html",
                        "diagnosis": _within(root, folder / str(run["diagnosis"]))
                        if run.get("diagnosis") else None})
    for record in dataset_records:
        page = record.get("report")
        if not page or not Path(str(page)).is_file():
            continue
        page = Path(str(page))
        try:
            rel = page.relative_to(root)
        except ValueError:
            continue
        ours.add(rel.parts[0])
        entries.append({"folder": rel.parts[0], "kind": "dataset", "nodeid": record.get("nodeid"),
                        "check": f"{record.get('model')}, {record.get('mode')} (dataset)",
                        "passed": record.get("passed"), "first_failing_op": record.get("first_op"),
                        "baseline": None, "written": None, "page": rel.as_posix(),
                        "diagnosis": _within(root, Path(str(record["diagnosis"])))
                        if record.get("diagnosis") else None})
    entries.sort(key=lambda e: (e["folder"], e["page"]))
    return entries, [p.name for p in folders if p.name not in ours]


def _within(root: Path, page: Path) -> Optional[str]:
    """``page`` relative to ``root`` (posix), None where it is not in ``root`` or not there."""
    try:
        rel = Path(os.path.relpath(page, root))
    except ValueError:
        return None
    if rel.parts[:1] == ("..",) or not (root / rel).is_file():
        return None
    return rel.as_posix()


def index_data(run: Mapping[str, object], entries: List[dict], others: List[str],
               unreported: Iterable[dict] = ()) -> Dict:
    """``unreported``: entries of this run whose tests pytest never reported (``write_run_index``),
    listed apart under ``unreported_folders``, not counted."""
    passed = sum(1 for e in entries if e["passed"])
    return {"format": FORMAT, "version": VERSION, "run": dict(run),
            "checks": len(entries), "passed": passed, "failed": len(entries) - passed,
            "folders": entries, "other_folders": others,
            "unreported_folders": [e["folder"] for e in unreported]}


def _row(entry: Mapping[str, object]) -> str:
    e = html.escape
    ok = bool(entry["passed"])
    first = entry.get("first_failing_op") or ""
    note = entry.get("baseline") or ""
    diagnosis = entry.get("diagnosis")
    diagnosed = (f'<a href="{e(quote(str(diagnosis)))}">diagnosis</a>' if diagnosis else "")
    return (f'<tr class="{"pass" if ok else "fail"}"><td>{"PASSED" if ok else "FAILED"}</td>'
            f'<td><a href="{e(quote(str(entry["page"])))}">{e(str(entry["nodeid"] or ""))}</a>'
            f'</td><td>{e(str(entry["check"] or ""))}</td><td>{e(str(first))}</td>'
            f'<td>{e(str(note))}</td><td>{diagnosed}</td></tr>')


def index_html(data: Mapping[str, object]) -> str:
    """The page: this run's checks (verdict, test linked to its page, check, first failing op,
    baseline, diagnosis page), then the names of the other runs' folders, unlinked."""
    e = html.escape
    run = data["run"]
    head = f'run {e(str(run.get("id")))}, started {e(str(run.get("started")))}'
    if run.get("interrupted"):
        head += ", interrupted: the folders settled before the interrupt"
    rows = "".join(_row(x) for x in data["folders"])
    others = data["other_folders"]
    body = [f"<h1>{data['checks']} check{'s' if data['checks'] != 1 else ''} of this run: "
            f"{data['passed']} passed, {data['failed']} failed</h1>", f'<p class="meta">{head}</p>',
            "<table><thead><tr><th>verdict</th><th>test</th><th>check</th>"
            f"<th>first failing op</th><th>baseline</th><th>--accuracy-diagnose</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>"]
    late = data.get("unreported_folders") or []
    if late:
        body += [f"<h2>{len(late)} folder{'s' if len(late) != 1 else ''} of this run whose test "
                 "pytest never reported (an xdist worker finished it after the interrupt): not "
                 "counted above</h2>",
                 "<ul>" + "".join(f'<li><a href="{e(quote(n))}/report.html">{e(n)}</a></li>'
                                  for n in late) + "</ul>"]
    if others:
        body += [f"<h2>{len(others)} folder{'s' if len(others) != 1 else ''} in this directory "
                 "not written by this run (earlier runs', or those of a session writing here "
                 "at the same time; left as they were)</h2>",
                 "<ul>" + "".join(f"<li>{e(n)}</li>" for n in others) + "</ul>"]
    style = ("body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;"
             "overflow-wrap:anywhere}"  # (a test id with no break point ran past the window)
             "table{border-collapse:collapse;font-size:13px}th,td{border:1px solid #ddd;"
             "padding:2px 6px;text-align:left}tr.pass td:first-child{color:#17692e}"
             "tr.fail td:first-child{color:#b3261e}.meta{color:#555}")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>accuracy reports of run {e(str(run.get('id')))}</title><style>{style}</style>"
            "</head><body>\n" + "\n".join(body) + "\n</body></html>\n")


def write_run_index(root, run: Mapping[str, object],
                    dataset_records: Iterable[Mapping[str, object]] = (),
                    reported: Optional[Iterable[str]] = None,
                    checks: Mapping[str, str] = {}) -> List[str]:
    """Write ``root/index.json`` and ``root/index.html`` for the run ``run`` (``id``,
    ``started``, ``interrupted``; ``finished`` is added) atomically; their paths. ``reported``:
    the test ids pytest reported, where that may be fewer than the run's folders (after a
    Ctrl-C under xdist a worker finishes its test and settles its folder, which pytest never
    reports: the index counted checks the terminal never showed, H100); None: all are.
    ``checks``: {folder name: its check as the session's summary names it} (two model files of
    one name told apart by their folders, which a worker writing one folder does not know)."""
    import datetime

    root = Path(root)
    run = {**run, "finished": datetime.datetime.now(datetime.timezone.utc).isoformat(
        timespec="seconds")}
    entries, others = collect(root, str(run.get("id")), dataset_records)
    for entry in entries:
        if entry["kind"] == "accuracy" and entry["folder"] in checks:
            entry["check"] = checks[entry["folder"]]
    late: List[dict] = []
    if reported is not None:
        reported = set(reported)
        late = [e for e in entries if e["nodeid"] not in reported]
        entries = [e for e in entries if e["nodeid"] in reported]
    data = index_data(run, entries, others, late)
    written = [atomic_write_text(root / "index.json", json.dumps(data, indent=1),
                                 what="report index", errors="backslashreplace"),
               atomic_write_text(root / "index.html", index_html(data), what="report index",
                                 errors="backslashreplace")]
    return [os.fspath(p) for p in written]
