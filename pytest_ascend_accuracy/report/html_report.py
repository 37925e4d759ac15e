"""Self-contained HTML report: summary, the first failure (at the top, so the page opens on
it), an index of the failing ops, an inline SVG chart of cosine and rel-L2 per operator in
graph order (threshold line, first failure marked), and the full table. The cosine charted and
tabled is the one the verdict judged (``report.figures``: float16 values below its smallest
normal may be counted as equal); a point's tooltip names msaccucmp's plain cosine where it
differs, and the CSV keeps that one.

No JavaScript, no external resources: the page opens offline and from CI artifacts. It fits a
1,400 px window (long names wrap, the chart scales down). Links point only at files next to
the page (the CSV/JSON written with it, the failing ops' tensors copied by
``report.tensor_copies``), never into dump directories that get deleted. Every name and text
from a dump is HTML-escaped; point tooltips are SVG ``<title>`` elements.
"""
from __future__ import annotations

import html
import math
import os
from typing import Dict, List, Mapping, Optional, Sequence, Tuple
from urllib.parse import quote

from ..compare.result import CompareResult, TensorCompare, Verdict, judge_row, tensor_keyed
from ..core.atomic_files import atomic_write_text
from .failure_text import coverage_line, default_hint
from .figures import judged_cosine, plain_cosine_text
from .figures import six_places as _num
from .model_outputs import output_names, outputs_html

_W, _PANEL_H, _PAD_L, _PAD_R, _PAD_T, _GAP = 960, 170, 64, 16, 18, 34
_REL_FLOOR = 1e-7
_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;overflow-wrap:break-word}
h1{font-size:20px;margin:0 0 8px} .pass{color:#17692e} .fail{color:#b3261e}
h2{font-size:16px;margin:16px 0 6px}
table{border-collapse:collapse;font-size:12px;margin-top:12px;width:100%}
th,td{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}
td{white-space:nowrap} td.w{white-space:normal;overflow-wrap:anywhere}
td.n{text-align:right;font-family:ui-monospace,monospace} tr.failed td{background:#fdecea}
tr.unmatched td,tr.ignored td{color:#777} .meta{color:#555;font-size:13px;overflow-wrap:anywhere}
pre{white-space:pre-wrap;overflow-wrap:anywhere}
svg{max-width:100%;height:auto} svg text{font:11px sans-serif;fill:#444}
#first-failure{border:1px solid #b3261e;border-radius:4px;padding:6px 12px;background:#fff8f7}
#first-failure h2{margin-top:4px}
nav.failures ol{max-height:15em;overflow-y:auto;margin:0;padding-left:4em}
nav.failures li{overflow-wrap:anywhere}
td:target{outline:2px solid #b3261e;background:#f9c9c3}
#baseline.fail{border:1px solid #b3261e;border-radius:4px;padding:6px 12px;background:#fff8f7}
"""
#: table columns of names (wrapped anywhere, so the table fits the window); others never wrap
_WRAPPED = (1, 2, 3, 4)
#: failing ops listed in the index (the table has them all)
INDEX_LIMIT = 200
Links = Dict[Tuple[str, str], Tuple[Optional[str], Optional[str]]]


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _series(rows: Sequence[TensorCompare], metric: str) -> List[Optional[float]]:
    """The judged figure of ``metric`` per row (``TensorMetrics.value``: the cosine the verdict
    judged, not msaccucmp's plain one, so a passing row is drawn at or above the threshold
    line, or names in its tooltip the per_op entry that judged it: ``_own_thresholds``)."""
    out = []
    for r in rows:
        v = r.metrics.value(metric) if r.metrics is not None else math.nan
        out.append(None if (v is None or math.isnan(v)) else v)
    return out


def _panel(values, y0: float, scale, label: str, ticks: Sequence[Tuple[float, str]],
           xs: List[float], names: List[str], failed: List[bool],
           threshold: Optional[float], colour: str, tips: Sequence[str] = ()) -> List[str]:
    """One chart panel: axis, ticks, polyline (gaps at NaN), failure dots, threshold line;
    ``tips``: per point, text added to its tooltip ("" for none)."""
    out = [f'<text x="4" y="{y0 - 4:.0f}">{_e(label)}</text>',
           f'<line x1="{_PAD_L}" y1="{y0 + _PANEL_H:.1f}" x2="{_W - _PAD_R}" '
           f'y2="{y0 + _PANEL_H:.1f}" stroke="#bbb"/>']
    for value, text in ticks:
        y = y0 + scale(value)
        out.append(f'<line x1="{_PAD_L - 4}" y1="{y:.1f}" x2="{_W - _PAD_R}" y2="{y:.1f}" '
                   f'stroke="#eee"/><text x="{_PAD_L - 6}" y="{y + 4:.1f}" '
                   f'text-anchor="end">{_e(text)}</text>')
    segment: List[str] = []
    lines = []
    for x, v in zip(xs, values):
        if v is None:
            if segment:
                lines.append(segment)
            segment = []
            continue
        segment.append(f"{x:.1f},{y0 + scale(v):.1f}")
    if segment:
        lines.append(segment)
    for seg in lines:
        out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" '
                   f'points="{" ".join(seg)}"/>')
    for k, (x, v, name, bad) in enumerate(zip(xs, values, names, failed)):
        tip = f" ({tips[k]})" if k < len(tips) and tips[k] else ""
        if v is None:
            out.append(f'<text x="{x:.1f}" y="{y0 + _PANEL_H - 2:.1f}" fill="#b3261e" '
                       f'text-anchor="middle">×<title>{_e(name)}: NaN</title></text>')
            continue
        fill = "#b3261e" if bad else colour
        r = 3 if bad else 2
        out.append(f'<circle cx="{x:.1f}" cy="{y0 + scale(v):.1f}" r="{r}" fill="{fill}">'
                   f'<title>{_e(name)}: {_e(_num(v))}{_e(tip)}</title></circle>')
    if threshold is not None:
        y = y0 + scale(threshold)
        out.append(f'<line x1="{_PAD_L}" y1="{y:.1f}" x2="{_W - _PAD_R}" y2="{y:.1f}" '
                   f'stroke="#b3261e" stroke-dasharray="5,4"/><text x="{_W - _PAD_R}" '
                   f'y="{y - 3:.1f}" text-anchor="end" fill="#b3261e">threshold '
                   f'{_e(_num(threshold))}</text>')
    return out


def _nice_ticks(lo: float, hi: float, most: int = 5) -> List[Tuple[float, str]]:
    """Round-numbered ticks in [lo, hi] (at most ``most``), e.g. 0.8, 0.9, 1."""
    span = hi - lo
    for exp in range(-6, 2):
        for mult in (1, 2, 5):
            step = mult * 10.0 ** exp
            if span / step <= most - 1:
                first = math.ceil(lo / step - 1e-9)
                ticks = []
                k = first
                while k * step <= hi + 1e-12:
                    v = round(k * step, 10)
                    ticks.append((v, f"{v:g}"))
                    k += 1
                return ticks
    return [(lo, f"{lo:g}"), (hi, f"{hi:g}")]


def chart_svg(result: CompareResult, verdict: Verdict) -> str:
    """Cosine (top) and rel-L2 on a log scale (bottom) per compared tensor in graph order."""
    rows = [r for r in result.rows if r.metrics is not None]
    if not rows:
        return "<p>No tensor was compared, so there is nothing to chart.</p>"
    failing = {(f.row.op_name, f.row.slot) for f in verdict.failures}
    n = len(rows)
    span = _W - _PAD_L - _PAD_R
    xs = [_PAD_L + (span * (i + 0.5) / n) for i in range(n)]
    names = [f"#{r.order} {r.label}" for r in rows]
    failed = [(r.op_name, r.slot) in failing for r in rows]
    thr = verdict.policy.default
    cos = _series(rows, "cosine")
    lo = min([v for v in cos if v is not None] + [thr.value if thr.metric == "cosine" else 1.0, 1.0])
    lo = max(-1.0, lo - 0.02 * max(1.0 - lo, 0.05))
    if lo >= 1.0:
        lo = 0.99

    def cos_scale(v):
        return _PANEL_H - (v - lo) / (1.0 - lo) * (_PANEL_H - 10)
    cos_ticks = _nice_ticks(lo, 1.0)
    rel = _series(rows, "rel_l2")
    finite = [v for v in rel if v is not None and not math.isinf(v)]
    top = max(finite + [thr.value if thr.metric == "rel_l2" else _REL_FLOOR, _REL_FLOOR * 10])
    e_hi = math.ceil(math.log10(top))
    e_lo = math.log10(_REL_FLOOR)

    def rel_scale(v):
        v = min(max(v, _REL_FLOOR), 10 ** e_hi)
        return _PANEL_H - (math.log10(v) - e_lo) / (e_hi - e_lo) * (_PANEL_H - 10)
    rel_ticks = [(10.0 ** e, f"1e{e}") for e in range(int(e_lo), e_hi + 1, 2)]
    h = _PAD_T + 2 * _PANEL_H + _GAP + 24
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{h}" '
             f'viewBox="0 0 {_W} {h}" role="img" aria-label="cosine and rel-L2 per operator">']
    own = _own_thresholds(rows, verdict)
    parts += _panel(cos, _PAD_T, cos_scale, "cosine", cos_ticks, xs, names, failed,
                    thr.value if thr.metric == "cosine" else None, "#1f6fb2",
                    [_tip(plain_cosine_text(r.metrics), o) for r, o in zip(rows, own)])
    y2 = _PAD_T + _PANEL_H + _GAP
    parts += _panel([None if v is None else v for v in rel], y2, rel_scale, "rel-L2 (log)",
                    rel_ticks, xs, names, failed,
                    thr.value if thr.metric == "rel_l2" else None, "#8a4fbf",
                    [_tip(plain_cosine_text(r.metrics, "rel_l2"), o) for r, o in zip(rows, own)])
    first = verdict.first_failure
    if first is not None:
        idx = next((i for i, r in enumerate(rows)
                    if (r.op_name, r.slot) == (first.op_name, first.slot)), None)
        if idx is not None:
            x = xs[idx]
            label = first.label
            if len(label) > 48:
                label = label[:22] + "…" + label[-25:]
            # the label stays inside the chart: right of the line, or left of it near the edge
            tx, anchor = (x + 4, "start") if x < _W * 0.55 else (x - 4, "end")
            parts.append(f'<line x1="{x:.1f}" y1="{_PAD_T - 6}" x2="{x:.1f}" '
                         f'y2="{y2 + _PANEL_H:.1f}" stroke="#b3261e" stroke-width="1" '
                         f'stroke-dasharray="2,3"/><text x="{tx:.1f}" y="{_PAD_T - 6 + 10}" '
                         f'text-anchor="{anchor}" fill="#b3261e">first failure: {_e(label)}'
                         f'<title>{_e(first.label)}</title></text>')
    mine = sum(1 for o in own if o)
    note = (f"; {mine} judged by {'its' if mine == 1 else 'their'} per_op threshold, not the "
            f"line: hover {'it' if mine == 1 else 'them'}" if mine else "")
    parts.append(f'<text x="{_PAD_L}" y="{h - 6}">operators in graph order '
                 f'({n} compared tensors{_e(note)})</text></svg>')
    return "\n".join(parts)


def _own_thresholds(rows: Sequence[TensorCompare], verdict: Verdict) -> List[str]:
    """Per row, "judged by per_op KEY: THRESHOLD" where a per_op entry judges it, else "": the
    chart's threshold line is the default's, which such a row need not meet to pass."""
    policy = verdict.policy
    out = []
    for r in rows:
        key = policy.threshold_key(r.names)
        out.append("" if key is None else
                   f"judged by per_op {key!r}: {policy.threshold_for(r.names).describe()}")
    return out


def _tip(text: str, own: str) -> str:
    return "; ".join(t for t in (text, own) if t)


def _row_ids(result: CompareResult) -> Dict[Tuple[str, str], str]:
    """(op name, slot) -> the table row's anchor."""
    return {(r.op_name, r.slot): f"r{i}" for i, r in enumerate(result.rows)}


def _tensor_links(links: Optional[Links], row) -> str:
    pair = (links or {}).get((row.op_name, row.slot))
    if not pair:
        return ""
    out = [f'<a href="{_e(href)}">{side}.npy</a>' for side, href in zip(("actual", "golden"), pair)
           if href]
    return " ".join(out)


def _first_failure(result: CompareResult, verdict: Verdict, links: Optional[Links]) -> str:
    """The first failure in graph order, at the top of the page: what the user reads first."""
    first = verdict.first
    if first is None:
        return ""
    r = first.row
    anchor = _row_ids(result).get((r.op_name, r.slot), "")
    facts = [f"type {r.op_type}" if r.op_type else "", f"{r.dtype} {'x'.join(map(str, r.shape))}",
             f"golden {r.golden_name} {r.golden_slot}".strip() if r.golden_name else "no golden",
             ("original ops: " + ", ".join(r.original_names)) if r.original_names else ""]
    tensors = _tensor_links(links, r)
    return (f'<section id="first-failure"><h2>first failure: <a href="#{anchor}">#{r.order} '
            f'{_e(r.label)}</a></h2><p>{_e(first.reason)}<br>'
            f'<span class="meta">{_e("; ".join(f for f in facts if f))}</span>'
            + (f"<br>tensors: {tensors}" if tensors else "") + "</p></section>")


def _failure_index(result: CompareResult, verdict: Verdict, links: Optional[Links]) -> str:
    """Every failing op in graph order (up to ``INDEX_LIMIT``), each linking to its table row."""
    if not verdict.failures:
        return ""
    ids = _row_ids(result)
    items = []
    for f in verdict.failures[:INDEX_LIMIT]:
        r = f.row
        tensors = _tensor_links(links, r)
        # the op first, the entry wrapped: each was one line cut at the window's edge, and a
        # long reason hid the op's name behind the ellipsis
        items.append(f'<li><a href="#{ids.get((r.op_name, r.slot), "")}">#{r.order} '
                     f'{_e(r.label)}</a>: {_e(f.reason)}'
                     + (f" ({tensors})" if tensors else "") + "</li>")
    more = len(verdict.failures) - INDEX_LIMIT
    tail = f"<p>... and {more} more failing tensors in the table below.</p>" if more > 0 else ""
    return (f'<nav class="failures" id="failing-ops"><h2>failing ops ({len(verdict.failures)})'
            f'</h2><ol>{"".join(items)}</ol>{tail}</nav>')


def _table(result: CompareResult, verdict: Verdict) -> str:
    head = ["#", "op", "type", "original ops", "golden", "dtypes", "shape", "cosine", "rel_l2",
            "max_abs", "max_rel", "NaN/Inf (actual; golden)", "status", "reason / notes"]
    out = ["<table><thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in head)
           + "</tr></thead><tbody>"]
    keyed, outputs = tensor_keyed(result.rows), output_names(result)
    for i, r in enumerate(result.rows):
        status, failure = judge_row(r, verdict.policy, keyed)
        m = r.metrics
        nf = (f"{m.nan_actual}/{m.posinf_actual}/{m.neginf_actual}; "
              f"{m.nan_golden}/{m.posinf_golden}/{m.neginf_golden}") if m else ""
        why = [failure.reason] if failure else []
        if r.reason and (not failure or r.reason not in failure.reason):
            why.append(r.reason)
        if m is not None:
            why += list(m.notes)
        cells = [f"#{r.order}", r.label, r.op_type, ", ".join(r.original_names),
                 f"{r.golden_name} {r.golden_slot}".strip() + (
                     f" = model output {outputs[key]}" if (key := (r.golden_name, r.golden_slot))
                     in outputs else ""),
                 r.dtype + (f" / {r.golden_dtype}" if r.golden_dtype else ""),
                 "x".join(str(d) for d in r.shape)]
        nums = ([_num(judged_cosine(m)), _num(m.value("rel_l2")), _num(m.max_abs),
                 _num(m.value("max_rel"))]
                if m else [""] * 4)
        out.append(f'<tr class="{status}">' + f'<td id="r{i}">{_e(cells[0])}</td>'
                   + "".join(f'<td class="w">{_e(c)}</td>' if k in _WRAPPED else f"<td>{_e(c)}</td>"
                             for k, c in enumerate(cells[1:], 1))
                   + "".join(f'<td class="n">{_e(c)}</td>' for c in nums)
                   + f"<td>{_e(nf)}</td><td>{_e(status)}</td>"
                   + f'<td class="w">{_e("; ".join(why))}</td></tr>')
    out.append("</tbody></table>")
    return "\n".join(out)


def _baseline_head(verdict: Verdict, baseline: Mapping[str, object]) -> List[str]:
    """The verdict area of a test with a per-operator baseline: a failed baseline heads the
    page (the threshold verdict, which passed, follows it); a passed one is a line below."""
    status, line = baseline.get("status", ""), baseline.get("line", "")
    if baseline.get("passed"):
        return [f'<h1 class="{"pass" if verdict.passed else "fail"}">{_e(verdict.describe())}</h1>',
                f'<p id="baseline" class="pass">baseline {_e(status)}: {_e(line)}</p>']
    message = str(baseline.get("message") or "")
    return [f'<h1 class="fail">test FAILED: accuracy baseline {_e(status)}: {_e(line)}</h1>',
            f'<section id="baseline" class="fail"><h2>baseline {_e(status)}</h2>'
            + (f"<pre>{_e(message)}</pre>" if message else "") + "</section>",
            f'<p class="{"pass" if verdict.passed else "fail"}">threshold check: '
            f'{_e(verdict.describe())}</p>']


def html_text(result: CompareResult, verdict: Verdict, *, title: str = "Accuracy report",
              hint=None, links: Optional[Links] = None, files: Sequence[str] = (),
              baseline: Optional[Mapping[str, object]] = None,
              diagnosis: Optional[str] = None, actual_note: Optional[str] = None) -> str:
    """The page; ``hint`` is the terminal's (a text or a ``report.hints.Hint``); ``links``
    the failing tensors copied next to the page (``report.tensor_copies``); ``files`` other
    files next to it to link (the CSV, the JSON); ``baseline`` the per-operator baseline
    check's outcome (``passed``, ``status``, ``line``, ``message``), stated in the verdict
    area: a test its baseline failed is not headed PASSED; ``diagnosis`` the failure's
    ``--accuracy-diagnose`` page (relative), linked under the hint; ``actual_note`` what
    becomes of the actual dump's folder, after its path."""
    cls = "pass" if verdict.passed else "fail"
    summary = _baseline_head(verdict, baseline) if baseline is not None else [
        f'<h1 class="{cls}">{_e(verdict.describe())}</h1>']
    summary += [_first_failure(result, verdict, links),
                f'<p class="meta">actual: {_e(result.actual_root or "(in memory)")}'
                + (f" ({_e(actual_note)})" if actual_note else "") + "<br>"
                f'golden: {_e(result.golden_root or "(in memory)")}<br>'
                f'{_e(coverage_line(result))}'
                + ("<br>files: " + " ".join(f'<a href="{_e(f)}">{_e(f)}</a>' for f in files)
                   if files else "") + "</p>"]
    if not verdict.passed:  # the terminal's hint, word for word
        if hint is not None and not isinstance(hint, str):
            summary.append(f'<pre class="hint">{_e(hint.text())}</pre>')
        else:
            text = hint if hint is not None else default_hint(verdict, result=result)
            summary.append(f"<p>next step: {_e(text)}</p>")
    summary.append(_diagnosis_link(diagnosis))
    summary.append(outputs_html(result, _e, verdict))  # graph outputs, passing too (audit 35 F6)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>\n"
            + "\n".join(summary) + "\n" + _failure_index(result, verdict, links) + "\n"
            + chart_svg(result, verdict) + "\n"
            + _table(result, verdict) + "\n</body></html>\n")


def _diagnosis_link(page: Optional[str]) -> str:
    """The line linking a failure's ``--accuracy-diagnose`` page and its fix files."""
    if not page:
        return ""
    return (f'<p id="diagnosis">diagnosis (--accuracy-diagnose): <a href="{_e(quote(page))}">'
            f'{_e(page)}</a> (its fix files and atc_args.txt lie beside it)</p>')


def write_html(result: CompareResult, path, verdict: Verdict, *, title: str = "Accuracy report",
               hint=None, links: Optional[Links] = None, files: Sequence[str] = (),
               baseline: Optional[Mapping[str, object]] = None,
               diagnosis: Optional[str] = None, actual_note: Optional[str] = None) -> str:
    """Write the self-contained HTML page atomically; returns the path."""
    text = html_text(result, verdict, title=title, hint=hint, links=links, files=files,
                     baseline=baseline, diagnosis=diagnosis, actual_note=actual_note)
    return os.fspath(atomic_write_text(path, text, what="HTML report", errors="backslashreplace"))


def dataset_html_text(heading: str, passed: bool, figures: Sequence[Tuple[str, str]], *,
                      title: str = "Dataset accuracy", result: Optional[CompareResult] = None,
                      verdict: Optional[Verdict] = None, links: Optional[Links] = None,
                      traced: str = "", diagnosis: Optional[str] = None,
                      flipped: Sequence[str] = ()) -> str:
    """A dataset check's page: its verdict line, a table of figures and, when a sample was
    traced (``traced`` says which and why), that sample's first failure, the index of its
    failing ops (``links``: their tensors copied next to the page), its per-operator chart and
    table, as a check's own page shows them; ``diagnosis`` as ``html_text`` takes it;
    ``flipped``: every flipped sample, listed at the end (the figures name the first few)."""
    # values wrap: a list of 300 flipped samples ran the page 9,250 px wide
    rows = "".join(f'<tr><th>{_e(k)}</th><td class="w">{_e(v)}</td></tr>' for k, v in figures)
    body = [f'<h1 class="{"pass" if passed else "fail"}">{_e(heading)}</h1>',
            f"<table><tbody>{rows}</tbody></table>", _diagnosis_link(diagnosis)]
    if result is not None and verdict is not None:
        body += [f"<h2>{_e(traced or 'traced sample, every operator compared')}</h2>",
                 _first_failure(result, verdict, links), _failure_index(result, verdict, links),
                 chart_svg(result, verdict), _table(result, verdict)]
    if flipped:
        body += [f'<h2 id="flipped">flipped samples ({len(flipped)})</h2>',
                 f'<p class="meta">{_e(", ".join(flipped))}</p>']
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>\n"
            + "\n".join(b for b in body if b) + "\n</body></html>\n")


def write_dataset_html(path, heading: str, passed: bool, figures: Sequence[Tuple[str, str]],
                       **kwargs) -> str:
    """Write ``dataset_html_text`` atomically; returns the path."""
    return os.fspath(atomic_write_text(path, dataset_html_text(heading, passed, figures, **kwargs),
                                       what="HTML report", errors="backslashreplace"))
