"""Where a diagnosis's fix folder sits, as its ATC options name it (``atc_args.txt``, the
printed ``ATC:`` line), and which folder paths ATC refuses.

The config files are named from the folder that holds the fix folder (``fix/keep_dtype.cfg``
for ``--out fix``, ``diagnosis/keep_dtype.cfg`` for the plugin's
``<report dir>/<test>/diagnosis``): copied to the Ascend machine, the folder's options resolve
when atc runs from the folder that holds it, wherever that is (an absolute path, as the plugin
wrote, named a folder only the machine that ran the diagnosis has).

ATC checks the resolved path of ``--keep_dtype`` (GE ``CheckKeepTypeParamValid``),
``--insert_op_conf`` and ``--fusion_switch_file`` (its CANN page, atlasatcparam_16_0053)
against GE's ``CheckInputPathValid``: ASCII letters, digits, ``-``, ``.``, ``_``, ``/`` and the
Chinese characters U+4E00-U+9FA5 only, else E10001 (docs/ascend_backend.md, where the fake atc
applies the same rule).
"""
from __future__ import annotations

import os
import shlex
from typing import Iterable, Tuple

#: GE's rule, as the refusal and the warning name it
ATC_PATH_RULE = ("ATC refuses a config file whose resolved path holds any character but ASCII "
                 "letters, digits, '-', '.', '_', '/' and Chinese characters (GE "
                 "CheckInputPathValid, E10001, for --keep_dtype and --fusion_switch_file)")


def refused_chars(path) -> str:
    """The characters of ``path``'s resolved form that ATC's path check refuses, in order of
    first appearance, each once; "" where it holds none."""
    real = os.path.realpath(os.fspath(path))
    bad = (ch for ch in real if not (ch.isascii() and (ch.isalnum() or ch in "./_-"))
           and not "\u4e00" <= ch <= "\u9fa5")
    return "".join(dict.fromkeys(bad))


def path_problem(path) -> str:
    """Why ATC would refuse config files under ``path`` (``refused_chars``), or ""."""
    bad = refused_chars(path)
    if not bad:
        return ""
    real = os.path.realpath(os.fspath(path))
    return (f"{real!r}, which holds {', '.join(repr(c) for c in bad)}: {ATC_PATH_RULE}")


def folder_parts(out_dir) -> Tuple[str, str]:
    """(the folder holding ``out_dir``, as shown from the working directory; ``out_dir``'s own
    name): the ATC options name config files ``<name>/<file>``, run from the first."""
    full = os.path.abspath(os.fspath(out_dir))
    parent, name = os.path.split(full)
    from .atc_args import show_path

    return show_path(parent) if parent != os.getcwd() else ".", name


def shell_line(args: Iterable[str]) -> str:
    """ATC options joined for a shell: each quoted where the shell would split or read it
    (``--input_shape=a:1,3;b:1`` held a ``;``)."""
    return " ".join(shlex.quote(a) for a in args)
