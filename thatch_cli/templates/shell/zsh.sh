# thatch shell hook for zsh. Load it from ~/.zshrc with:
#   eval "$(PATH="$HOME/.local/bin:$PATH" thatch init zsh 2>/dev/null)"
# Remove it from the running shell with: eval "$(thatch init --deactivate zsh)"
#
# Before each prompt it compares, with builtins only, the repository's HEAD
# (or the directory, outside a repository) with what it saw last time; only
# when that changed does it run thatch once for a one-line memory summary.
# THATCH_QUIET=1 turns it off without starting anything.

_thatch_find_head() {
    # Walks up from $PWD for a .git directory, or a .git file naming the real
    # git dir (linked worktrees, submodules); sets _thatch_head to its HEAD
    # file, or to nothing outside a repository.
    emulate -L zsh
    local dir=$PWD line=
    typeset -g _thatch_head=
    while :; do
        if [[ -f $dir/.git/HEAD ]]; then
            _thatch_head=$dir/.git/HEAD
            return 0
        elif [[ -f $dir/.git ]]; then
            { read -r line <"$dir/.git"; } 2>/dev/null
            if [[ $line == "gitdir: "* ]]; then
                line=${line#gitdir: }
                [[ $line == /* ]] || line=$dir/$line
                _thatch_head=$line/HEAD
            fi
            return 0
        fi
        [[ -n $dir ]] || return 0
        dir=${dir%/*}
    done
}

_thatch_prompt() {
    emulate -L zsh
    local key line= out
    # The walk up is cached per directory; it is redone only after a cd or
    # when the repository it found has gone away.
    if [[ $PWD != "${_thatch_pwd-}" || ( -n ${_thatch_head-} && ! -f $_thatch_head ) ]]; then
        typeset -g _thatch_pwd=$PWD
        _thatch_find_head
    fi
    if [[ -n $_thatch_head ]]; then
        # A redirected builtin: reading HEAD this way starts no process.
        { read -r line <"$_thatch_head"; } 2>/dev/null
        key="git:$_thatch_head:$line"
    else
        key="dir:$PWD"
    fi
    key="$key|${THATCH_STORE-}"
    [[ $key != "${_thatch_key-}" ]] || return 0
    typeset -g _thatch_key=$key
    [[ -x @THATCH@ ]] || return 0
    # First line: the state to hand back next time; the rest is for the user.
    out=$(@THATCH@ _hook prompt --prev "${_thatch_state-}" 2>/dev/null) || return 0
    typeset -g _thatch_state=${out%%$'\n'*}
    [[ $out != *$'\n'* ]] || print -r -- "${out#*$'\n'}" >&2
}

_thatch_hook() {
    local ret=$?
    [[ ${THATCH_QUIET-} == 1 ]] || _thatch_prompt
    return $ret
}

# Prompt hooks only mean something in an interactive shell; the membership
# test keeps a second eval (re-sourcing ~/.zshrc) from installing it twice.
# It goes first so the hooks after it still see the last command's $?. The
# anonymous function keeps options such as KSH_ARRAYS from changing the test.
() {
    emulate -L zsh
    if [[ -o interactive ]] && (( ! ${precmd_functions[(I)_thatch_hook]:-0} )); then
        precmd_functions=(_thatch_hook $precmd_functions)
    fi
    # Tells thatch's git post-checkout hook that this prompt reports a branch
    # switch, so a switch prints one line, not two.
    [[ ! -o interactive ]] || export THATCH_SHELL_HOOK=zsh
}
