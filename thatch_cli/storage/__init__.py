"""Everything that touches SQLite, and the only place SQL is written.

    schema       the schema and its migrations
    opening      opening the file: made whole, upgraded once after a backup, checked before it is trusted
    foreign      schema objects neither thatch nor the original defines (dropped on upgrade and restore)
    readable     reading past rows that cannot be decoded
    integrity    a cheap look for damaged indexes before a write
    memories     MemoryDB: stores and entries, read and written
    fulltext     FTS5 ranking (the lexical half of recall)
    bulkindex    keyword-indexing many new memories in one statement (a sync's big pull)
    filters      a search's filter as a condition on entries
    vectors      stored vectors for ranking, scans and reindex
    maintenance  dedup verdicts, moving and archiving a branch's memories
    transfer     every column of entries, for export and import
    history      earlier versions of memories, kept by triggers
    backup       verified copies of the database file, and putting one back
    fingerprint  a database's content as one hash, whatever its page layout
    fastread     stdlib-only reads on a raw connection: the hot paths' and MemoryDB's one answer to
                 which stores exist and which memories are live
    sync         thatch sync's bookkeeping: each memory's marks, each store's sync state
    anchors      the code each memory describes: path, line range, commit, blob, line hashes
    rules        learned rules: the original's prediction and behavior tables, its confidence arithmetic
"""
