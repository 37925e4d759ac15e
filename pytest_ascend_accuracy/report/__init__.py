"""Reports of a CompareResult: the failure text, msaccucmp-compatible CSV, JSON and HTML.

Layer above ``compare``: may import ``compare`` and everything below it.
"""
from .csv_report import write_csv  # noqa: F401
from .failure_text import failure_text, summary_text  # noqa: F401
from .html_report import write_html  # noqa: F401
from .json_report import write_json  # noqa: F401

__all__ = ["write_csv", "failure_text", "summary_text", "write_html", "write_json"]
