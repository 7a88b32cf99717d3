"""Where a command runs: which repository, store and branch.

    gitfs     the on-disk git layout, read with the standard library (hot paths)
    identity  owner/repo from the origin remote, cached per repository (dulwich on a miss)
    scope     the one resolver: store, branch, local branches, orphaned branches
    switchcache  the line post-checkout says per branch, cached in the git directory for the hook script
    drift     whether an anchor's code is unchanged, moved, changed or gone (the index first)
"""
