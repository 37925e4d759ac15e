"""Where a diagnosis's fix folder sits, as its ATC options name it (``atc_args.txt``, the
printed ``ATC:`` line), and which folder paths ATC refuses.

The config files are named from the folder that holds the fix folder (``fix/keep_dtype.cfg``
for ``--out fix``, ``diagnosis/keep_dtype.cfg`` for the plugin's
``<report dir>/<test>/diagnosis``): copied to the Ascend machine, the folder's options resolve
when atc runs from the folder that holds it, wherever that is (an absolute path, as the plugin
wrote, named a folder only the machine that ran the diagnosis has). A file of the user's that
the options name (the AIPP file of ``--insert_op_conf``) is copied into the fix folder and named
the same way (``diagnosis/camera.cfg``; ``copy_names``): by its path from the working directory
it named no file from the folder holding the fix folder, nor on the Ascend machine.

ATC checks the resolved path of the config files it reads against GE's
``CheckInputPathValid`` (``core.atc_paths``).
"""
from __future__ import annotations

import itertools
import os
import shlex
from typing import Dict, Iterable, Mapping, Tuple

from ..core.atc_paths import ATC_PATH_RULE, refused_chars
from ..core.atc_paths import allowed as _allowed

#: the files of a fix folder that its ATC options do not name (``atc_note.txt``: written in
#: place of atc_args.txt for a model ATC does not convert, ``triage.quant_note``)
REPORT_FILES = ("atc_args.txt", "diagnosis.txt", "diagnosis.json", "diagnosis.html",
                "atc_note.txt")


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


def copy_names(user_files: Iterable[Tuple[str, str]]) -> Dict[str, str]:
    """{option: the name of its file's copy in the fix folder} for ``FixAtc.user_files``
    ((option, source path) pairs): the file's own name, each character ATC refuses as ``_``;
    where that is taken (by the folder's own files, or another option's copy: compared case
    folded, as a case-insensitive file system would), ``<option>_<name>``, then numbered."""
    from ..core.modes import FUSION_SWITCH_FILE, KEEP_DTYPE_FILE

    taken = {n.casefold() for n in (KEEP_DTYPE_FILE, FUSION_SWITCH_FILE, *REPORT_FILES)}
    names: Dict[str, str] = {}
    for option, source in user_files:
        own = "".join(ch if _allowed(ch) and ch != "/" else "_"
                      for ch in os.path.basename(os.fspath(source)))
        candidates = itertools.chain((own, f"{option}_{own}"),
                                     (f"{option}_{k}_{own}" for k in itertools.count(2)))
        name = next(c for c in candidates if c.casefold() not in taken)
        taken.add(name.casefold())
        names[option] = name
    return names


def named_files(written: Mapping[str, str]) -> Dict[str, str]:
    """The files of ``written`` ({name: path}, a fix folder's) that its ATC options name: the
    mode's config files and the copies of the user's files; run from the folder holding them."""
    return {name: path for name, path in written.items() if name not in REPORT_FILES}


def shell_line(args: Iterable[str]) -> str:
    """ATC options joined for a shell: each quoted where the shell would split or read it
    (``--input_shape=a:1,3;b:1`` held a ``;``)."""
    return " ".join(shlex.quote(a) for a in args)
