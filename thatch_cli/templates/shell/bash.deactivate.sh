# Removes the thatch prompt hook from this bash: eval "$(thatch init --deactivate bash)"
PROMPT_COMMAND=${PROMPT_COMMAND//_thatch_hook;/}
PROMPT_COMMAND=${PROMPT_COMMAND//_thatch_hook/}
unset -f _thatch_hook _thatch_prompt _thatch_find_head
unset _thatch_pwd _thatch_head _thatch_key _thatch_state THATCH_SHELL_HOOK
