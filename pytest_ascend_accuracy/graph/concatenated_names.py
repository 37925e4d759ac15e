"""A fused op's name cut into its members' names laid end to end (``conv1relu1`` ->
``conv1``, ``relu1``): ATC and the emulator name a fused op so, and a keep_dtype or per_op
entry naming one is refused with its members (``graph.op_catalogue``)."""
from __future__ import annotations

from typing import Iterable, List, Optional


class ConcatenatedNames:
    """A set of names, and cuts of a text into two or more of them laid end to end (``split``):
    the set and its lengths are worked out once, for callers that cut many texts against one
    set (every fused op of a dump against the golden's names)."""

    def __init__(self, names: Iterable[str]):
        self.known = frozenset(n for n in names if n)
        self._lengths = sorted({len(n) for n in self.known}, reverse=True)

    def __contains__(self, name: str) -> bool:
        return name in self.known

    def split(self, text: str) -> Optional[List[str]]:
        """``text`` cut into two or more of the names (``'Conv@24Add@15Relu@9'`` ->
        ``['Conv@24', 'Add@15', 'Relu@9']``: a fused op's name is its members' names joined),
        using the fewest names (the longest first name among equally short splits); ``None``
        when no such split exists."""
        size = len(text)
        best: List[Optional[List[str]]] = [None] * size + [[]]  # best[i]: fewest for text[i:]
        for i in range(size - 1, -1, -1):
            for length in self._lengths:
                rest = best[i + length] if i + length <= size else None
                if rest is not None and text[i:i + length] in self.known and (
                        best[i] is None or len(rest) + 1 < len(best[i])):
                    best[i] = [text[i:i + length]] + rest
        return best[0] if best[0] is not None and len(best[0]) >= 2 else None


def split_concatenated_names(text: str, names: Iterable[str]) -> Optional[List[str]]:
    """``ConcatenatedNames(names).split(text)``, for one text."""
    return ConcatenatedNames(names).split(text)
