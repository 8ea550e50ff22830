"""Query terms marked in a passage, as (text, marked) segments the page turns into DOM nodes.

Words are Unicode word characters (``\\w+``), compared case-folded, with a final ``s`` dropped
from words longer than three letters (``tumors`` marks ``tumor``); a short list of English
function words is never marked. The segments join back to the passage exactly.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+")
_FUNCTION_WORDS = (
    "a an and are as at be but by do does did for from has have how i in is it its of on or "
    "that the their there these this to was were what when where which who why will with"
)
STOPWORDS = frozenset(_FUNCTION_WORDS.split(" "))


def _norm(word: str) -> str:
    word = word.casefold()
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def query_terms(query: str) -> frozenset[str]:
    """The normalised words of ``query`` that are marked in passages."""
    return frozenset(
        _norm(w) for w in _WORD.findall(query) if w.casefold() not in STOPWORDS and len(w) > 1
    )


def highlight(query: str, text: str) -> list[tuple[str, bool]]:
    """``text`` cut into runs, each marked when it is a query term; adjacent runs merged."""
    terms = query_terms(query)
    out: list[tuple[str, bool]] = []

    def add(piece: str, marked: bool) -> None:
        if not piece:
            return
        if out and out[-1][1] == marked:
            out[-1] = (out[-1][0] + piece, marked)
        else:
            out.append((piece, marked))

    at = 0
    if terms:
        for match in _WORD.finditer(text):
            if _norm(match.group()) in terms:
                add(text[at : match.start()], False)
                add(match.group(), True)
                at = match.end()
    add(text[at:], False)
    return out


__all__ = ["STOPWORDS", "highlight", "query_terms"]
