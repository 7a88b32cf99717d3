"""Everything that touches SQLite, and the only place SQL is written.

    schema       opening the file, creating and upgrading the schema
    memories     MemoryDB: stores and entries, read and written
    fulltext     FTS5 ranking (the lexical half of recall)
    vectors      stored vectors for ranking, scans and reindex
    maintenance  dedup verdicts, moving and archiving a branch's memories
    transfer     every column of entries, for export and import
    hooks        stdlib-only access for the hot paths (prompt, git hooks, completion)
"""
