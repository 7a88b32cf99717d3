"""How many threads torch uses for one piece of work.

One query is a few tokens: one thread embeds it in milliseconds, while
torch's thread team spin-waits for cores a busy machine does not give it
(a prompt hook's query: 17 ms against 40-130 ms, p90 33 against 456 ms,
with two other processes busy on two cores). Batches of passages keep every
thread. The daemon and the in-process engine embed queries the same way,
so their scores stay identical to the last bit.
"""

from __future__ import annotations

import sys

_DEFAULT: list[int] = []


def run(threads: int | None, fn, *args):
    """fn(*args) with torch on `threads` intra-op threads (its default when
    None); torch is never imported just for this."""
    torch = sys.modules.get("torch")
    if torch is None:
        return fn(*args)
    if not _DEFAULT:
        _DEFAULT.append(torch.get_num_threads())
    wanted = threads or _DEFAULT[0]
    if torch.get_num_threads() != wanted:
        torch.set_num_threads(wanted)
    return fn(*args)
