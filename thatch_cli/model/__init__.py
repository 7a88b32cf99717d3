"""The embedding model: the embedders, what a model is called and which vector space its vectors live in.

    embeddings     embedders (sentence-transformers, a fake for tests), model names and spaces
    identity       a local model folder named by its declared name and weights
    torch_threads  how many threads torch may use, set before it is imported
"""
