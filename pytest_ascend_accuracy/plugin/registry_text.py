"""How the session's registries (``.sessions/<key>.written``, ``.held``, ``.marked-<worker>``)
store text: UTF-8, read back with ``errors="surrogateescape"``. A test id or path from an
undecodable file name holds lone surrogates U+DC80..U+DCFF (``os.fsdecode``'s): written with
``surrogatepass`` they came back as other characters, so a golden a session wrote under such
a name was never found in its own registry (H102); ``surrogateescape`` writes the original
bytes, which read back as the same text. Any other lone surrogate, which that cannot encode,
is written with ``surrogatepass`` rather than crash the session."""
from __future__ import annotations


def registry_bytes(text: str) -> bytes:
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


def registry_text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


__all__ = ["registry_bytes", "registry_text"]
