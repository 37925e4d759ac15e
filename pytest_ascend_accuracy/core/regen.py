"""When stored goldens and accuracy baselines may be rewritten: one value for the whole package.

``--accuracy-regen`` and ``--accuracy-regen-all`` become a ``Regen`` once (plugin settings);
the stored-golden policy (``golden.stored``) and the baseline check (``baseline.check``) both
take it. ``Regen`` is a ``str`` enum, so the plain strings ``"none"``, ``"failing"`` and
``"all"`` that library callers pass to ``check_baseline(regen=...)`` still work.
"""
from __future__ import annotations

import difflib
import enum

from ..errors import ConfigError


class Regen(str, enum.Enum):
    """``NONE``: never rewrite an existing file; ``FAILING`` (``--accuracy-regen``): rewrite the
    files of a failed check, which still fails; ``ALL`` (``--accuracy-regen-all``): rewrite every
    file before it is used, and the checks pass against the new files. A missing file is
    written under every policy."""

    NONE = "none"
    FAILING = "failing"
    ALL = "all"

    @classmethod
    def from_flags(cls, regen: bool = False, regen_all: bool = False) -> "Regen":
        """The policy of the two command line flags (``--accuracy-regen-all`` wins)."""
        return cls.ALL if regen_all else cls.FAILING if regen else cls.NONE

    @classmethod
    def parse(cls, value, where: str = "regen") -> "Regen":
        """A ``Regen`` or its name; anything else is a ``ConfigError`` naming the choices."""
        try:
            return cls(value)
        except ValueError:
            names = [m.value for m in cls]
            close = difflib.get_close_matches(str(value), names, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(where, f"regen must be one of {', '.join(names)}, got "
                                     f"{value!r}{hint}") from None

    @property
    def before_use(self) -> bool:
        """Rewrite every file before it is used (``--accuracy-regen-all``)."""
        return self is Regen.ALL

    @property
    def after_failure(self) -> bool:
        """Rewrite the files of a check that failed (``--accuracy-regen``)."""
        return self is Regen.FAILING

    @property
    def flag(self) -> str:
        """The command line flag that asks for this policy ("" for ``NONE``)."""
        return {"none": "", "failing": "--accuracy-regen", "all": "--accuracy-regen-all"}[self.value]

    def __str__(self) -> str:
        return self.value


__all__ = ["Regen"]
