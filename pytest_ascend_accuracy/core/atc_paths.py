"""Which paths ATC refuses for the model and the config files it reads.

ATC checks the resolved path of ``--model`` and ``--weight`` (GE ``main.cc``),
``--keep_dtype`` (``CheckKeepTypeParamValid``), ``--insert_op_conf`` and
``--fusion_switch_file`` (its CANN page, atlasatcparam_16_0053) against GE's
``CheckInputPathValid``: ASCII letters, digits, ``-``, ``.``, ``_``, ``/`` and the Chinese
characters U+4E00-U+9FA5 only, else E10001 (docs/ascend_backend.md, where the fake atc applies
the same rule). A diagnosis's fix folder (``triage.fix_folder``) is checked with it. The ascend
backend refuses up front only the ASCII characters outside the set (``refused_ascii``): older
GE releases match the path with a POSIX regex in the C locale, where other non-ASCII bytes pass
(a review ran GE's pattern through regcomp: ``josé`` passes), so ATC judges those itself.

The emulator stands in for ATC, and a model under ``with spaces/my model/`` passed there while
the fake ATC stopped with E10001 and the ascend backend refused it (H337). Where a model lies is
a fact of this machine, not of the model (a device machine may hold it elsewhere), so the
emulator does not refuse it: each of its conversions warns (``AtcPathWarning``,
``path_warning``) of the same ASCII characters the ascend backend refuses, at the test's line.
Its text starts with ``PATH_WARNING_PREFIX`` whatever the path, a filter by message
(``-W 'ignore:model path ATC refuses'``) silences it and loads on any version.
"""
from __future__ import annotations

import os

#: GE's rule, as the refusals and the warning name it
ATC_PATH_RULE = ("ATC refuses a model or config file whose resolved path holds any character "
                 "but ASCII letters, digits, '-', '.', '_', '/' and Chinese characters (GE "
                 "CheckInputPathValid, E10001, for --model, --weight, --keep_dtype, "
                 "--insert_op_conf and --fusion_switch_file)")
#: the config-file options ATC checks so (others it reads without the check)
CHECKED_OPTIONS = ("keep_dtype", "insert_op_conf", "fusion_switch_file")


#: how every ``path_warning`` text starts: a literal prefix (no regex or -W special
#: characters) for pytest's ``-W``/``filterwarnings`` and Python's ``-W``/``PYTHONWARNINGS``
PATH_WARNING_PREFIX = "model path ATC refuses"


class AtcPathWarning(UserWarning):
    """A model converted on the emulator whose resolved path ATC refuses (``path_warning``)."""


def allowed(ch: str) -> bool:
    """Whether ATC's path check lets ``ch`` through."""
    return (ch.isascii() and (ch.isalnum() or ch in "./_-")) or "\u4e00" <= ch <= "\u9fa5"


def refused_chars(path) -> str:
    """The characters of ``path``'s resolved form that ATC's path check refuses, in order of
    first appearance, each once; "" where it holds none."""
    real = os.path.realpath(os.fspath(path))
    return "".join(dict.fromkeys(ch for ch in real if not allowed(ch)))


def refused_ascii(path) -> str:
    """``refused_chars`` of ``path``, its ASCII ones only (where every GE release agrees)."""
    return "".join(ch for ch in refused_chars(path) if ch.isascii())


def path_warning(label: str, model) -> str:
    """The ``AtcPathWarning`` text for the model ``label`` read from ``model`` (a path; other
    models, a ModelProto or bytes, have none), or "" where ATC takes its path: the ASCII
    characters ``refused_ascii`` finds, as the ascend backend refuses them before ATC runs."""
    if not isinstance(model, (str, os.PathLike)):
        return ""
    bad = refused_ascii(model)
    if not bad:
        return ""
    return (f"{PATH_WARNING_PREFIX}, in model {label!r}: its resolved path "
            f"{os.path.realpath(os.fspath(model))!r} holds {', '.join(repr(c) for c in bad)}, "
            f"and {ATC_PATH_RULE}. The emulator converted it as if ATC took it; on an NPU the "
            f"ascend backend refuses it before ATC runs (ATC itself stops with E10001): move or "
            f"copy the model (with its external data files, if any) to a folder whose path "
            f"holds none of them, or rename the folders or the file (a link does not help: "
            f"ATC checks where it resolves). Where the NPU machine keeps the model at a path "
            f"ATC takes, silence this by its message: -W 'ignore:{PATH_WARNING_PREFIX}' "
            f"(pytest, or python; in the ini: filterwarnings = ignore:{PATH_WARNING_PREFIX}; "
            f"for the ascend-accuracy command: PYTHONWARNINGS='ignore:{PATH_WARNING_PREFIX}')")


__all__ = ["ATC_PATH_RULE", "AtcPathWarning", "CHECKED_OPTIONS", "PATH_WARNING_PREFIX",
           "allowed", "path_warning", "refused_ascii", "refused_chars"]
