
# Autoloaded from $fpath (the file's name is _thatch) the body runs with the
# completion's arguments; sourced directly, it registers itself instead.
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
    _thatch "$@"
else
    compdef _thatch thatch
fi
