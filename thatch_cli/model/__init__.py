"""The embedding model: what a model and its vector space are, and where an operation's vectors come from.

    embeddings     embedders (sentence-transformers, a fake for tests), model names and spaces
    identity       a local model folder named by its declared name and weights
    torch_threads  how many threads torch may use, set before it is imported
    engine         where vectors come from: the warm daemon, or the same work in this process
"""
