"""What a tool hands back: the CLI's --json document as structured content,
and text rendered from that same document, both within a character cap.

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

CUT = "…"


@dataclass
class Reply:
    data: dict[str, Any]  # the CLI's --json shape
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
    each); otherwise a copy holding what fits, with `capped` filled in."""
    if fits(reply, reply.data, limit):
        return reply
    data = dict(reply.data)
    omitted: dict[str, int] = {}
    for key in reply.list_keys:
        items = data.get(key)
        if not isinstance(items, list) or not items:
            continue
        # At least the best item: if it alone is too long, its text is cut below.
        kept = max(1, _most_items(reply, data, key, items, omitted, limit))
        if kept < len(items):
            omitted[key] = len(items) - kept
            data[key] = items[:kept]
        data["capped"] = _note(omitted, None, limit, reply.hint)
        if fits(reply, data, limit):
            return Reply(data, reply.render, reply.list_keys, reply.hint, reply.is_error)
    data, cut = _cut_longest_text(reply, data, omitted, limit)
    data["capped"] = _note(omitted, cut, limit, reply.hint)
    return Reply(data, reply.render, reply.list_keys, reply.hint, reply.is_error)


def _most_items(reply: Reply, data: dict, key: str, items: list, omitted: dict, limit: int) -> int:
    """The largest k such that the first k items fit (binary search: the
    size grows with k)."""
    low, high = 0, len(items)
    while low < high:
        middle = (low + high + 1) // 2
        trial = {**data, key: items[:middle],
                 "capped": _note({**omitted, key: len(items) - middle}, None, limit, reply.hint)}
        if fits(reply, trial, limit):
            low = middle
        else:
            high = middle - 1
    return low


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
    found = [(path, text) for path, text in _strings({k: v for k, v in data.items() if k != "capped"})]
    if not found:
        return data, None
    path, text = max(found, key=lambda item: len(item[1]))
    field = ".".join(str(p) for p in path)
    low, high = 0, len(text)
    best = _replace(data, path, CUT)
    while low < high:
        middle = (low + high + 1) // 2
        trial = _replace(data, path, text[:middle] + CUT)
        trial["capped"] = _note(omitted, {"field": field, "shown": middle, "chars": len(text)}, limit, reply.hint)
        if fits(reply, trial, limit):
            low, best = middle, trial
        else:
            high = middle - 1
    return best, {"field": field, "shown": low, "chars": len(text)}

