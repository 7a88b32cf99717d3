"""One filter value (memory/filter.py): what the SQL rendering keeps
(storage/filters.py) is what the daemon's matrix mask keeps
(ranking/dense.py), and the value crosses to the daemon intact or not at all."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from thatch_cli.daemon import handlers, protocol
from thatch_cli.memory.filter import Filter
from thatch_cli.memory.records import Memory
from thatch_cli.ranking.dense import StoreVectors
from thatch_cli.storage.filters import conditions
from thatch_cli.storage.memories import MemoryDB

ROWS = [(f"m{i}", branch, archived, pinned) for i, (branch, archived, pinned) in
        enumerate(itertools.product([None, "feat/a", "feat/b"], [False, True], [False, True]))]
FILTERS = [Filter(["s"], branch=branch, branch_only=only, any_branch=any_branch, archived=archived,
                  only_archived=only_archived, exclude=exclude, fields=fields)
           for branch, only, any_branch, archived, only_archived, exclude, fields in itertools.product(
               [None, "feat/a", "nope"], [False, True], [False, True], [False, True], [False, True],
               [(), [("s", "m0")]], [{}, {"pinned": True}])]


def seeded(tmp_path) -> MemoryDB:
    """A database holding ROWS in store "s"."""
    db = MemoryDB.open(tmp_path / "t.db")
    for slug, branch, archived, pinned in ROWS:
        db.save(Memory(store="s", slug=slug, label=slug, content=f"# {slug}\n\nx", branch=branch, pinned=pinned,
                       created_at="2026-01-01T00:00:00.000Z", updated_at="2026-01-01T00:00:00.000Z"),
                overwrite=False, archived=archived)
    return db


def test_the_sql_and_the_daemons_mask_keep_the_same_memories(tmp_path):
    db = seeded(tmp_path)
    blob = np.ones(4, "<f4").tobytes()
    index = StoreVectors.build("s", [(slug, branch, int(archived), blob, {"pinned": int(pinned)})
                                     for slug, branch, archived, pinned in ROWS], 4)
    for where in FILTERS:
        kept, args = conditions(where)
        by_sql = {slug for (slug,) in db.conn.execute(f"SELECT slug FROM entries WHERE {kept}", args)}
        by_mask = {slug for slug, keep in zip(index.slugs, index.mask(where)) if keep} - {s for _, s in where.exclude}
        assert by_sql == by_mask, where
    assert len({frozenset(db.conn.execute(f"SELECT slug FROM entries WHERE {conditions(w)[0]}",
                                          conditions(w)[1])) for w in FILTERS}) > 12  # the filters do differ


def test_a_listing_is_the_same_filter_rendered_by_storage(tmp_path):
    db = seeded(tmp_path)
    where = Filter(["s"], branch="feat/a", branch_only=True, only_archived=True, fields={"pinned": True})
    assert [m.slug for m in db.select(where)] == ["m7"]
    assert db.count_where(where) == 1
    assert db.count_where(Filter([], all_stores=True, any_branch=True, archived=True)) == len(ROWS)


@pytest.mark.parametrize("fields", [{"archived": True}, {"pinned": "yes"}, {"nope": True}])
def test_only_a_filterable_field_of_the_right_kind_filters(fields):
    with pytest.raises(ValueError):
        Filter(["s"], fields=fields)


def test_a_filter_crosses_to_the_daemon_as_json_and_back():
    for where in FILTERS:
        assert Filter.from_json(where.to_json()) == where


@pytest.mark.parametrize("bad", [{}, {"stores": "s", "branch": None, "any_branch": False, "archived": False,
                                      "exclude": []},
                                 {"stores": ["s"], "branch": 3, "any_branch": False, "archived": False, "exclude": []},
                                 {"stores": ["s"], "branch": None, "any_branch": "no", "archived": False,
                                  "exclude": []},
                                 {"stores": ["s"], "branch": None, "any_branch": False, "archived": False,
                                  "exclude": [["s"]]}])
def test_the_daemon_refuses_a_filter_that_is_not_one(bad):
    request = {"db": "/nowhere", "filter": bad, "query": "q", "passage": None, "limit": 5, "min_score": None,
               "wait": False}
    with pytest.raises(protocol.ErrorReply) as caught:
        handlers.search(None, request, b"")
    assert caught.value.code == "bad_request"
