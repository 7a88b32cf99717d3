"""Everything that touches SQLite, and the only place SQL is written.

    schema       opening the file, creating and upgrading the schema
    memories     MemoryDB: stores and entries, read and written
    fulltext     FTS5 ranking (the lexical half of recall)
    vectors      stored vectors for ranking, scans and reindex
    maintenance  dedup verdicts, moving and archiving a branch's memories
    transfer     every column of entries, for export and import
    history      earlier versions of memories, kept by triggers
    backup       verified copies of the database file, and putting one back
    fastread     stdlib-only reads on a raw connection: the hot paths' and MemoryDB's one answer to
                 which stores exist and which memories are live
    sync         thatch sync's bookkeeping: each memory's marks, each store's sync state
"""
