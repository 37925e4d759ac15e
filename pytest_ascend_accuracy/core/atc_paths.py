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


__all__ = ["ATC_PATH_RULE", "CHECKED_OPTIONS", "allowed", "refused_ascii", "refused_chars"]
