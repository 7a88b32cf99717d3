
# Values from the database (`thatch _complete KIND`), honouring a --store
# already on the command line. compadd quotes spaces and colons itself.
_thatch_complete() {
    local tag=$1 descr=$2 kind=$3 store=${opt_args[--store]:-${opt_args[-s]}}
    local -a vals args expl
    args=(_complete $kind)
    [[ -n $store ]] && args+=(--store ${(Q)store})
    vals=("${(@f)$(command thatch $args 2>/dev/null)}")
    vals=(${vals:#})
    # A label starting with '-' would read as an option: it goes in after
    # '--' (inserted with it, unless the line already has one).
    local -a dashed
    if [[ $kind == labels ]] && (( ! ${words[(I)--]} || ${words[(I)--]} >= CURRENT )); then
        dashed=(${(M)vals:#-*})
        vals=(${vals:#-*})
    fi
    _wanted $tag expl $descr compadd -a vals
    (( $#dashed )) && _wanted $tag expl $descr compadd -P '-- ' -a dashed
}
