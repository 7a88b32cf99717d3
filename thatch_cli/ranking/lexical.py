"""The lexical ranking: free text to an FTS5 MATCH expression that can
never be a syntax error, ranked by storage/fulltext.py.

Every term is double-quoted (FTS5 then treats it as a plain phrase, whatever
punctuation or operators the user typed) and the terms are OR-ed, so partial
matches still rank and bm25 orders them.

- Identifiers (`thatch_cli/db.py`, `std::move`, `ERR_CONN_RESET`, `--no-verify`)
  are split into the same tokens the unicode61 tokenizer indexes, searched
  both as one phrase (the exact identifier ranks first) and word by word.
- English function words are dropped from the word-by-word terms: an OR-ed
  "what", "did" or "the" matches most memories, drowning the words that
  carry the question and making bm25 score thousands of rows.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: the prompt hook would pay ~2.5 ms to import typing
if TYPE_CHECKING:
    from ..memory.filter import Filter

# What unicode61 keeps as token characters: letters and digits ("_" and all
# punctuation separate tokens).
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
MAX_TERMS = 64  # a pasted page must not become a thousand-term OR query

STOPWORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being below between both
but by can could did do does doing down during each few for from further had has have having he her here hers
herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off on
once only or other our ours ourselves out over own same she should so some such than that the their theirs them
themselves then there these they this those through to too under until up very was we were what when where which
while who whom why will with would you your yours yourself yourselves
also might must shall may cannot us onto upon via yet still ever else even etc however whether whose since
although though unless within without among across per rather quite much many several every either neither
anyone anything anybody someone something somebody everyone everything nothing one ones
""".split())


def quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def terms(text: str) -> list[str]:
    """The phrases to OR together: identifier phrases first, then the words
    that carry meaning (every word when all of them are function words)."""
    phrases: list[str] = []
    words: list[str] = []
    for chunk in text.split():
        tokens = [t.lower() for t in _TOKEN.findall(chunk)]
        if len(tokens) > 1:
            phrases.append(" ".join(tokens))
        words.extend(tokens)
    content = [w for w in words if w not in STOPWORDS] or words
    return list(dict.fromkeys(phrases + content))[:MAX_TERMS]


def fts_query(text: str) -> str | None:
    """The MATCH expression for `text`, or None when it has no searchable word."""
    found = terms(text)
    return _match(found) if found else None


def _match(found: list[str]) -> str:
    return " OR ".join(quote(t) for t in found)


def rank(db, where: Filter, query: str, *, limit: int, weigh: bool) -> tuple[list, float]:
    """The best `limit` keyword matches of `query` among what `where` keeps
    (Hit, best first) and, when `weigh`, the query's summed idf (see fusion.py)."""
    from ..storage import fulltext

    found = terms(query)
    if not found:
        return [], 0.0
    return fulltext.rank(db, where, _match(found), [quote(t) for t in found], limit=limit, weigh=weigh)
