"""A fingerprint of a database's content, to tell whether two files hold
the same data whatever their page layout (backup.py skips a pre-upgrade
copy identical to one it already keeps)."""

from __future__ import annotations

from pathlib import Path

from .fastread import connect_readonly


def digest(path: Path) -> str:
    """A fingerprint of a database's content: its schema and the multiset of
    rows of every table (in any order, as VACUUM INTO may renumber them)."""
    import hashlib

    conn = connect_readonly(path)
    try:
        conn.text_factory = bytes
        conn.execute("BEGIN")
        whole = hashlib.blake2b(digest_size=32)
        schema_rows = sorted(conn.execute("SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_master"))
        whole.update(repr(schema_rows).encode())
        for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
                                    " AND coalesce(sql, '') NOT LIKE 'CREATE VIRTUAL%' ORDER BY name").fetchall():
            total = 0
            quoted = b'"' + name.replace(b'"', b'""') + b'"'
            for row in conn.execute(f"SELECT * FROM {quoted.decode('utf-8', 'surrogateescape')}"):
                row_hash = hashlib.blake2b(repr(row).encode(), digest_size=16).digest()
                total = (total + int.from_bytes(row_hash, "big")) % (1 << 128)
            whole.update(name + total.to_bytes(16, "big"))
        return whole.hexdigest()
    finally:
        conn.close()
