"""Machine-facing entry points: the shell hook, git hooks, completion and
agent hooks. Budget: 50 ms a run, so nothing under here may import typer,
rich, dulwich or numpy (or typing), directly or through what it imports.

    prompt    `thatch _hook prompt`: the shell hook's summary line and warm-up
    githook   `thatch _githook`: what the git hooks run (branch switch, deletion)
    complete  `thatch _complete`: labels, stores and branches for completion
    reminder  `thatch reminder`: the agent hook at session start
    flush     `thatch flush-tools`: the agent hook at every prompt (the nudges)
    relay     flush-tools as a thin client: the warm daemon runs it for this process
    served    `thatch _daemon`: the daemon process, with the hooks it runs for others
    rules     the learned rules a prompt fires (flush-tools' blocks, `thatch flush-predictions`)
    buffer    `thatch buffer-batch` / `buffer-tool`: the agent hooks after tool calls
    agentio   what the agent hooks share: the host's payload, a deadline, the answer
    deadline  the hooks' deadline and their answer's one write (os and time only)
"""
