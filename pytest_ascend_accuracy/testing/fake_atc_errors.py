"""The FAKE ATC's failure: one error-manager line (code and message), shared by ``fake_atc`` and
``fake_atc_checks``. ``invalid`` is GE's E10001 in the bracketed form of the real ATC console
logs msit keeps (``E10001: Value [..] for parameter [--x] is invalid. Reason: ...``)."""
from __future__ import annotations


class AtcFailure(Exception):
    """One error-manager line: code and message."""

    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def invalid(option: str, value: str, reason: str) -> AtcFailure:
    return AtcFailure("E10001", f"Value [{value}] for parameter [--{option}] is invalid. "
                                f"Reason: {reason}")
