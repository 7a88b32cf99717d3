"""Did-you-mean: the names closest to one a user mistyped (a store, a
label, a command). Standard library only; used on error paths, so it may
take a few milliseconds on a large store."""

from __future__ import annotations

import difflib
import re
from typing import Iterable

_SEPARATORS = re.compile(r"[\s_\-./:]+")


def _normal(name: str) -> str:
    """Case, and the separators people interchange ("staging db", "staging-db"), ignored."""
    return _SEPARATORS.sub(" ", name.lower()).strip()


def close(word: str, candidates: Iterable[str], limit: int = 3) -> list[str]:
    """Up to `limit` candidates that `word` was probably meant to be, best
    first: the same name up to case and separators, then a name whose last
    path part it is ("widget" for "acme/widget"), then spelling neighbours."""
    names = list(dict.fromkeys(c for c in candidates if c != word))
    wanted = _normal(word)
    if not wanted:
        return []
    by_normal: dict[str, list[str]] = {}
    for name in names:
        by_normal.setdefault(_normal(name), []).append(name)
    found = list(by_normal.get(wanted, []))
    found += [n for n in names if n not in found and _normal(n.rsplit("/", 1)[-1]) == wanted]
    spelled = difflib.get_close_matches(wanted, list(by_normal), n=limit, cutoff=0.6)
    found += [n for key in spelled for n in by_normal[key] if n not in found]
    if len(found) < limit:
        # One word of a longer name, misspelled or cut short ("relase" for "Release process").
        found += [n for key, group in by_normal.items() if _has_word(key, wanted) for n in group if n not in found]
    return found[:limit]


def typo_of(word: str, candidates: Iterable[str]) -> list[str]:
    """The candidates `word` is most likely a slip for, strictly (a name
    that is only similar, such as acme/deploy next to acme/widget, is not):
    the same name up to case and separators, a name whose last path part
    it is, or a spelling at least 85% alike (one or two letters off)."""
    wanted = _normal(word)
    if not wanted:
        return []
    found = []
    for name in dict.fromkeys(c for c in candidates if c != word):
        normal = _normal(name)
        if (normal == wanted or ("/" not in word and _normal(name.rsplit("/", 1)[-1]) == wanted)
                or difflib.SequenceMatcher(None, normal, wanted).ratio() >= 0.85):
            found.append(name)
    return found


def _has_word(name: str, word: str) -> bool:
    if " " in word:
        return False
    for part in name.split():
        if (len(word) >= 3 and part.startswith(word)) or difflib.SequenceMatcher(None, part, word).ratio() >= 0.8:
            return True
    return False


def did_you_mean(found: list[str]) -> str:
    """"; did you mean 'x'?" (or "'x' or 'y'") for names from close(); "" for none."""
    if not found:
        return ""
    return "; did you mean " + " or ".join(repr(n) for n in found) + "?"
