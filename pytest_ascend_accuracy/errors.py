"""Error types. Every error that comes from bad input names the file (or key) and the problem."""
from __future__ import annotations

import os
from typing import Optional, Union

PathLike = Union[str, "os.PathLike[str]"]


class AscendAccuracyError(Exception):
    """Base class of every error this package raises on purpose."""


class DumpFormatError(AscendAccuracyError, ValueError):
    """A dump file or directory could not be read: names the file and the problem."""

    def __init__(self, path: Optional[PathLike], problem: str):
        self.path = None if path is None else os.fspath(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}" if self.path else problem)


class FileReplacedError(DumpFormatError):
    """A tensor file replaced after its dump was checked (``dump.pinned``): no compare of it
    may stand, so the compare stops instead of listing it as an unreadable tensor."""


class ConfigError(AscendAccuracyError, ValueError):
    """Bad user configuration (marker argument, YAML suite, option): names where and what."""

    def __init__(self, where: Optional[str], problem: str, *, cli_text: Optional[str] = None):
        self.where = where
        self.problem = problem
        #: the whole message as the ``ascend-accuracy`` command line spells the fix (its
        #: options, not Python keyword arguments), where the two differ
        self.cli_text = cli_text
        super().__init__(f"{where}: {problem}" if where else problem)


class BackendError(AscendAccuracyError, RuntimeError):
    """A backend could not convert or run a model."""


class ConversionError(BackendError):
    """Model conversion (ATC, or the emulator's equivalent) failed."""

    def __init__(self, message: str, *, command=None, log_tail: str = "",
                 code: Optional[str] = None, errors=()):
        self.command = list(command) if command is not None else None
        self.log_tail = log_tail
        self.code = code
        #: every (code, message) error line of the whole output (``log_tail`` is its last lines:
        #: a refusal followed by a long TraceBack lost its code there)
        self.errors = tuple(errors)
        super().__init__(message)


class DumpWriteError(BackendError, OSError):
    """A dump could not be written (full disk, quota, I/O error). Names the file and the reason
    and, for a full disk, the bytes needed and free; an ``OSError`` keeping the write's errno."""

    def __init__(self, path: PathLike, problem: str, *, errno: Optional[int] = None,
                 needed: Optional[int] = None, free: Optional[int] = None):
        OSError.__init__(self, errno, problem)
        self.path = os.fspath(path)
        self.problem = problem
        self.needed = needed
        self.free = free

    def __str__(self) -> str:
        return f"{self.path}: {self.problem}"


class CacheError(AscendAccuracyError, OSError):
    """The conversion/golden cache could not be read or written."""


def closest_text(name, known, *, n: int = 1, cutoff: float = 0.6) -> str:
    """``"; closest: 'cosine'"``: the known names nearest a misspelled ``name`` (difflib), for an
    error that already lists them all; ``""`` when none is near."""
    import difflib

    known = [str(k) for k in known]
    # a name that differs only in case first: difflib compares case, so 'Img_A' was offered
    # 'img_b' and 'X' nothing for 'x' (a trial)
    same = [k for k in known if k.lower() == str(name).lower() and k != str(name)]
    near = same + [k for k in difflib.get_close_matches(str(name), known, n=n, cutoff=cutoff)
                   if k not in same]
    near = near[:max(n, len(same))]
    return ("; closest: " + ", ".join(repr(k) for k in near)) if near else ""
