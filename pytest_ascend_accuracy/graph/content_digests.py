"""Cache keys' content digests: a model's (its file and external data files) and inputs'.

``model_digest`` of a file remembers, for this process, the digest it computed with the
files' identity and times (device, inode, size, modification and change times in ns, read
through an open file so that NFS revalidates them): a check digests its model twice, golden and
conversion, and PP-OCRv4 det took 8.6 ms each (listing its external data files parsed the
model; a model file without the bytes ``location``, the key of every external data entry, is
not parsed now). It is remembered under the absolute path, and only when nothing changed while
it was hashed and every file was last modified or changed (mtime or ctime: ctime cannot be set back)
``SETTLED_S`` seconds or more before: a file system's clock advances in ticks, so a file
rewritten within one tick of being stamped, at the same size, would keep its times (git's
"racily clean" files, handled the same way). A file changed since is hashed again.
``model_sha256`` (what baselines and stored goldens record) is remembered the same way, apart.
"""
from __future__ import annotations

import os
import threading
import time
from typing import Dict, List, Mapping, Optional, Tuple

import numpy as np

from ..errors import ConfigError

#: a file modified or changed (mtime, ctime) less than this many seconds before it was stamped
#: is not remembered
SETTLED_S = 2.0

_Stamp = Tuple[int, int, int, int, int]
#: (absolute path, algorithm) -> (its files, their stamps, digest); one entry per model file
#: and algorithm (the cache's ``model_digest``, ``model_sha256``) a process checks
_KNOWN: Dict[Tuple[str, str], Tuple[List[str], List[_Stamp], str]] = {}
_LOCK = threading.Lock()
_now = time.time_ns  # the clock the settled rule reads (tests move it)


def _new_lock() -> None:  # a child forked while another thread held the lock gets a free one
    global _LOCK
    _LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_lock)


def _content_hasher():
    """The hash of cache keys' content digests: the cache's manifest algorithm (xxh3_128, ~9x
    sha256 here: 9.6 against 1.1 GB/s, and a check digests its model at least twice, golden
    and conversion). Not cryptographic: it tells a user's changed model or inputs from the ones
    a cache entry was built from, which is all a key needs."""
    from ..core.cache import HASH, new_hasher

    return HASH, new_hasher(HASH)


def _stamp(path: str) -> _Stamp:
    with open(path, "rb") as f:  # an open revalidates an NFS client's cached attributes
        st = os.fstat(f.fileno())
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def model_digest(model) -> str:
    """``"<algorithm>:<hex>"`` of the model's bytes: the file's bytes and its external data
    files' for a path, the serialization otherwise."""
    from .onnxruntime_version import require_onnx

    onnx = require_onnx()  # (a ConfigError naming the extra where onnx is not installed)
    name, h = _content_hasher()
    if isinstance(model, onnx.ModelProto):
        h.update(model.SerializeToString())
    elif isinstance(model, (bytes, bytearray)):
        h.update(bytes(model))
    else:
        return _file_digest(model, name, h)
    return f"{name}:{h.hexdigest()}"


def _file_digest(model, name: str, h) -> str:
    """``"<name>:<hex>"`` of the model file ``model`` and its external data files (first-use
    order) fed to ``h``, remembered per (absolute path, ``name``) while their stamps hold."""
    path = os.path.abspath(os.fspath(model))  # its data files are named absolute too
    if not os.path.isfile(path):
        raise ConfigError(os.fspath(model), "ONNX model file not found")
    known = _remembered((path, name))
    if known is not None:
        return known
    from .onnx_graph import external_data_files

    try:
        started = _now()
        first = _stamp(path)  # before its data files are listed from it
        refers = _hash_file(path, h, _LOCATION)
        # no "location" in its bytes: no external data entry (each names one), so no data
        # files, and no parse of the model to list them (8 ms for PP-OCRv4 det)
        parts = [path] + (external_data_files(path) if refers else [])
        stamps = [first] + [_stamp(p) for p in parts[1:]]
        for part in parts[1:]:
            _hash_file(part, h)
        digest = f"{name}:{h.hexdigest()}"
        settled = started - max(max(s[3], s[4]) for s in stamps) >= SETTLED_S * 1e9
        if settled and [_stamp(p) for p in parts] == stamps:
            with _LOCK:
                _KNOWN[(path, name)] = (parts, stamps, digest)
    except OSError as exc:
        raise ConfigError(path, f"cannot read ONNX model ({exc.strerror or exc})") from exc
    return digest


#: the key every ONNX external data entry has (``StringStringEntryProto``, stored as is)
_LOCATION = b"location"


def _hash_file(path: str, h, look_for: bytes = b"") -> bool:
    """Feed the bytes of ``path`` to ``h``; whether ``look_for`` occurs in them."""
    found, keep, tail = not look_for, max(len(look_for) - 1, 0), b""
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
            if not found:
                found = look_for in tail + block[:keep] or look_for in block
                tail = block[-keep:] if keep else b""
    return found


def _remembered(key: Tuple[str, str]):
    """The digest remembered for ``key`` (absolute path, algorithm) when none of its files
    changed since; else None."""
    with _LOCK:
        known = _KNOWN.get(key)
    if known is None:
        return None
    parts, stamps, digest = known
    try:
        if [_stamp(p) for p in parts] == stamps:
            return digest
    except OSError:
        pass
    with _LOCK:
        _KNOWN.pop(key, None)
    return None


def forget_digests() -> None:
    """Forget every remembered digest (the next ``model_digest`` of each file hashes it)."""
    with _LOCK:
        _KNOWN.clear()


def model_sha256(model) -> Optional[str]:
    """sha256 of a model file's bytes followed by its ONNX external data files' bytes, in the
    order the model first uses them (``cat model.onnx model.onnx.data | sha256sum``): a model
    without external data gives what ``sha256sum model.onnx`` prints (records written before
    stay valid), and retrained weights kept in ``model.onnx.data`` change it though the
    ``.onnx`` bytes do not. An in-memory model: sha256 of its serialisation (bytes, or a
    ``ModelProto``); None for anything else. What baselines and stored goldens record of their
    model (``model_digest`` is the cache's key); remembered by file stamps as ``model_digest``."""
    import hashlib

    if isinstance(model, (str, os.PathLike)):
        return _file_digest(model, "sha256", hashlib.sha256()).split(":", 1)[1]
    if isinstance(model, (bytes, bytearray)):
        return hashlib.sha256(bytes(model)).hexdigest()
    serialize = getattr(model, "SerializeToString", None)
    return hashlib.sha256(serialize()).hexdigest() if serialize is not None else None


def inputs_digest(inputs: Mapping[str, np.ndarray]) -> str:
    """``"<algorithm>:<hex>"`` over input names, dtypes, shapes and bytes (sorted by name)."""
    algorithm, h = _content_hasher()
    for name in sorted(inputs):
        arr = np.ascontiguousarray(inputs[name])
        h.update(f"{name}|{arr.dtype.str}|{arr.shape}|".encode())
        h.update(arr.tobytes())
    return f"{algorithm}:{h.hexdigest()}"


__all__ = ["model_sha256", "SETTLED_S", "forget_digests", "inputs_digest", "model_digest"]
