# thatch shell hook for fish. Load it from ~/.config/fish/config.fish with:
#   thatch init fish | source
# Remove it from the running shell with: thatch init --deactivate fish | source
#
# Before each prompt it compares, with builtins only, the repository's HEAD
# (or the directory, outside a repository) with what it saw last time; only
# when that changed does it run thatch once for a one-line memory summary.
# THATCH_QUIET=1 turns it off without starting anything.

function __thatch_find_head
    # Walks up from $PWD for a .git directory, or a .git file naming the real
    # git dir (linked worktrees, submodules); sets __thatch_head to its HEAD
    # file, or to nothing outside a repository.
    set -g __thatch_head
    set -l dir $PWD
    set -l line
    while true
        if test -f "$dir/.git/HEAD"
            set -g __thatch_head "$dir/.git/HEAD"
            return 0
        else if test -f "$dir/.git"
            read line <"$dir/.git" 2>/dev/null
            if string match -q 'gitdir: *' -- "$line"
                set line (string sub -s 9 -- "$line")
                string match -q '/*' -- "$line"; or set line "$dir/$line"
                set -g __thatch_head "$line/HEAD"
            end
            return 0
        end
        test -n "$dir"; or return 0
        set dir (string replace -r '/[^/]*$' '' -- "$dir")
    end
end

function __thatch_prompt
    set -l key
    set -l line
    # The walk up is cached per directory; it is redone only after a cd or
    # when the repository it found has gone away.
    if test "$PWD" != "$__thatch_pwd"; or begin; test -n "$__thatch_head"; and not test -f "$__thatch_head"; end
        set -g __thatch_pwd $PWD
        __thatch_find_head
    end
    if test -n "$__thatch_head"
        # A redirected builtin: reading HEAD this way starts no process.
        read line <"$__thatch_head" 2>/dev/null
        set key "git:$__thatch_head:$line"
    else
        set key "dir:$PWD"
    end
    set key "$key|$THATCH_STORE"
    test "$key" != "$__thatch_key"; or return 0
    set -g __thatch_key $key
    test -x @THATCH@; or return 0
    # First line: the state to hand back next time; the rest is for the user.
    set -l out (@THATCH@ _hook prompt --prev "$__thatch_state" 2>/dev/null); or return 0
    set -g __thatch_state $out[1]
    set -q out[2]; and printf '%s\n' $out[2..-1] >&2
end

# Prompt hooks only mean something in an interactive shell. Defining the
# handler again replaces it, so a second `source` still installs it once.
if status is-interactive
    # Tells thatch's git post-checkout hook that this prompt reports a branch
    # switch, so a switch prints one line, not two.
    set -gx THATCH_SHELL_HOOK fish
    function __thatch_hook --on-event fish_prompt
        set -l ret $status
        test "$THATCH_QUIET" = 1; or __thatch_prompt
        return $ret
    end
end
