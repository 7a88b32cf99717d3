"""Editing other people's files: minimal JSON edits (an insertion keeps
every other byte and is undone exactly by the matching removal, whatever
the layout) and marked blocks."""

from __future__ import annotations

import json

import pytest

from thatch_cli.integrations.hosts import jsonedit

LAYOUTS = [
    '{}\n',
    '{}',
    '{\n  "a": 1\n}\n',
    '{\n    "a": {"b": [1, 2]},\n    "hooks": {\n        "Stop": []\n    }\n}',
    '{\n\t"a": true,\n\t"hooks": {\n\t\t"Stop": [\n\t\t\t{"x": 1}\n\t\t]\n\t}\n}\n',
    '{"a": 1, "hooks": {"Stop": [{"x": 1}]}}',
    '  {  "a" :  "é ✓" ,"hooks":{ }  }  \n',
]


@pytest.mark.parametrize("text", LAYOUTS)
def test_add_then_remove_gives_the_same_bytes(text):
    added = jsonedit.add_member(text, (), "mcpServers", {"thatch": {"command": "/x/thatch", "args": ["mcp"]}})
    assert json.loads(added) == {**json.loads(text), "mcpServers": {"thatch": {"command": "/x/thatch", "args": ["mcp"]}}}
    assert jsonedit.remove_member(added, (), "mcpServers") == text
    if "Stop" in text:
        appended = jsonedit.append_item(text, ("hooks", "Stop"), {"command": "thatch reminder"})
        assert json.loads(appended)["hooks"]["Stop"][-1] == {"command": "thatch reminder"}
        index = len(json.loads(text)["hooks"]["Stop"])
        assert jsonedit.remove_item(appended, ("hooks", "Stop"), index) == text


def test_new_lines_follow_the_file_indentation():
    text = '{\n    "a": 1\n}\n'
    assert jsonedit.add_member(text, (), "b", {"c": [1]}) == (
        '{\n    "a": 1,\n    "b": {\n        "c": [\n            1\n        ]\n    }\n}\n')


@pytest.mark.parametrize("text,problem", [
    ('{"a": 1,}', "expected a quoted key"),
    ('{"a": 1 "b": 2}', "expected ',' or '}'"),
    ('{"a": 1, "a": 2}', "duplicate key 'a'"),
    ('// comment\n{}', "Expecting value"),
    ('[1, 2]', "not a JSON object"),
    ('{"a": 1} trailing', "extra text"),
    ('', "unexpected end"),
])
def test_malformed_documents_are_refused(text, problem):
    with pytest.raises(jsonedit.Malformed, match=problem):
        jsonedit.parse(text)


def test_a_block_survives_an_editor_that_switched_to_crlf():
    from thatch_cli.integrations.hosts import blocks
    from thatch_cli.integrations.hosts.managed import MARKDOWN

    text, added = blocks.put("# Rules\r\n", MARKDOWN, "body\n")
    crlf = text.replace("\r\n", "\n").replace("\n", "\r\n")
    assert blocks.put(crlf, MARKDOWN, "new body\n")[0].count("BEGIN thatch") == 1
    assert blocks.remove(crlf, MARKDOWN, added) == "# Rules\r\n"
