"""User-supplied pieces of a pre-processing check: raw images from a directory and the
reference pre-processing function named ``MODULE:FN`` (CLI ``--reference``, YAML ``reference:``)."""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from typing import Callable, List

import numpy as np

from ..dump.user_arrays import read_npy
from ..errors import ConfigError


def load_images(directory: str) -> List[np.ndarray]:
    d = Path(directory)
    if not d.is_dir():
        raise ConfigError(directory, "--images: not a directory")
    files = sorted(d.glob("*.npy"))
    if not files:
        raise ConfigError(directory, "--images: no .npy image files in the directory")
    out = []
    for f in files:
        image = read_npy(f, "a readable .npy image")
        if image.dtype != np.uint8:  # named here: the AIPP check knows only its position
            raise ConfigError(str(f), f"--images: not a raw image: AIPP reads uint8 bytes (HWC; "
                                      f"NV12 rows for YUV420SP_U8), this file holds {image.dtype}")
        out.append(image)
    return out


def load_reference(spec: str, base_dir=None, where: str = "--reference") -> Callable[[np.ndarray], np.ndarray]:
    """``MODULE:FN`` (an importable module, or a ``path/to/file.py`` relative to ``base_dir``)."""
    module_name, sep, fn_name = str(spec).rpartition(":")
    if not sep or not module_name or not fn_name:
        raise ConfigError(where, f"expected MODULE:FN, got {spec!r}")
    module = _import(module_name, base_dir, where)
    fn = getattr(module, fn_name, None)
    if not callable(fn):
        import difflib

        names = [n for n in dir(module) if callable(getattr(module, n, None)) and not n.startswith("_")]
        close = difflib.get_close_matches(fn_name, names, n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise ConfigError(where, f"{module_name} has no function {fn_name!r}{hint}")
    return fn


def _import(name: str, base_dir, where: str):
    if name.endswith(".py") or os.sep in name:
        path = Path(name)
        if base_dir is not None and not path.is_absolute():
            path = Path(base_dir) / path
        if not path.is_file():
            from ..core.closest_paths import closest_in_folder
            from ..core.locations import shown

            near = closest_in_folder(path, False, name, (".py",))
            raise ConfigError(where, f"no such file {shown(path, os.getcwd())!r}{near}")
        # under a name of its own (its stem and path): registered as its bare stem it stayed in
        # sys.modules, and a test of the same process importing another folder's ``prep``
        # got this file's module (an NV12 reference fed RGB images: "cannot reshape")
        spec = importlib.util.spec_from_file_location(f"{path.stem}@{path.resolve()}", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # (as an import would: dataclasses look it up)
        spec.loader.exec_module(module)
        return module
    root = os.fspath(base_dir) if base_dir is not None else os.getcwd()
    local = Path(root, *name.split(".")).with_suffix(".py")
    loaded = sys.modules.get(name)
    if (local.is_file() and loaded is not None
            and os.path.realpath(getattr(loaded, "__file__", "") or "") != os.path.realpath(local)):
        # another folder's module of that name was imported first (two suites, each with its
        # own prep.py): this folder's file, not the other's function, and its own siblings
        return _load_beside(name, local, root)
    sys.path.insert(0, root)
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise ConfigError(where, f"cannot import {name!r}: {exc}") from None
    finally:
        if sys.path and sys.path[0] == root:
            sys.path.pop(0)


def _load_beside(name: str, local: Path, root: str):
    """Run ``local`` as a fresh module whose own imports find ``root``'s modules first: the
    modules of ``root`` another folder already put in ``sys.modules`` (its ``helper.py``) are
    set aside meanwhile, and put back after (what the other folder's code imported stays
    what it uses)."""
    real_root = os.path.realpath(root)
    set_aside = {}
    for entry in os.listdir(root):
        stem = entry[:-3] if entry.endswith(".py") else entry
        module = sys.modules.get(stem)
        where = os.path.realpath(getattr(module, "__file__", "") or "") if module else ""
        if module is not None and os.path.dirname(where) != real_root and \
                os.path.dirname(os.path.dirname(where)) != real_root:
            set_aside[stem] = sys.modules.pop(stem)
    sys.path.insert(0, root)
    try:
        spec = importlib.util.spec_from_file_location(f"{name}@{local}", local)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        if sys.path and sys.path[0] == root:
            sys.path.pop(0)
        sys.modules.update(set_aside)
