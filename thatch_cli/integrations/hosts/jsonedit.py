"""Editing a JSON file the way a person would: insert or remove one member
or one array element and leave every other byte as it was (indentation,
key order, spacing, the trailing newline).

The text is parsed once per edit into spans (where each value, key and
member starts and ends); an edit is a splice of new text at a span, indented
like its neighbours. Removal is the exact inverse of insertion, so setup
followed by uninstall gives the original bytes back.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, NoReturn

KeyPath = tuple  # keys (str) and indexes (int) from the document root


class Malformed(ValueError):
    """The text is not one JSON object (with where it went wrong)."""


@dataclass
class Node:
    start: int
    end: int  # one past the last character
    value: Any = None
    members: list["Member"] = field(default_factory=list)  # objects
    items: list["Node"] = field(default_factory=list)  # arrays
    kind: str = "scalar"


@dataclass
class Member:
    key: str
    start: int  # the opening quote of the key
    node: Node


_WHITESPACE = " \t\n\r"


class _Parser:
    def __init__(self, text: str) -> None:
        self.text, self.pos = text, 0

    def fail(self, what: str) -> NoReturn:
        line = self.text.count("\n", 0, self.pos) + 1
        column = self.pos - (self.text.rfind("\n", 0, self.pos) + 1) + 1
        raise Malformed(f"{what} at line {line}, column {column}")

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in _WHITESPACE:
            self.pos += 1

    def value(self) -> Node:
        self.skip()
        if self.pos >= len(self.text):
            self.fail("unexpected end of text")
        char = self.text[self.pos]
        if char == "{":
            return self.obj()
        if char == "[":
            return self.array()
        start = self.pos
        try:
            value, end = json.JSONDecoder().raw_decode(self.text, self.pos)
        except json.JSONDecodeError as exc:
            self.pos = exc.pos
            self.fail(exc.msg)
        self.pos = end
        return Node(start, end, value)

    def obj(self) -> Node:
        node = Node(self.pos, 0, kind="object")
        self.pos += 1
        self.skip()
        if self.text.startswith("}", self.pos):
            self.pos += 1
            node.end = self.pos
            return node
        while True:
            self.skip()
            key_start = self.pos
            if not self.text.startswith('"', self.pos):
                self.fail("expected a quoted key")
            key = self.value().value
            self.skip()
            if not self.text.startswith(":", self.pos):
                self.fail("expected ':'")
            self.pos += 1
            if key in {m.key for m in node.members}:
                self.fail(f"duplicate key {key!r}")
            node.members.append(Member(key, key_start, self.value()))
            self.skip()
            if self.text.startswith(",", self.pos):
                self.pos += 1
                continue
            if self.text.startswith("}", self.pos):
                self.pos += 1
                node.end = self.pos
                return node
            self.fail("expected ',' or '}'")

    def array(self) -> Node:
        node = Node(self.pos, 0, kind="array")
        self.pos += 1
        self.skip()
        if self.text.startswith("]", self.pos):
            self.pos += 1
            node.end = self.pos
            return node
        while True:
            node.items.append(self.value())
            self.skip()
            if self.text.startswith(",", self.pos):
                self.pos += 1
                continue
            if self.text.startswith("]", self.pos):
                self.pos += 1
                node.end = self.pos
                return node
            self.fail("expected ',' or ']'")


def parse(text: str) -> Node:
    """The span tree of a JSON object document; Malformed otherwise."""
    parser = _Parser(text)
    root = parser.value()
    parser.skip()
    if parser.pos != len(text):
        parser.fail("extra text after the document")
    if root.kind != "object":
        raise Malformed("the document is not a JSON object")
    return root


def plain(node: Node) -> Any:
    """The Python value of a node."""
    if node.kind == "object":
        return {m.key: plain(m.node) for m in node.members}
    if node.kind == "array":
        return [plain(item) for item in node.items]
    return node.value


def find(root: Node, path: KeyPath) -> Node | None:
    node = root
    for step in path:
        if isinstance(step, int):
            if node.kind != "array" or not 0 <= step < len(node.items):
                return None
            node = node.items[step]
        else:
            member = next((m for m in node.members if m.key == step), None) if node.kind == "object" else None
            if member is None:
                return None
            node = member.node
    return node


def at(root: Node, path: KeyPath) -> Node:
    """The node at `path`, which must be there (KeyError otherwise)."""
    node = find(root, path)
    if node is None:
        raise KeyError(path)
    return node


# -- layout ------------------------------------------------------------------------------


def indent_unit(text: str) -> str:
    """The file's indentation step (the first indented line's), default two spaces."""
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            return line[: len(line) - len(stripped)]
    return "  "


def line_indent(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    line = text[start:pos]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _one_line(text: str, node: Node) -> bool:
    return "\n" not in text[node.start:node.end]


def render(value: Any, base: str, unit: str, compact: bool) -> str:
    if compact:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return json.dumps(value, ensure_ascii=False, indent=unit).replace("\n", "\n" + base)


def _insert(text: str, container: Node, piece: str) -> str:
    """`piece` (a member or element, already rendered) added last in `container`."""
    unit = indent_unit(text)
    children = container.members or container.items
    if children:
        last = children[-1]
        last_end = (last.node if isinstance(last, Member) else last).end
        if _one_line(text, container):
            return text[:last_end] + ", " + piece + text[last_end:]
        base = line_indent(text, children[-1].start)
        return text[:last_end] + ",\n" + base + piece + text[last_end:]
    base = line_indent(text, container.start)
    inner = base + unit
    return text[:container.start + 1] + "\n" + inner + piece + "\n" + base + text[container.end - 1:]


def _child_base(text: str, container: Node) -> tuple[str, bool]:
    """(indentation of a new child's lines, whether the container is written on one line)."""
    children = container.members or container.items
    if children and _one_line(text, container):
        return "", True
    if children:
        return line_indent(text, children[-1].start), False
    return line_indent(text, container.start) + indent_unit(text), False


def add_member(text: str, path: KeyPath, key: str, value: Any) -> str:
    """`text` with `key: value` added last in the object at `path` (which must lack `key`)."""
    container = find(parse(text), path)
    if container is None or container.kind != "object":
        raise KeyError(path)
    base, compact = _child_base(text, container)
    piece = json.dumps(key, ensure_ascii=False) + ": " + render(value, base, indent_unit(text), compact)
    return _insert(text, container, piece)


def append_item(text: str, path: KeyPath, value: Any) -> str:
    """`text` with `value` appended to the array at `path`."""
    container = find(parse(text), path)
    if container is None or container.kind != "array":
        raise KeyError(path)
    base, compact = _child_base(text, container)
    return _insert(text, container, render(value, base, indent_unit(text), compact))


def _remove_span(text: str, container: Node, index: int) -> str:
    spans = [(m.start, m.node.end) for m in container.members] if container.kind == "object" else [
        (n.start, n.end) for n in container.items]
    start, end = spans[index]
    if len(spans) == 1:  # the container is left empty, written `{}` / `[]`
        return text[:container.start + 1] + text[container.end - 1:]
    if index > 0:
        previous_end = spans[index - 1][1]
        return text[:previous_end] + text[end:]
    next_start = spans[1][0]
    return text[:start] + text[next_start:]


def remove_member(text: str, path: KeyPath, key: str) -> str:
    container = at(parse(text), path)
    index = next(i for i, m in enumerate(container.members) if m.key == key)
    return _remove_span(text, container, index)


def remove_item(text: str, path: KeyPath, index: int) -> str:
    return _remove_span(text, at(parse(text), path), index)
