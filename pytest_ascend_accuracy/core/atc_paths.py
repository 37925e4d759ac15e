"""Which paths ATC refuses for the config files it reads.

ATC checks the resolved path of ``--keep_dtype`` (GE ``CheckKeepTypeParamValid``),
``--insert_op_conf`` and ``--fusion_switch_file`` (its CANN page, atlasatcparam_16_0053)
against GE's ``CheckInputPathValid``: ASCII letters, digits, ``-``, ``.``, ``_``, ``/`` and the
Chinese characters U+4E00-U+9FA5 only, else E10001 (docs/ascend_backend.md, where the fake atc
applies the same rule). A diagnosis's fix folder (``triage.fix_folder``) and the ascend
backend's build folder under the cache, where ATC runs and reads them, are checked with it.
"""
from __future__ import annotations

import os

#: GE's rule, as the refusals and the warning name it
ATC_PATH_RULE = ("ATC refuses a config file whose resolved path holds any character but ASCII "
                 "letters, digits, '-', '.', '_', '/' and Chinese characters (GE "
                 "CheckInputPathValid, E10001, for --keep_dtype, --insert_op_conf and "
                 "--fusion_switch_file)")


def allowed(ch: str) -> bool:
    """Whether ATC's path check lets ``ch`` through."""
    return (ch.isascii() and (ch.isalnum() or ch in "./_-")) or "\u4e00" <= ch <= "\u9fa5"


def refused_chars(path) -> str:
    """The characters of ``path``'s resolved form that ATC's path check refuses, in order of
    first appearance, each once; "" where it holds none."""
    real = os.path.realpath(os.fspath(path))
    return "".join(dict.fromkeys(ch for ch in real if not allowed(ch)))


__all__ = ["ATC_PATH_RULE", "allowed", "refused_chars"]
