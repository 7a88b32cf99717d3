"""What thatch installs into the user's world, as library code (the commands
that call it live in cli/):

    shell       the shell hook script for bash, zsh and fish (`thatch init`)
    githooks    post-checkout and reference-transaction hooks, chained and reversible
    completion  the generated completion scripts, installed where each shell looks
    completion_tree     the command tree the completion scripts are written from
    completion_scripts  the bash, zsh and fish scripts rendered from that tree
    hosts       `thatch setup`: coding-agent hosts' MCP servers, hooks and instructions
"""
