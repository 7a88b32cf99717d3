"""Team memory through the repository's own git remote (`thatch sync`), all of it in this package.

One ref, `refs/thatch/memories`, holds one JSON record per memory. Two
things live elsewhere, by project rule: the SQL of sync's marks and state
(storage/sync.py, as all SQL lives in storage/) and the Typer command
(cli/sync.py, a front door). The credential check sync runs before sharing
is support/secrets.py, since `remember` and import run it too. This
package sits above ops/ (it uses the Context and finding a memory by
label); nothing in ops/ imports it.

    run        one sync: fetch, merge, commit and push until the lease holds; failures named
    round      the typed state of a sync and of each round (Outcome, Shared, Round)
    reading    both sides of a round: the records of a commit, and the store's rows
    applying   writing what a merge decided: the next commit, the rows, then the vectors
    setup      opting in and out, status, review, private and shared memories
    purge      taking one memory off the remote for good
    repo       which repository and store a sync works on, and its lock
    records    one memory as the JSON record of its file, checked as an import checks a line
    merge      per memory, what each side gets (three-way, against the merge base)
    hlc        the hybrid logical clock that orders changes made on different machines
    tree       reading and writing the ref's git objects (dulwich, one cat-file batch)
    transport  the user's own `git fetch` and `git push`, time-limited and classified
    gitconfig  the per-repository opt-in (the fetch refspec) and the git identity
"""
