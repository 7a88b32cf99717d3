
# Values from the database, one per line, into _thatch_v (labels may hold spaces).
_thatch_values() {
    _thatch_v=()
    local line
    local -a args=(_complete "$1")
    [[ -n $2 ]] && args+=(--store "$2")
    while IFS= read -r line; do
        [[ -n $line ]] && _thatch_v+=("$line")
    done < <(command thatch "${args[@]}" 2>/dev/null)
}

# COMPREPLY from _thatch_v for the word being typed: matched without its
# quoting, answered escaped (or bare inside an open quote), and with any part
# before a ':' left out, since readline only replaces the text after it. With
# $2 set, a value starting with '-' (it would read as an option) comes after
# '-- ', which ends the options.
_thatch_reply_values() {
    local cur=$1 dash=$2 quote='' value keep=''
    case $cur in
        \'*) quote=\'; cur=${cur#\'} ;;
        \"*) quote=\"; cur=${cur#\"} ;;
        *) [[ $cur == *:* ]] && keep=${cur%:*}:; cur=${cur//\\/} ;;
    esac
    for value in "${_thatch_v[@]}"; do
        [[ $value == "$cur"* ]] || continue
        [[ -z $quote ]] && printf -v value '%q' "$value"
        value=${value#"$keep"}
        [[ -n $dash && -z $quote && $value == -* ]] && value="-- $value"
        COMPREPLY+=("$value")
    done
}

_thatch() {
    COMPREPLY=()
    local -a words=()
    local i cword=0 word cur path='' nargs=0 store='' want='' dashdash='' _thatch_r
    local -a _thatch_v
    # Re-join what COMP_WORDBREAKS split at ':' (labels may contain colons).
    for (( i = 0; i < ${#COMP_WORDS[@]}; i++ )); do
        word=${COMP_WORDS[i]}
        if (( ${#words[@]} > 1 )) && [[ $word == : || ${COMP_WORDS[i-1]} == : ]]; then
            words[${#words[@]}-1]+=$word
        else
            words+=("$word")
        fi
        (( i == COMP_CWORD )) && cword=$(( ${#words[@]} - 1 ))
    done
    cur=${words[cword]}
    for (( i = 1; i < cword; i++ )); do
        word=${words[i]}
        if [[ -z $dashdash && $word == -- ]]; then
            dashdash=1
        elif [[ -z $dashdash && $word == -?* ]]; then
            _thatch_option_value "$path" "${word%%=*}"
            [[ $_thatch_r == flag || $word == *=?* ]] && continue
            [[ ${words[i+1]} == = ]] && (( i++ ))
            if (( i + 1 >= cword )); then
                want=$_thatch_r
                [[ $cur == = ]] && cur=''
                break
            fi
            (( i++ ))
            [[ $_thatch_r == stores && ( $word == --store || $word == -s ) ]] && store=${words[i]}
        else
            _thatch_subcommands "$path"
            if (( nargs == 0 )) && [[ -n $_thatch_r && " $_thatch_r " == *" $word "* ]]; then
                path=${path:+$path }$word
            else
                (( nargs++ ))
            fi
        fi
    done
    if [[ -z $want ]]; then
        if [[ -z $dashdash && $cur == -* ]]; then
            _thatch_options "$path"
            COMPREPLY=($(compgen -W "$_thatch_r" -- "$cur"))
            # "-v..." may also begin a label that starts with '-'.
            if [[ $cur == -[!-]* ]]; then
                _thatch_argument "$path" "$nargs"
                if [[ $_thatch_r == labels ]]; then
                    _thatch_values labels "$store"
                    _thatch_reply_values "$cur" 1
                fi
            fi
            return 0
        fi
        _thatch_subcommands "$path"
        if (( nargs == 0 )) && [[ -n $_thatch_r ]]; then
            COMPREPLY=($(compgen -W "$_thatch_r" -- "$cur"))
            return 0
        fi
        _thatch_argument "$path" "$nargs"
        want=$_thatch_r
    fi
    case $want in
        labels)
            _thatch_values labels "$store"
            if [[ -n $dashdash ]]; then
                _thatch_reply_values "$cur"
            else
                _thatch_reply_values "$cur" 1
            fi
            ;;
        stores|branches)
            _thatch_values "$want" "$store"
            _thatch_reply_values "$cur"
            ;;
        choices:*)
            COMPREPLY=($(compgen -W "${want#choices:}" -- "$cur"))
            ;;
        files)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur"))
            ;;
    esac
    return 0
}

complete -F _thatch thatch
