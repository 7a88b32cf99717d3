# Removes the thatch prompt hook from this zsh: eval "$(thatch init --deactivate zsh)"
() {
    emulate -L zsh
    precmd_functions=(${precmd_functions:#_thatch_hook})
}
unfunction _thatch_hook _thatch_prompt _thatch_find_head 2>/dev/null
unset _thatch_pwd _thatch_head _thatch_key _thatch_state THATCH_SHELL_HOOK
