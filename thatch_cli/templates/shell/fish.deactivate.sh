# Removes the thatch prompt hook from this fish: thatch init --deactivate fish | source
functions -e __thatch_hook __thatch_prompt __thatch_find_head
set -e __thatch_pwd
set -e __thatch_head
set -e __thatch_key
set -e __thatch_state
set -e THATCH_SHELL_HOOK
