"""How the session's registries (``.sessions/<key>.written``, ``.held``, ``.marked-<worker>``)
store text: UTF-8, read back with ``errors="surrogateescape"``. A test id or path from an
undecodable file name holds lone surrogates U+DC80..U+DCFF (``os.fsdecode``'s): written with
``surrogatepass`` they came back as other characters, so a golden a session wrote under such
a name was never found in its own registry (H102); ``surrogateescape`` writes the original
bytes, which read back as the same text. Any other lone surrogate, which that cannot encode,
is written with ``surrogatepass`` rather than crash the session."""
from __future__ import annotations

import os


def registry_bytes(text: str) -> bytes:
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


def registry_text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def append_line(registry, line: str) -> None:
    """Append ``line`` (ending in a newline) to ``registry``, its folder made: one short
    ``O_APPEND`` write, so whole lines arrive whichever xdist worker writes. OSError where the
    cache is read-only (each caller says what that costs)."""
    registry.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(registry, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, registry_bytes(line))
    finally:
        os.close(fd)


__all__ = ["append_line", "registry_bytes", "registry_text"]
