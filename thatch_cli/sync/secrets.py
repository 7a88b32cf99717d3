"""Holding back credentials before a memory is shared, gitleaks-style: per
rule a keyword prefilter (lower-cased substrings; most memories skip every
regex), a regular expression, and an entropy floor on the matched secret,
so an ordinary note with a commit hash or an id passes.

Rules are read in gitleaks' format: gitleaks' own maintained set
(gitleaks.toml, MIT, vendored with its licence and the commit it comes
from), thatch's (secret_rules.toml: formats gitleaks does not cover, and
the generic ones tuned for prose) and, when setting sync.secret_rules names
one, a further file, such as a newer gitleaks config. Go's regular expressions
allow a flag group such as `(?i)` in mid-pattern, which Python does not:
such a flag is turned into a scoped group up to the end of its enclosing
group. A rule that still does not compile is skipped and counted.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
RULES_FILES = (HERE / "gitleaks.toml", HERE / "secret_rules.toml")


class Rule:
    __slots__ = ("allow", "description", "entropy", "group", "id", "keywords", "pattern", "stopwords")

    def __init__(self, spec: dict, stopwords: tuple[str, ...]) -> None:
        self.id = str(spec.get("id", "rule"))
        self.description = str(spec.get("description", self.id))
        self.pattern = re.compile(go_regex(spec["regex"]))
        self.keywords = tuple(str(k).lower() for k in spec.get("keywords", ()))
        self.entropy = float(spec.get("entropy", 0) or 0)
        self.group = int(spec.get("secretGroup", 0) or 0)
        allow = spec.get("allowlist") or {}
        lists = spec.get("allowlists") or ([allow] if allow else [])
        self.stopwords = stopwords + tuple(str(w).lower() for a in lists for w in a.get("stopwords", ()))
        self.allow = tuple(re.compile(go_regex(r)) for a in lists for r in a.get("regexes", ()))

    def secret(self, match: re.Match[str]) -> str:
        if self.group and self.group <= (match.re.groups or 0):
            return match.group(self.group) or ""
        return next((g for g in match.groups() if g), match.group(0))

    def findings(self, text: str, lowered: str) -> list[Finding]:
        """What this rule finds in `text` (its keywords are the caller's prefilter)."""
        found = []
        for match in self.pattern.finditer(text):
            secret = self.secret(match)
            if not secret or entropy(secret) < self.entropy:
                continue
            low = secret.lower()
            if any(word in low for word in self.stopwords) or any(a.search(secret) for a in self.allow):
                continue
            found.append(Finding(self.id, self.description, secret))
        return found


class Finding:
    __slots__ = ("description", "rule", "secret")

    def __init__(self, rule: str, description: str, secret: str) -> None:
        self.rule, self.description, self.secret = rule, description, secret

    @property
    def redacted(self) -> str:
        """The secret's first four characters, never more."""
        return self.secret[:4] + "…" if len(self.secret) > 4 else "…"

    def to_json(self) -> dict:
        return {"rule": self.rule, "description": self.description, "excerpt": self.redacted}


def entropy(text: str) -> float:
    """Shannon entropy in bits per character."""
    if not text:
        return 0.0
    counts = Counter(text)
    total = len(text)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


def go_regex(pattern: str) -> str:
    """A Go (RE2) pattern as Python reads it: a flag group such as `(?i)`
    after the start holds to the end of its enclosing group (across `|` too)
    in Go, so it becomes scoped groups `(?i:...)` closed and reopened
    around each `|` and closed with the group; `\\z` becomes `\\Z`."""
    pattern = pattern.replace(r"\z", r"\Z")
    out: list[str] = []
    frames: list[list[str]] = [[]]  # per open group: the flags opened in it
    i, in_class = 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
            skip = 2 if pattern[i + 1:i + 3] == "^]" else 1 if pattern[i + 1:i + 2] == "]" else 0
            out.append(pattern[i:i + 1 + skip])
            i += 1 + skip
            continue
        elif ch == "(":
            flags = re.match(r"\(\?([a-zA-Z-]+)\)", pattern[i:])
            if flags and i > 0:
                frames[-1].append(flags.group(1))
                out.append(f"(?{flags.group(1)}:")
                i += flags.end()
                continue
            frames.append([])
        elif ch == ")" and len(frames) > 1:
            out.append(")" * len(frames.pop()))
        elif ch == "|" and frames[-1]:
            out.append(")" * len(frames[-1]) + "|" + "".join(f"(?{f}:" for f in frames[-1]))
            i += 1
            continue
        out.append(ch)
        i += 1
    out.append(")" * len(frames[0]))
    return "".join(out)


class Scanner:
    """Rules indexed by keyword: each distinct keyword is looked for once per
    text (gitleaks' rules share many), and only the rules of the keywords
    found run their expressions."""

    def __init__(self, rules: list[Rule], skipped: int = 0) -> None:
        self.rules, self.skipped = rules, skipped
        self._always = [rule for rule in rules if not rule.keywords]
        self._by_keyword: dict[str, list[int]] = {}
        for index, rule in enumerate(rules):
            for keyword in rule.keywords:
                self._by_keyword.setdefault(keyword, []).append(index)

    def scan(self, text: str) -> list[Finding]:
        lowered = text.lower()
        picked = sorted({i for keyword, indexes in self._by_keyword.items() if keyword in lowered for i in indexes})
        found: list[Finding] = []
        for rule in [*self._always, *(self.rules[i] for i in picked)]:
            found += rule.findings(text, lowered)
        return found


def load(extra: str | None = None) -> Scanner:
    """gitleaks' and thatch's rules, plus those of the gitleaks-format file `extra`."""
    import tomllib
    import warnings

    rules: list[Rule] = []
    skipped = 0
    for path in [*RULES_FILES, *([Path(extra).expanduser()] if extra else [])]:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
        stopwords = tuple(str(w).lower() for w in (data.get("allowlist") or {}).get("stopwords", ()))
        for spec in data.get("rules", []):
            if "regex" not in spec:  # a rule on file names only (gitleaks' pkcs12-file): a memory has none
                continue
            try:
                with warnings.catch_warnings():  # a Go class such as [[:alpha:]-] is only a FutureWarning here
                    warnings.simplefilter("ignore", FutureWarning)
                    rules.append(Rule(spec, stopwords))
            except (re.error, KeyError, TypeError, ValueError):
                skipped += 1
    return Scanner(rules, skipped)
