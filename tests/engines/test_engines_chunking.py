"""Chunking documents into windows and collapsing chunk hits back to documents."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankscope.engines import Document, Hit
from rankscope.engines.chunking import check_chunking, chunk_documents, collapse_to_documents
from rankscope.errors import ConfigError


def test_token_windows_with_overlap() -> None:
    doc = Document("a", "w0 w1 w2 w3 w4 w5 w6 w7 w8 w9", "Title", fields={"path": "x.py"})
    chunks = chunk_documents([doc], size=4, overlap=1)
    assert [c.id for c in chunks] == ["a#0", "a#1", "a#2"]
    assert [c.text for c in chunks] == ["w0 w1 w2 w3", "w3 w4 w5 w6", "w6 w7 w8 w9"]
    assert all(c.parent_id == "a" and c.title == "Title" for c in chunks)
    assert all(c.fields == {"path": "x.py"} for c in chunks)


def test_last_window_is_not_a_pure_overlap() -> None:
    chunks = chunk_documents([Document("a", "a b c d e f")], size=4, overlap=2)
    assert [c.text for c in chunks] == ["a b c d", "c d e f"]


def test_short_and_empty_documents_give_one_chunk() -> None:
    chunks = chunk_documents([Document("s", "one two"), Document("e", "")], size=5, overlap=0)
    assert [(c.id, c.text) for c in chunks] == [("s#0", "one two"), ("e#0", "")]


def test_char_windows_do_not_split_words() -> None:
    text = "alpha beta gamma delta epsilon zeta eta theta"
    chunks = chunk_documents([Document("c", text)], size=12, overlap=0, unit="chars")
    assert [c.text for c in chunks] == ["alpha beta", "gamma delta", "epsilon zeta", "eta theta"]


def test_char_windows_overlap_whole_words() -> None:
    text = "alpha beta gamma delta epsilon zeta"
    chunks = chunk_documents([Document("c", text)], size=16, overlap=6, unit="chars")
    # the overlap holds the whole words that fit in 6 characters ("epsilon" does not)
    assert [c.text for c in chunks] == ["alpha beta gamma", "gamma delta", "delta epsilon", "zeta"]


def test_a_word_longer_than_the_window_is_cut() -> None:
    chunks = chunk_documents([Document("c", "x" * 25)], size=10, overlap=0, unit="chars")
    assert [c.text for c in chunks] == ["x" * 10, "x" * 10, "x" * 5]


@pytest.mark.parametrize(
    ("size", "overlap", "unit", "message"),
    [
        (0, 0, "tokens", "positive"),
        (-3, 0, "tokens", "positive"),
        (10, 10, "tokens", "smaller than the chunk size"),
        (10, 12, "chars", "between 0 and 9"),
        (10, -1, "tokens", "non-negative"),
        (10, 2, "words", "'tokens' or 'chars'"),
        (2.5, 0, "tokens", "positive integer"),
    ],
)
def test_bad_chunking_is_refused(size: object, overlap: object, unit: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        check_chunking(size, overlap, unit)


words_st = st.lists(st.text(alphabet="abcdefgh", min_size=1, max_size=8), max_size=60)


@settings(max_examples=150, deadline=None)
@given(words=words_st, size=st.integers(1, 20), data=st.data())
def test_token_chunks_cover_the_text_in_order(
    words: list[str], size: int, data: st.DataObject
) -> None:
    overlap = data.draw(st.integers(0, size - 1))
    chunks = chunk_documents([Document("d", " ".join(words))], size=size, overlap=overlap)
    rebuilt: list[str] = []
    for n, c in enumerate(chunks):
        toks = c.text.split()
        assert len(toks) <= size
        if n > 0:
            assert toks[: min(overlap, len(toks))] == rebuilt[len(rebuilt) - overlap :][: len(toks)]
            toks = toks[overlap:]
        rebuilt.extend(toks)
    assert rebuilt == words


@settings(max_examples=150, deadline=None)
@given(words=words_st, size=st.integers(8, 40), data=st.data())
def test_char_chunks_keep_words_whole(words: list[str], size: int, data: st.DataObject) -> None:
    overlap = data.draw(st.integers(0, size - 1))
    text = " ".join(words)
    chunks = chunk_documents([Document("d", text)], size=size, overlap=overlap, unit="chars")
    seen: list[str] = []
    for c in chunks:
        assert len(c.text) <= size
        for w in c.text.split():
            assert w in words  # no word is cut: every piece is a whole word
        seen.extend(c.text.split())
    # every word occurs in some chunk, in order
    it = iter(seen)
    assert all(any(w == s for s in it) for w in words)


def test_collapse_keeps_the_best_chunk_per_document() -> None:
    hits = [
        Hit("b#2", 9.0),
        Hit("a#0", 7.0),
        Hit("b#0", 6.0),
        Hit("c", 5.0),
        Hit("a#3", 4.0),
        Hit("x#y#1", 3.0),
    ]
    docs = collapse_to_documents(hits, k=10)
    assert [(h.doc_id, h.score) for h in docs] == [
        ("b", 9.0),
        ("a", 7.0),
        ("c", 5.0),
        ("x#y", 3.0),
    ]
    assert [h.doc_id for h in collapse_to_documents(hits, k=2)] == ["b", "a"]


def test_collapse_uses_the_parent_map_when_given() -> None:
    hits = [Hit("p1", 2.0), Hit("p2", 1.0), Hit("p3", 0.5)]
    parents = {"p1": "doc-A", "p2": "doc-A", "p3": "doc-B"}
    docs = collapse_to_documents(hits, k=5, parents=parents)
    assert [(h.doc_id, h.score) for h in docs] == [("doc-A", 2.0), ("doc-B", 0.5)]
