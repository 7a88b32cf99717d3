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
group. A rule of a further file that still does not compile is skipped.
The bundled files are read once, by `python -m thatch_cli.gen`, into
credential_rules.py: a save loads them from bytecode instead of parsing TOML.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from pathlib import Path
from typing import Any

# One rule as data: (id, description, Python pattern, keywords, entropy,
# secret group, stopwords, allowlist patterns). credential_rules.py holds the
# bundled files' rules so, generated from them by `python -m thatch_cli.gen`.
RuleData = tuple[str, str, str, tuple[str, ...], float, int, tuple[str, ...], tuple[str, ...]]


class Rule:
    __slots__ = ("_allow", "_pattern", "allow_sources", "description", "entropy", "generic", "group", "id",
                 "keywords", "source", "stopwords")

    def __init__(self, id: str, description: str, source: str, keywords: tuple[str, ...], entropy: float,
                 group: int, stopwords: tuple[str, ...], allow_sources: tuple[str, ...]) -> None:
        self.id, self.description, self.source, self.keywords = id, description, source, keywords
        self.entropy, self.group, self.stopwords, self.allow_sources = entropy, group, stopwords, allow_sources
        # A rule for any value next to a word (not one token format): it
        # would find words run together in a squeezed or decoded reading.
        self.generic = id.startswith("generic") or id in ("prose-password", "url-password")
        # Compiled when its keywords first occur: compiling all ~250 costs a
        # save that warns about credentials a tenth of a second.
        self._pattern: re.Pattern[str] | None = None
        self._allow: tuple[re.Pattern[str], ...] | None = None

    @property
    def data(self) -> RuleData:
        return (self.id, self.description, self.source, self.keywords, self.entropy, self.group, self.stopwords,
                self.allow_sources)

    @property
    def allow(self) -> tuple[re.Pattern[str], ...]:
        if self._allow is None:
            self._allow = tuple(re.compile(source) for source in self.allow_sources)
        return self._allow

    @property
    def pattern(self) -> re.Pattern[str]:
        if self._pattern is None:
            import warnings

            with warnings.catch_warnings():  # a Go class such as [[:alpha:]-] is only a FutureWarning here
                warnings.simplefilter("ignore", FutureWarning)
                self._pattern = re.compile(self.source)
        return self._pattern

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
        return cut(self.secret)

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

    def __init__(self, rules: list[Rule]) -> None:
        self.rules = rules
        self._always = [rule for rule in rules if not rule.keywords]
        self._by_keyword: dict[str, list[int]] = {}
        for index, rule in enumerate(rules):
            for keyword in rule.keywords:
                self._by_keyword.setdefault(keyword, []).append(index)

    @property
    def skipped(self) -> int:
        """How many rules do not compile."""
        return len(self.rules) - len(_readable(self.rules))

    def scan(self, text: str) -> list[Finding]:
        """Every credential in `text`, also as people and agents disguise
        one: with invisible characters inside, split over adjacent lines,
        spaced out, or hex- or base64-encoded. Those readings only run the
        rules of a token format (a generic rule would find words run
        together), and a secret found more than once counts once."""
        found: dict[tuple[str, str], Finding] = {}
        for variant, generic in _readings(text):
            for finding in self._scan(variant, generic):
                found.setdefault((finding.rule, finding.secret), finding)
        return list(found.values())

    def _scan(self, text: str, generic: bool) -> list[Finding]:
        lowered = text.lower()
        picked = sorted({i for keyword, indexes in self._by_keyword.items() if keyword in lowered for i in indexes})
        found: list[Finding] = []
        for rule in [*self._always, *(self.rules[i] for i in picked)]:
            if generic or not rule.generic:
                found += rule.findings(text, lowered)
        return found


_HEX = re.compile(r"(?<![0-9A-Fa-f])((?:[0-9A-Fa-f]{2}){16,})(?![0-9A-Fa-f])")
_BASE64 = re.compile(r"(?<![A-Za-z0-9+/_-])([A-Za-z0-9+/_-]{24,}={0,2})")
_LINE_BREAK = re.compile(r"[ \t]*\r?\n[ \t]*")


def _readings(text: str) -> list[tuple[str, bool]]:
    """(a reading of `text`, whether generic rules run on it)."""
    from .textsafe import hidden

    plain = "".join(ch for ch in text if ch in "\n\t" or not hidden(ch))
    readings = [(plain, True)]
    if "\n" in plain:
        readings.append((_LINE_BREAK.sub("", plain), False))
    squeezed = "".join(plain.split())
    if squeezed != plain:
        readings.append((squeezed, False))
    readings += [(decoded, False) for decoded in _decoded(plain)]
    return readings


def _decoded(text: str) -> list[str]:
    """The printable text that hex or base64 runs in `text` encode (a
    digest or a commit hash decodes to bytes that are not)."""
    import base64
    import binascii

    out = []
    for match in _HEX.finditer(text):
        out.append(bytes.fromhex(match.group(1)))
    for match in _BASE64.finditer(text):
        run = match.group(1).rstrip("=")
        try:
            out.append(base64.b64decode(run.replace("-", "+").replace("_", "/") + "=" * (-len(run) % 4)))
        except (binascii.Error, ValueError):
            continue
    return [raw.decode("ascii") for raw in out if raw and all(32 <= b < 127 or b in (9, 10) for b in raw)]


def load(extra: str | None = None) -> Scanner:
    """gitleaks' and thatch's rules, plus those of the gitleaks-format file `extra`."""
    from .credential_rules import RULES

    rules = [Rule(*data) for data in RULES]
    if not extra:
        return Scanner(rules)
    # A further file may hold a rule Python cannot read: it is left out
    # (thatch's own files are checked by the tests, and compiled lazily).
    return Scanner(rules + _readable(read_rules(Path(extra).expanduser())))


def read_rules(path: Path) -> list[Rule]:
    """The rules of a gitleaks-format TOML file, as Python reads them (a
    rule whose fields are unusable is left out)."""
    import tomllib

    with open(path, "rb") as fh:
        data = tomllib.load(fh)
    stopwords = tuple(str(w).lower() for w in (data.get("allowlist") or {}).get("stopwords", ()))
    rules: list[Rule] = []
    for spec in data.get("rules", []):
        if "regex" not in spec:  # a rule on file names only (gitleaks' pkcs12-file): a memory has none
            continue
        try:
            rules.append(_rule(spec, stopwords))
        except (KeyError, TypeError, ValueError):
            continue
    return rules


def _rule(spec: dict[str, Any], stopwords: tuple[str, ...]) -> Rule:
    rule_id = str(spec.get("id", "rule"))
    allow = spec.get("allowlist") or {}
    lists = spec.get("allowlists") or ([allow] if allow else [])
    return Rule(rule_id, str(spec.get("description", rule_id)), go_regex(spec["regex"]),
                tuple(str(k).lower() for k in spec.get("keywords", ())), float(spec.get("entropy", 0) or 0),
                int(spec.get("secretGroup", 0) or 0),
                stopwords + tuple(str(w).lower() for a in lists for w in a.get("stopwords", ())),
                tuple(go_regex(r) for a in lists for r in a.get("regexes", ())))


def _readable(rules: list[Rule]) -> list[Rule]:
    good = []
    for rule in rules:
        try:
            rule.pattern  # noqa: B018 (compiles it)
            rule.allow  # noqa: B018
        except re.error:
            continue
        good.append(rule)
    return good


_LOADED: dict[str | None, Scanner] = {}


def cached(extra: str | None = None) -> Scanner:
    """`load(extra)`, once per process (the MCP server and daemon save many memories)."""
    scanner = _LOADED.get(extra)
    if scanner is None:
        scanner = _LOADED[extra] = load(extra)
    return scanner


def warning(label: str, text: str, extra: str | None = None) -> str | None:
    """What a save says when its memory looks like it holds a credential:
    the rule and the secret's first four characters, never more."""
    findings = cached(extra).scan(label + "\n" + text)
    if not findings:
        return None
    found = ", ".join(f"{f.rule}: {f.redacted}" for f in findings[:3])
    return (f"this looks like it holds a credential ({found}); it is saved on this machine only: thatch sync"
            " will not share it (thatch sync --allow LABEL shares it anyway)")


def cut(secret: str) -> str:
    """A secret as it may be shown: its first four characters, never more."""
    return secret[:4] + "…" if len(secret) > 4 else "…"


def redact(text: str, findings: list[Finding]) -> str:
    """`text` with every secret `findings` name cut to four characters."""
    for finding in sorted(findings, key=lambda f: -len(f.secret)):
        text = text.replace(finding.secret, cut(finding.secret))
    return text


_USERINFO = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*://)([^/@\s]+)@")
_QUERY_SECRET = re.compile(r"(?i)([?&](?:[a-z_]*(?:token|key|secret|password|passwd|pwd|auth|sig)[a-z_]*)=)([^&#\s]+)")


def redact_url(url: str | None) -> str | None:
    """A remote URL as it may be shown: a password or token in its user
    part (https://user:TOKEN@host, https://TOKEN@host) or its query cut to
    four characters; a plain user name such as git@ is kept."""
    if not url:
        return url

    def userinfo(match: re.Match[str]) -> str:
        user, _, password = match.group(2).partition(":")
        if password:
            return f"{match.group(1)}{user}:{cut(password)}@"
        # A user name alone is a token when it is long or mixes letters and digits like one.
        looks_like_token = len(user) >= 16 or (any(c.isdigit() for c in user) and len(user) > 8)
        return f"{match.group(1)}{cut(user) if looks_like_token else user}@"

    url = _USERINFO.sub(userinfo, url, count=1)
    return _QUERY_SECRET.sub(lambda m: m.group(1) + cut(m.group(2)), url)
