"""What a tool hands back: the document written for the model (views.py) as
structured content, and text rendered from that same document, both within
one character cap.

A capped result drops whole items from the end of its lists (best first
stays), then, if one item alone is still too long (a 64 KiB memory), cuts
its longest text. Either way the document gains a `capped` object saying
what was left out and how to ask for less, and the text ends with the same
sentence: an agent never mistakes a cut answer for the whole one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable


@dataclass
class Reply:
    data: dict[str, Any]  # what the model reads (views.py), or {"error": ...}
    render: Callable[[dict[str, Any]], str]  # the text for people and models, from `data`
    list_keys: tuple[str, ...] = ()  # lists that may lose items from the end, in this order
    hint: str = ""  # how to ask for less, when something was left out
    is_error: bool = False

    def text(self) -> str:
        return text_of(self, self.data)


def size(data: dict[str, Any]) -> int:
    return len(json.dumps(data, ensure_ascii=False, separators=(",", ":")))


def text_of(reply: Reply, data: dict[str, Any]) -> str:
    """The rendered text, followed by the truncation sentence when there is one."""
    text = reply.render(data)
    note = data.get("capped")
    return f"{text}\n\n[capped] {note['message']}" if note else text


def fits(reply: Reply, data: dict[str, Any], limit: int) -> bool:
    return size(data) <= limit and len(text_of(reply, data)) <= limit


def cap(reply: Reply, limit: int) -> Reply:
    """`reply` unchanged when it fits in `limit` characters (text and JSON
    each); otherwise a copy holding what fits (support/fitting.py's rule: whole
    items from the end of its lists first, the first item of each staying,
    then its longest text cut), with `capped` filled in."""
    if fits(reply, reply.data, limit):
        return reply
    from ..support import fitting

    keys = [key for key in reply.list_keys if isinstance(reply.data.get(key), list) and reply.data[key]]
    counts = [len(reply.data[key]) for key in keys]

    def document(kept: list[int], cut: dict | None = None) -> tuple[dict, dict]:
        data = dict(reply.data)
        omitted = {}
        for key, n, total in zip(keys, kept, counts):
            data[key] = reply.data[key][:n]
            if n < total:
                omitted[key] = total - n
        data["capped"] = _note(omitted, cut, limit, reply.hint)
        return data, omitted

    kept = fitting.keep(counts, lambda kept: fits(reply, document(kept)[0], limit), least=[1] * len(keys))
    data, omitted = document(kept)
    if not fits(reply, data, limit):
        data, cut = _cut_longest_text(reply, data, omitted, limit)
        data["capped"] = _note(omitted, cut, limit, reply.hint)
    return Reply(data, reply.render, reply.list_keys, reply.hint, reply.is_error)


def _note(omitted: dict[str, int], cut: dict | None, limit: int, hint: str) -> dict[str, Any]:
    parts = [f"{n} {key} left out" for key, n in omitted.items() if n]
    if cut:
        parts.append(f"{cut['field']} cut to {cut['shown']} of {cut['chars']} characters")
    message = f"{'; '.join(parts) or 'output shortened'} to stay within {limit} characters"
    return {"limit_chars": limit, "omitted": dict(omitted), "cut": cut,
            "message": message + (f"; {hint}" if hint else "")}


def _strings(value: Any, path: tuple = ()):
    """(path, text) of every string in a JSON document."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, path + (index,))


def _replace(value: Any, path: tuple, new: str) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _replace(value[head], rest, new)}
    copy = list(value)
    copy[head] = _replace(value[head], rest, new)
    return copy


def _cut_longest_text(reply: Reply, data: dict, omitted: dict, limit: int) -> tuple[dict, dict | None]:
    """`data` with its longest string cut as little as needed to fit."""
    from ..support import fitting

    found = [(path, text) for path, text in _strings({k: v for k, v in data.items() if k != "capped"})]
    if not found:
        return data, None
    path, text = max(found, key=lambda item: len(item[1]))
    field = ".".join(str(p) for p in path)

    def trial(shown: str) -> dict:
        kept = len(text) if shown == text else len(shown) - len(fitting.CUT)
        attempt = _replace(data, path, shown)
        attempt["capped"] = _note(omitted, {"field": field, "shown": kept, "chars": len(text)}, limit, reply.hint)
        return attempt

    shown, kept = fitting.cut(text, lambda candidate: fits(reply, trial(candidate), limit))
    return _replace(data, path, shown), {"field": field, "shown": kept, "chars": len(text)}
