# bash completion for thatch                               -*- shell-script -*-
# Generated from the CLI definitions by `python -m thatch_cli.gen completions`; do not edit.
# Install: thatch completion install bash

# Subcommands of command path $1 (empty for thatch itself), into _thatch_r.
_thatch_subcommands() {
    case $1 in
        '') _thatch_r='activity anchor archive backup completion config daemon dedup duplicates edit export forget help history hooks hygiene import init list mcp pause pin private recall reindex remember rename rescope restore restore-memory resume rules search setup share show status stores sync tag unanchor unarchive unpin untag' ;;
        'completion') _thatch_r='install show' ;;
        'config') _thatch_r='get list path set unset' ;;
        'daemon') _thatch_r='start status stop' ;;
        'dedup') _thatch_r='keep list mark' ;;
        'hooks') _thatch_r='install status uninstall' ;;
        'rules') _thatch_r='forget list show' ;;
        *) _thatch_r='' ;;
    esac
}

# Options of command path $1.
_thatch_options() {
    case $1 in
        '') _thatch_r='--help -h --version -V -v' ;;
        'activity') _thatch_r='--session --limit -n --json --help -h' ;;
        'anchor') _thatch_r='--refresh --store -s --global -g --json --help -h' ;;
        'archive') _thatch_r='--branch -b --this-branch --store -s --global -g --json --help -h' ;;
        'backup') _thatch_r='--json --help -h' ;;
        'completion') _thatch_r='--help -h' ;;
        'completion install') _thatch_r='--json --help -h' ;;
        'completion show') _thatch_r='--json --help -h' ;;
        'config') _thatch_r='--help -h' ;;
        'config get') _thatch_r='--json --help -h' ;;
        'config list') _thatch_r='--json --help -h' ;;
        'config path') _thatch_r='--json --help -h' ;;
        'config set') _thatch_r='--json --help -h' ;;
        'config unset') _thatch_r='--json --help -h' ;;
        'daemon') _thatch_r='--help -h' ;;
        'daemon start') _thatch_r='--json --help -h' ;;
        'daemon status') _thatch_r='--json --help -h' ;;
        'daemon stop') _thatch_r='--json --help -h' ;;
        'dedup') _thatch_r='--help -h' ;;
        'dedup keep') _thatch_r='--store -s --global -g --json --help -h' ;;
        'dedup list') _thatch_r='--store -s --global -g --json --help -h' ;;
        'dedup mark') _thatch_r='--status --store -s --global -g --json --help -h' ;;
        'duplicates') _thatch_r='--store -s --global -g --threshold -t --limit -n --json --help -h' ;;
        'edit') _thatch_r='--store -s --global -g --json --help -h' ;;
        'export') _thatch_r='--store -s --global -g --all --all-stores -a --with-vectors --output -o --json --help -h' ;;
        'forget') _thatch_r='--store -s --global -g --json --help -h' ;;
        'help') _thatch_r='--help -h' ;;
        'history') _thatch_r='--store -s --global -g --json --help -h' ;;
        'hooks') _thatch_r='--help -h' ;;
        'hooks install') _thatch_r='--repo --json --help -h' ;;
        'hooks status') _thatch_r='--repo --json --help -h' ;;
        'hooks uninstall') _thatch_r='--repo --json --help -h' ;;
        'hygiene') _thatch_r='--store -s --global -g --stale-days --json --help -h' ;;
        'import') _thatch_r='--overwrite --store -s --global -g --json --help -h' ;;
        'init') _thatch_r='--deactivate --json --help -h' ;;
        'list') _thatch_r='--store -s --global -g --all-stores -a --branch -b --this-branch --all-branches --archived --pinned --tag --limit -n --json --help -h' ;;
        'mcp') _thatch_r='--max-chars --lock-wait --help -h' ;;
        'pause') _thatch_r='--global --json --help -h' ;;
        'pin') _thatch_r='--store -s --global -g --json --help -h' ;;
        'private') _thatch_r='--store -s --global -g --json --help -h' ;;
        'recall') _thatch_r='--store -s --global -g --all-stores -a --branch -b --this-branch --all-branches --limit -n --include-archived --mode -m --floor --show-weak --budget --file -f --pinned --tag --json --help -h' ;;
        'reindex') _thatch_r='--store -s --global -g --json --help -h' ;;
        'remember') _thatch_r='--store -s --global -g --create --branch -b --this-branch --confidence -c --overwrite --archived --no-archived --pin --private --file -f --tag --json --help -h' ;;
        'rename') _thatch_r='--store -s --global -g --json --help -h' ;;
        'rescope') _thatch_r='--from --to --unscoped --store -s --global -g --json --help -h' ;;
        'restore') _thatch_r='--json --help -h' ;;
        'restore-memory') _thatch_r='--version --store -s --global -g --json --help -h' ;;
        'resume') _thatch_r='--global --json --help -h' ;;
        'rules') _thatch_r='--help -h' ;;
        'rules forget') _thatch_r='--json --help -h' ;;
        'rules list') _thatch_r='--kind --store -s --global -g --json --help -h' ;;
        'rules show') _thatch_r='--json --help -h' ;;
        'search') _thatch_r='--limit -n --mode -m --all-branches --json --help -h' ;;
        'setup') _thatch_r='--global --plan --uninstall --status --json --help -h' ;;
        'share') _thatch_r='--store -s --global -g --json --help -h' ;;
        'show') _thatch_r='--store -s --global -g --json --help -h' ;;
        'status') _thatch_r='--json --help -h' ;;
        'stores') _thatch_r='--drop --json --help -h' ;;
        'sync') _thatch_r='--remote --yes -y --dry-run -n --review --accept --accept-all --allow --json --help -h' ;;
        'tag') _thatch_r='--store -s --global -g --json --help -h' ;;
        'unanchor') _thatch_r='--store -s --global -g --json --help -h' ;;
        'unarchive') _thatch_r='--store -s --global -g --json --help -h' ;;
        'unpin') _thatch_r='--store -s --global -g --json --help -h' ;;
        'untag') _thatch_r='--store -s --global -g --json --help -h' ;;
        *) _thatch_r='--help -h' ;;
    esac
}

# What option $2 of command path $1 takes: flag (no value), or the kind of value
# (choices:VALUES for a fixed list).
_thatch_option_value() {
    case "$1|$2" in
        'archive|--branch'|'archive|-b'|'list|--branch'|'list|-b'|'recall|--branch'|'recall|-b'|'remember|--branch'|'remember|-b'|'rescope|--from'|'rescope|--to') _thatch_r=branches ;;
        'dedup mark|--status') _thatch_r='choices:duplicate supplement contradiction unrelated' ;;
        'recall|--mode'|'recall|-m'|'search|--mode'|'search|-m') _thatch_r='choices:hybrid semantic lexical' ;;
        'rules list|--kind') _thatch_r='choices:prediction behavior' ;;
        'export|--output'|'export|-o'|'hooks install|--repo'|'hooks status|--repo'|'hooks uninstall|--repo'|'recall|--file'|'recall|-f'|'remember|--file'|'remember|-f') _thatch_r=files ;;
        'activity|--session'|'activity|--limit'|'activity|-n'|'duplicates|--threshold'|'duplicates|-t'|'duplicates|--limit'|'duplicates|-n'|'hygiene|--stale-days'|'list|--limit'|'list|-n'|'mcp|--max-chars'|'mcp|--lock-wait'|'recall|--limit'|'recall|-n'|'recall|--floor'|'recall|--budget'|'remember|--confidence'|'remember|-c'|'restore-memory|--version'|'search|--limit'|'search|-n'|'sync|--remote'|'sync|--accept'|'sync|--allow') _thatch_r=none ;;
        'anchor|--store'|'anchor|-s'|'archive|--store'|'archive|-s'|'dedup keep|--store'|'dedup keep|-s'|'dedup list|--store'|'dedup list|-s'|'dedup mark|--store'|'dedup mark|-s'|'duplicates|--store'|'duplicates|-s'|'edit|--store'|'edit|-s'|'export|--store'|'export|-s'|'forget|--store'|'forget|-s'|'history|--store'|'history|-s'|'hygiene|--store'|'hygiene|-s'|'import|--store'|'import|-s'|'list|--store'|'list|-s'|'pin|--store'|'pin|-s'|'private|--store'|'private|-s'|'recall|--store'|'recall|-s'|'reindex|--store'|'reindex|-s'|'remember|--store'|'remember|-s'|'rename|--store'|'rename|-s'|'rescope|--store'|'rescope|-s'|'restore-memory|--store'|'restore-memory|-s'|'rules list|--store'|'rules list|-s'|'share|--store'|'share|-s'|'show|--store'|'show|-s'|'stores|--drop'|'tag|--store'|'tag|-s'|'unanchor|--store'|'unanchor|-s'|'unarchive|--store'|'unarchive|-s'|'unpin|--store'|'unpin|-s'|'untag|--store'|'untag|-s') _thatch_r=stores ;;
        'list|--tag'|'recall|--tag'|'remember|--tag') _thatch_r=tags ;;
        *) _thatch_r=flag ;;
    esac
}

# What argument $2 (counting from 0) of command path $1 takes.
_thatch_argument() {
    case "$1|$2" in
        'help|0') _thatch_r='choices:activity anchor archive backup completion config daemon dedup duplicates edit export forget help history hooks hygiene import init list mcp pause pin private recall reindex remember rename rescope restore restore-memory resume rules search setup share show status stores sync tag unanchor unarchive unpin untag' ;;
        'completion install|0'|'completion show|0'|'init|0') _thatch_r='choices:bash zsh fish' ;;
        'setup|0') _thatch_r='choices:claude cursor codex' ;;
        'sync|0') _thatch_r='choices:init status off purge' ;;
        'config get|0'|'config set|0'|'config unset|0') _thatch_r='choices:model daemon.enabled daemon.idle daemon.warm recall.floor recall.limit duplicates.threshold history.keep backup.keep nudge.threshold activity.enabled mcp.max_chars sync.timeout sync.stall sync.auto_push sync.branches sync.review sync.secret_rules' ;;
        'anchor|1'|'backup|0'|'import|0'|'restore|0'|'unanchor|1') _thatch_r=files ;;
        'anchor|0'|'archive|0'|'dedup keep|0'|'dedup keep|1'|'dedup mark|0'|'dedup mark|1'|'edit|0'|'forget|0'|'history|0'|'pin|0'|'private|0'|'remember|0'|'rename|0'|'restore-memory|0'|'share|0'|'show|0'|'sync|1'|'tag|0'|'unanchor|0'|'unarchive|0'|'unpin|0'|'untag|0') _thatch_r=labels ;;
        'edit|1'|'forget|1'|'list|0'|'pin|1'|'search|1'|'show|1'|'unpin|1') _thatch_r=stores ;;
        'tag|1'|'untag|1') _thatch_r=tags ;;
        *) _thatch_r=none ;;
    esac
}

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
