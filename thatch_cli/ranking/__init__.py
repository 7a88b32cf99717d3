"""Ranking memories against a query, and pairs of memories against each other.

    lexical   free text to a safe FTS5 query (ranked by storage/fulltext)
    dense     cosine ranking over each store's vector matrix (numpy)
    fusion    one list from both rankings (pure Python)
    pairscan  near-duplicate pairs in bounded memory (numpy)
"""
