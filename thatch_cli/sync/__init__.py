"""Team memory through the repository's own git remote (`thatch sync`).

One ref, `refs/thatch/memories`, holds one JSON record per memory
(records.py); merge.py decides per memory what each side gets, hlc.py orders
concurrent edits, tree.py reads and writes git objects, transport.py runs the
user's own `git fetch`/`git push`, secrets.py holds back credentials, and
gitconfig.py keeps the per-repository opt-in. ops/sync.py drives them.
"""
