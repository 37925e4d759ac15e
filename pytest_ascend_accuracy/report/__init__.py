"""Reports of a CompareResult: the failure text, msaccucmp-compatible CSV, JSON and HTML.

The names below are imported from their modules on first use (``core.lazy_exports``).

Layer above ``compare``: may import ``compare`` and everything below it.
"""
from ..core.lazy_exports import lazy_exports

_EXPORTS = {
    ".csv_report": ["write_csv"],
    ".failure_text": ["failure_text", "summary_text"],
    ".html_report": ["write_html"],
    ".json_report": ["write_json"],
}
lazy_exports(__name__, _EXPORTS)
