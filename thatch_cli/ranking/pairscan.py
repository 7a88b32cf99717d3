"""Every pair of rows of one L2-normalised matrix whose cosine passes a
threshold, in bounded memory however many pairs pass.

The pairwise product is computed in row blocks, each block against the
rows from its own first row on, so every unordered pair is seen once. Of a
block only summaries survive: the connected components of the pair graph
(a union-find over every passing pair), per-row pair counts and best
scores, and the best `limit` pairs so far. A store of 10,000 identical
memories has 50 million passing pairs; none of them is kept beyond its
block. Used by hygiene and `thatch duplicates`; imports numpy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_EMPTY = np.zeros(0, dtype=np.intp)


@dataclass(frozen=True)
class Component:
    rows: list[int]  # ascending
    pair_count: int  # passing pairs inside the component
    best: float


@dataclass(frozen=True)
class PairScan:
    # (i, j, score), i < j: the best `limit` by score rounded to 6 decimals,
    # ties by (i, j), so the last-bit noise of the matrix product (which
    # varies with the block shape) never decides which pairs are kept.
    pairs: list[tuple[int, int, float]]
    pair_count: int  # every passing pair
    components: list[Component]  # every component with a pair, best first, ties by first row


def scan(matrix: np.ndarray, threshold: float, *, limit: int, block_cells: int,
         skip: tuple[np.ndarray, np.ndarray] = (_EMPTY, _EMPTY)) -> PairScan:
    """Pairs (i, j), i < j, with matrix[i] · matrix[j] >= threshold, except
    the pairs in `skip` (two arrays: i, j with i < j). Each block holds about
    `block_cells` scores; its peak memory is some 50 bytes per score when
    every pair passes."""
    count = len(matrix)
    parent = np.arange(count)
    degree = np.zeros(count, dtype=np.int64)
    best = np.full(count, -np.inf, dtype=np.float32)
    top = (_EMPTY, _EMPTY, np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.float32))
    total = 0
    skip_i, skip_j = _sorted_pairs(*skip)
    block = max(1, block_cells // max(count, 1))
    for start in range(0, count, block):
        stop = min(count, start + block)
        scores = matrix[start:stop] @ matrix[start:].T
        square = scores[:, : stop - start]
        square[np.tri(stop - start, dtype=bool)] = -np.inf  # the diagonal, and pairs seen as (j, i)
        lo, hi = np.searchsorted(skip_i, [start, stop])
        scores[skip_i[lo:hi] - start, skip_j[lo:hi] - start] = -np.inf
        passing = scores >= threshold
        found = int(np.count_nonzero(passing))
        if not found:
            continue
        total += found
        degree[start:stop] += np.count_nonzero(passing, axis=1)
        degree[start:] += np.count_nonzero(passing, axis=0)
        # A row's maximum is its best passing score whenever it has a passing pair.
        np.maximum(best[start:stop], scores.max(axis=1), out=best[start:stop])
        np.maximum(best[start:], scores.max(axis=0), out=best[start:])
        rows, cols = np.nonzero(passing)  # row-major: already in (i, j) order
        values = scores[passing]  # the same order
        del scores, square, passing  # freed before the union's temporaries: one block's worth at a time
        rows += start
        cols += start
        _union(parent, rows, cols)
        top = _best(top, _block_best(rows, cols, values, np.round(values, 6), limit), limit)
    pairs = [(int(i), int(j), float(s)) for i, j, s, _ in zip(*top)]
    return PairScan(pairs, total, _components(parent, degree, best))


def _sorted_pairs(i: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(i, kind="stable")
    return np.asarray(i, dtype=np.intp)[order], np.asarray(j, dtype=np.intp)[order]


def _compress(parent: np.ndarray) -> None:
    """Point every row straight at its root."""
    while True:
        grand = parent[parent]
        if np.array_equal(grand, parent):
            return
        parent[:] = grand


def _union(parent: np.ndarray, u: np.ndarray, v: np.ndarray) -> None:
    """Merge the components of every edge (u[k], v[k]), vectorised: hook each
    edge's larger root under its smaller one until every edge is inside one
    component. Roots only ever point to smaller rows, so no cycle can form;
    when several edges hook the same root one write wins and the others are
    retried. `parent` is compressed before and after."""
    while u.size:
        u, v = parent[u], parent[v]
        differ = u != v
        if not differ.any():
            return
        u, v = u[differ], v[differ]
        parent[np.maximum(u, v)] = np.minimum(u, v)
        _compress(parent)


def _block_best(rows, cols, values, keys, limit):
    """The best `limit` pairs of one block by (-key, i, j); the pairs come in (i, j) order."""
    if keys.size <= limit:
        return rows, cols, values, keys
    cut = np.partition(keys, keys.size - limit)[keys.size - limit]
    above = np.flatnonzero(keys > cut)
    ties = np.flatnonzero(keys == cut)[: limit - above.size]
    keep = np.sort(np.concatenate([above, ties]))
    return rows[keep], cols[keep], values[keep], keys[keep]


def _best(kept, new, limit):
    rows, cols, values, keys = (np.concatenate([a, b]) for a, b in zip(kept, new))
    order = np.lexsort((cols, rows, -keys))[:limit]
    return rows[order], cols[order], values[order], keys[order]


def _components(parent: np.ndarray, degree: np.ndarray, best: np.ndarray) -> list[Component]:
    active = np.flatnonzero(degree)
    if not active.size:
        return []
    roots = parent[active]
    order = np.argsort(roots, kind="stable")  # members stay ascending within a root
    members, roots = active[order], roots[order]
    bounds = np.flatnonzero(np.diff(roots)) + 1
    found = []
    for rows in np.split(members, bounds):
        found.append(Component(rows.tolist(), int(degree[rows].sum()) // 2, float(best[rows].max())))
    found.sort(key=lambda c: (-c.best, c.rows[0]))
    return found
