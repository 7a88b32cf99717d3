# fish completion for thatch. Generated from the CLI definitions by `python -m thatch_cli.gen completions`; do not edit.
# Install: thatch completion install fish

# Subcommands of command path $argv[1], one per line.
function __thatch_subcommands
    switch "$argv[1]"
        case ''
            printf '%s\n' archive backup completion config daemon dedup duplicates edit export forget help history hooks hygiene import init list mcp recall reindex remember rename rescope restore restore-memory search setup show stores unarchive
        case 'completion'
            printf '%s\n' install show
        case 'config'
            printf '%s\n' get list path set unset
        case 'daemon'
            printf '%s\n' start status stop
        case 'dedup'
            printf '%s\n' keep list mark
        case 'hooks'
            printf '%s\n' install status uninstall
    end
end

# Whether option $argv[2] of command path $argv[1] takes a value.
function __thatch_takes_value
    switch "$argv[1]|$argv[2]"
        case 'archive|--branch' 'archive|-b' 'archive|--store' 'archive|-s' 'dedup keep|--store' 'dedup keep|-s' 'dedup list|--store' 'dedup list|-s' 'dedup mark|--status' 'dedup mark|--store' 'dedup mark|-s' 'duplicates|--store' 'duplicates|-s' 'duplicates|--threshold' 'duplicates|-t' 'duplicates|--limit' 'duplicates|-n' 'edit|--store' 'edit|-s' 'export|--store' 'export|-s' 'export|--output' 'export|-o' 'forget|--store' 'forget|-s' 'history|--store' 'history|-s' 'hooks install|--repo' 'hooks status|--repo' 'hooks uninstall|--repo' 'hygiene|--store' 'hygiene|-s' 'hygiene|--stale-days' 'import|--store' 'import|-s' 'list|--store' 'list|-s' 'list|--branch' 'list|-b' 'mcp|--max-chars' 'mcp|--lock-wait' 'recall|--store' 'recall|-s' 'recall|--branch' 'recall|-b' 'recall|--limit' 'recall|-n' 'recall|--mode' 'recall|-m' 'recall|--floor' 'recall|--budget' 'reindex|--store' 'reindex|-s' 'remember|--store' 'remember|-s' 'remember|--branch' 'remember|-b' 'remember|--confidence' 'remember|-c' 'rename|--store' 'rename|-s' 'rescope|--from' 'rescope|--to' 'rescope|--store' 'rescope|-s' 'restore-memory|--version' 'restore-memory|--store' 'restore-memory|-s' 'search|--limit' 'search|-n' 'search|--mode' 'search|-m' 'show|--store' 'show|-s' 'stores|--drop' 'unarchive|--store' 'unarchive|-s'
            return 0
    end
    return 1
end

# Command path and count of its arguments typed so far, as "PATH|N".
function __thatch_state
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l path ''
    set -l nargs 0
    set -l skip 0
    set -l dashdash 0
    for tok in $tokens
        if test $skip = 1
            set skip 0
            continue
        end
        if test $dashdash = 0
            switch $tok
                case --
                    set dashdash 1
                    continue
                case '--*=*'
                    continue
                case '-?*'
                    __thatch_takes_value "$path" $tok; and set skip 1
                    continue
            end
        end
        if test $nargs = 0; and contains -- $tok (__thatch_subcommands "$path")
            set path (string trim -- "$path $tok")
        else
            set nargs (math $nargs + 1)
        end
    end
    echo "$path|$nargs"
end

# True while completing options of command path $argv[1].
function __thatch_at
    string match -q -- "$argv[1]|*" (__thatch_state)
end

# True while completing argument $argv[2] (from 0) of command path $argv[1].
function __thatch_arg
    test (__thatch_state) = "$argv[1]|$argv[2]"
end

# Values from the database (`thatch _complete KIND`), honouring --store.
function __thatch_values
    set -l tokens (commandline -opc)
    set -l args _complete $argv[1]
    for i in (seq (count $tokens))
        switch $tokens[$i]
            case --store -s
                set -l next (math $i + 1)
                if test $next -le (count $tokens)
                    set args _complete $argv[1] --store $tokens[$next]
                end
            case '--store=*'
                set args _complete $argv[1] --store (string replace -- '--store=' '' $tokens[$i])
        end
    end
    set -l found (command thatch $args 2>/dev/null)
    # A label starting with '-' would read as an option: before a '--' on the
    # line, offer '--' in its place (fish inserts one word at a time).
    if test "$argv[1]" = labels; and not contains -- -- $tokens
        string match -v -- '-*' $found
        if string match -q -- '-*' $found
            printf '%s\t%s\n' -- "then labels that start with '-'"
        end
        return
    end
    string join \n -- $found
end

complete -c thatch -f
complete -c thatch -n '__thatch_at \'\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'\'' -l version -d 'Show the version and exit'
complete -c thatch -n '__thatch_at \'\'' -s V -d 'Show the version and exit'
complete -c thatch -n '__thatch_at \'\'' -s v -d 'Show the version and exit'
complete -c thatch -n '__thatch_arg \'\' 0' -a archive -d 'Archive one memory, or every live memory of a branch: kept as record, left out of recall and hygiene'
complete -c thatch -n '__thatch_arg \'\' 0' -a backup -d 'Copy the database to a verified backup file, while it stays in use (never overwrites a file)'
complete -c thatch -n '__thatch_arg \'\' 0' -a completion -d 'Shell completion for bash, zsh and fish'
complete -c thatch -n '__thatch_arg \'\' 0' -a config -d 'Settings that last: ~/.config/thatch/config.toml (environment variables override it)'
complete -c thatch -n '__thatch_arg \'\' 0' -a daemon -d 'The background process that keeps the embedding model loaded (started automatically)'
complete -c thatch -n '__thatch_arg \'\' 0' -a dedup -d 'Verdicts on near-duplicate pairs, so duplicates and hygiene stop reporting them'
complete -c thatch -n '__thatch_arg \'\' 0' -a duplicates -d 'List clusters of near-duplicate memories in a store (never deletes; exits 0)'
complete -c thatch -n '__thatch_arg \'\' 0' -a edit -d 'Edit a memory in $VISUAL or $EDITOR, then save it in place'
complete -c thatch -n '__thatch_arg \'\' 0' -a export -d 'Export memories as JSONL, one memory per line with every column'
complete -c thatch -n '__thatch_arg \'\' 0' -a forget -d 'Delete one memory and its duplicate verdicts, from the detected store unless told otherwise'
complete -c thatch -n '__thatch_arg \'\' 0' -a help -d 'Show the help of thatch or of one command'
complete -c thatch -n '__thatch_arg \'\' 0' -a history -d 'List the earlier versions of a memory kept by overwrites, edits, renames, archiving and forgetting'
complete -c thatch -n '__thatch_arg \'\' 0' -a hooks -d 'Git hooks: memories of the branch you switch to, notice of deleted branches'
complete -c thatch -n '__thatch_arg \'\' 0' -a hygiene -d 'Report near-duplicates, stale memories and memories of deleted branches (never deletes)'
complete -c thatch -n '__thatch_arg \'\' 0' -a import -d 'Import memories from JSONL (as written by export); embeds those without a usable vector'
complete -c thatch -n '__thatch_arg \'\' 0' -a init -d 'Print the shell hook: a one-line memory summary when you enter a repository or switch branch'
complete -c thatch -n '__thatch_arg \'\' 0' -a list -d 'List the memories of a store (default: the detected one), newest first'
complete -c thatch -n '__thatch_arg \'\' 0' -a mcp -d 'Serve the memory store to coding agents over MCP (stdio): the original thatch\'s tools'
complete -c thatch -n '__thatch_arg \'\' 0' -a recall -d 'Find memories by meaning and by their words: the detected store plus global, unless told otherwise'
complete -c thatch -n '__thatch_arg \'\' 0' -a reindex -d 'Embed memories that have no vector, or one from a different model'
complete -c thatch -n '__thatch_arg \'\' 0' -a remember -d 'Save a memory. Saving the same label and text again changes nothing and says "unchanged"'
complete -c thatch -n '__thatch_arg \'\' 0' -a rename -d 'Give a memory a new label; its slug and dedup verdicts follow'
complete -c thatch -n '__thatch_arg \'\' 0' -a rescope -d 'Move the memories of one branch to another branch, or to the whole project (--unscoped)'
complete -c thatch -n '__thatch_arg \'\' 0' -a restore -d 'Replace the database with a verified backup; the current file is backed up first'
complete -c thatch -n '__thatch_arg \'\' 0' -a restore-memory -d 'Bring back a forgotten memory or an earlier version of one (undoes the last change by default)'
complete -c thatch -n '__thatch_arg \'\' 0' -a search -d 'Find memories: `thatch recall` as the original thatch spells it, with the original\'s stores'
complete -c thatch -n '__thatch_arg \'\' 0' -a setup -d 'Wire a coding agent to thatch: the MCP server, the memory hooks and an instruction block'
complete -c thatch -n '__thatch_arg \'\' 0' -a show -d 'Print one memory in full: from the detected store, else from global (it says so)'
complete -c thatch -n '__thatch_arg \'\' 0' -a stores -d 'List stores with their memory counts and last update (tab-separated when piped)'
complete -c thatch -n '__thatch_arg \'\' 0' -a unarchive -d 'Bring an archived memory back into recall (restoring a live one changes nothing)'
complete -c thatch -n '__thatch_at \'archive\'' -l branch -r -f -a '(__thatch_values branches)' -d 'Archive every live memory of this branch instead'
complete -c thatch -n '__thatch_at \'archive\'' -s b -r -f -a '(__thatch_values branches)' -d 'Archive every live memory of this branch instead'
complete -c thatch -n '__thatch_at \'archive\'' -l this-branch -d 'Archive every live memory of the current branch'
complete -c thatch -n '__thatch_at \'archive\'' -l store -r -f -a '(__thatch_values stores)' -d 'Store to use instead of the detected one (also THATCH_STORE)'
complete -c thatch -n '__thatch_at \'archive\'' -s s -r -f -a '(__thatch_values stores)' -d 'Store to use instead of the detected one (also THATCH_STORE)'
complete -c thatch -n '__thatch_at \'archive\'' -l global -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'archive\'' -s g -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'archive\'' -l json -d 'Print JSON with stable keys (listed below); errors too'
complete -c thatch -n '__thatch_at \'archive\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'archive\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_arg \'archive\' 0' -f -a '(__thatch_values labels)'
complete -c thatch -n '__thatch_at \'backup\'' -l json -d 'Print JSON with stable keys (listed below); errors too'
complete -c thatch -n '__thatch_at \'backup\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'backup\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_arg \'backup\' 0' -F -d 'File or directory to write (default: beside the database)'
complete -c thatch -n '__thatch_at \'completion\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'completion\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_arg \'completion\' 0' -a install -d 'Install the completion script where your shell looks for it (safe to re-run)'
complete -c thatch -n '__thatch_arg \'completion\' 0' -a show -d 'Print the completion script for a shell'
complete -c thatch -n '__thatch_at \'completion install\'' -l json -d 'Print JSON with stable keys (listed below); errors too'
complete -c thatch -n '__thatch_at \'completion install\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'completion install\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_arg \'completion install\' 0' -f -a 'bash zsh fish' -d 'bash, zsh or fish (default: the shell you are running)'
complete -c thatch -n '__thatch_at \'completion show\'' -l json -d 'Print JSON with stable keys (listed below); errors too'
complete -c thatch -n '__thatch_at \'completion show\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'completion show\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_arg \'completion show\' 0' -f -a 'bash zsh fish' -d 'bash, zsh or fish (default: the shell you are running)'
complete -c thatch -n '__thatch_at \'config\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'config\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_arg \'config\' 0' -a get -d 'Print a setting\'s value (from its environment variable, the settings file, or the default)'
complete -c thatch -n '__thatch_arg \'config\' 0' -a list -d 'Every setting with its value and where it comes from (default, file or env)'
complete -c thatch -n '__thatch_arg \'config\' 0' -a path -d 'Print where the settings file is (it may not exist yet)'
complete -c thatch -n '__thatch_arg \'config\' 0' -a set -d 'Save a setting in the settings file, for every new terminal'
complete -c thatch -n '__thatch_arg \'config\' 0' -a unset -d 'Remove a setting from the settings file (back to its default)'
complete -c thatch -n '__thatch_at \'config get\'' -l json -d 'Print JSON with stable keys (listed below); errors too'
complete -c thatch -n '__thatch_at \'config get\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'config get\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'config list\'' -l json -d 'Print JSON with stable keys (listed below); errors too'
complete -c thatch -n '__thatch_at \'config list\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'config list\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'config path\'' -l json -d 'Print JSON with stable keys (listed below); errors too'
complete -c thatch -n '__thatch_at \'config path\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'config path\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'config set\'' -l json -d 'Print JSON with stable keys (listed below); errors too'
complete -c thatch -n '__thatch_at \'config set\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'config set\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'config unset\'' -l json -d 'Print JSON with stable keys (listed below); errors too'
complete -c thatch -n '__thatch_at \'config unset\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'config unset\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'daemon\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'daemon\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_arg \'daemon\' 0' -a start -d 'Start the daemon (if needed) and wait until its model is loaded'
complete -c thatch -n '__thatch_arg \'daemon\' 0' -a status -d 'Show pid, model, thatch version, uptime, resident memory and requests served'
complete -c thatch -n '__thatch_arg \'daemon\' 0' -a stop -d 'Stop the daemon; the next command that needs a vector starts it again'
complete -c thatch -n '__thatch_at \'daemon start\'' -l json -d 'Print JSON with stable keys (listed below); errors too'
complete -c thatch -n '__thatch_at \'daemon start\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'daemon start\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'daemon status\'' -l json -d 'Print JSON with stable keys (listed below); errors too'
complete -c thatch -n '__thatch_at \'daemon status\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'daemon status\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'daemon stop\'' -l json -d 'Print JSON with stable keys (listed below); errors too'
complete -c thatch -n '__thatch_at \'daemon stop\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'daemon stop\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'dedup\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'dedup\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_arg \'dedup\' 0' -a keep -d 'Record that two similar memories are distinct and both worth keeping'
complete -c thatch -n '__thatch_arg \'dedup\' 0' -a list -d 'List the recorded dedup verdicts of a store'
complete -c thatch -n '__thatch_arg \'dedup\' 0' -a mark -d 'Record a verdict on a similar pair: duplicate, supplement, contradiction or unrelated'
complete -c thatch -n '__thatch_at \'dedup keep\'' -l store -r -f -a '(__thatch_values stores)' -d 'Store to use instead of the detected one (also THATCH_STORE)'
complete -c thatch -n '__thatch_at \'dedup keep\'' -s s -r -f -a '(__thatch_values stores)' -d 'Store to use instead of the detected one (also THATCH_STORE)'
complete -c thatch -n '__thatch_at \'dedup keep\'' -l global -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'dedup keep\'' -s g -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'dedup keep\'' -l json -d 'Print JSON with stable keys (listed below); errors too'
complete -c thatch -n '__thatch_at \'dedup keep\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'dedup keep\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_arg \'dedup keep\' 0' -f -a '(__thatch_values labels)'
complete -c thatch -n '__thatch_arg \'dedup keep\' 1' -f -a '(__thatch_values labels)'
complete -c thatch -n '__thatch_at \'dedup list\'' -l store -r -f -a '(__thatch_values stores)' -d 'Store to use instead of the detected one (also THATCH_STORE)'
complete -c thatch -n '__thatch_at \'dedup list\'' -s s -r -f -a '(__thatch_values stores)' -d 'Store to use instead of the detected one (also THATCH_STORE)'
complete -c thatch -n '__thatch_at \'dedup list\'' -l global -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'dedup list\'' -s g -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'dedup list\'' -l json -d 'Print JSON with stable keys (listed below); errors too'
complete -c thatch -n '__thatch_at \'dedup list\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'dedup list\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'dedup mark\'' -l status -r -f -a 'duplicate supplement contradiction unrelated' -d 'How the two memories relate: duplicate, supplement, contradiction or unrelated'
complete -c thatch -n '__thatch_at \'dedup mark\'' -l store -r -f -a '(__thatch_values stores)' -d 'Store to use instead of the detected one (also THATCH_STORE)'
complete -c thatch -n '__thatch_at \'dedup mark\'' -s s -r -f -a '(__thatch_values stores)' -d 'Store to use instead of the detected one (also THATCH_STORE)'
complete -c thatch -n '__thatch_at \'dedup mark\'' -l global -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'dedup mark\'' -s g -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'dedup mark\'' -l json -d 'Print JSON with stable keys (listed below); errors too'
complete -c thatch -n '__thatch_at \'dedup mark\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'dedup mark\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_arg \'dedup mark\' 0' -f -a '(__thatch_values labels)'
complete -c thatch -n '__thatch_arg \'dedup mark\' 1' -f -a '(__thatch_values labels)'
complete -c thatch -n '__thatch_at \'duplicates\'' -l store -r -f -a '(__thatch_values stores)' -d 'Store to use instead of the detected one (also THATCH_STORE)'
complete -c thatch -n '__thatch_at \'duplicates\'' -s s -r -f -a '(__thatch_values stores)' -d 'Store to use instead of the detected one (also THATCH_STORE)'
complete -c thatch -n '__thatch_at \'duplicates\'' -l global -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'duplicates\'' -s g -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'duplicates\'' -l threshold -r -f -d 'Report pairs scoring at least this (0-1, the same for every model; above 0, at most 1; default: setting duplicates.threshold, 0.85)'
complete -c thatch -n '__thatch_at \'duplicates\'' -s t -r -f -d 'Report pairs scoring at least this (0-1, the same for every model; above 0, at most 1; default: setting duplicates.threshold, 0.85)'
complete -c thatch -n '__thatch_at \'duplicates\'' -l limit -r -f -d 'Report the best N pairs (1-10000); counts still cover every pair'
complete -c thatch -n '__thatch_at \'duplicates\'' -s n -r -f -d 'Report the best N pairs (1-10000); counts still cover every pair'
complete -c thatch -n '__thatch_at \'duplicates\'' -l json -d 'Print JSON with stable keys (listed below); errors too'
complete -c thatch -n '__thatch_at \'duplicates\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'duplicates\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'edit\'' -l store -r -f -a '(__thatch_values stores)' -d 'Store to use instead of the detected one (also THATCH_STORE)'
complete -c thatch -n '__thatch_at \'edit\'' -s s -r -f -a '(__thatch_values stores)' -d 'Store to use instead of the detected one (also THATCH_STORE)'
complete -c thatch -n '__thatch_at \'edit\'' -l global -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'edit\'' -s g -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'edit\'' -l json -d 'Print JSON with stable keys (listed below); errors too'
complete -c thatch -n '__thatch_at \'edit\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'edit\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_arg \'edit\' 0' -f -a '(__thatch_values labels)'
complete -c thatch -n '__thatch_arg \'edit\' 1' -f -a '(__thatch_values stores)'
complete -c thatch -n '__thatch_at \'export\'' -l store -r -f -a '(__thatch_values stores)' -d 'Store to export (default: detected)'
complete -c thatch -n '__thatch_at \'export\'' -s s -r -f -a '(__thatch_values stores)' -d 'Store to export (default: detected)'
complete -c thatch -n '__thatch_at \'export\'' -l global -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'export\'' -s g -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'export\'' -l all -d 'Export every store'
complete -c thatch -n '__thatch_at \'export\'' -l all-stores -d 'Export every store'
complete -c thatch -n '__thatch_at \'export\'' -s a -d 'Export every store'
complete -c thatch -n '__thatch_at \'export\'' -l with-vectors -d 'Include embeddings (base64 little-endian float32)'
complete -c thatch -n '__thatch_at \'export\'' -l output -r -F -d 'Write to FILE instead of stdout'
complete -c thatch -n '__thatch_at \'export\'' -s o -r -F -d 'Write to FILE instead of stdout'
complete -c thatch -n '__thatch_at \'export\'' -l json -d 'Print JSON with stable keys (listed below); errors too'
complete -c thatch -n '__thatch_at \'export\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'export\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'forget\'' -l store -r -f -a '(__thatch_values stores)' -d 'Store to use instead of the detected one (also THATCH_STORE)'
complete -c thatch -n '__thatch_at \'forget\'' -s s -r -f -a '(__thatch_values stores)' -d 'Store to use instead of the detected one (also THATCH_STORE)'
complete -c thatch -n '__thatch_at \'forget\'' -l global -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'forget\'' -s g -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'forget\'' -l json -d 'Print JSON with stable keys (listed below); errors too'
complete -c thatch -n '__thatch_at \'forget\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'forget\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_arg \'forget\' 0' -f -a '(__thatch_values labels)'
complete -c thatch -n '__thatch_arg \'forget\' 1' -f -a '(__thatch_values stores)'
complete -c thatch -n '__thatch_at \'help\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'help\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'history\'' -l store -r -f -a '(__thatch_values stores)' -d 'Store to use instead of the detected one (also THATCH_STORE)'
complete -c thatch -n '__thatch_at \'history\'' -s s -r -f -a '(__thatch_values stores)' -d 'Store to use instead of the detected one (also THATCH_STORE)'
complete -c thatch -n '__thatch_at \'history\'' -l global -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'history\'' -s g -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'history\'' -l json -d 'Print JSON with stable keys (listed below); errors too'
complete -c thatch -n '__thatch_at \'history\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'history\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_arg \'history\' 0' -f -a '(__thatch_values labels)'
complete -c thatch -n '__thatch_at \'hooks\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'hooks\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_arg \'hooks\' 0' -a install -d 'Install the post-checkout and reference-transaction hooks (again: no change)'
complete -c thatch -n '__thatch_arg \'hooks\' 0' -a status -d 'Show each hook\'s state: installed, chained (runs your previous hook too), foreign, or missing'
complete -c thatch -n '__thatch_arg \'hooks\' 0' -a uninstall -d 'Remove thatch\'s hooks, putting back byte for byte any hook they replaced'
complete -c thatch -n '__thatch_at \'hooks install\'' -l repo -r -F -d 'Repository (any directory or linked worktree in it); default: the current one'
complete -c thatch -n '__thatch_at \'hooks install\'' -l json -d 'Print JSON with stable keys (listed below); errors too'
complete -c thatch -n '__thatch_at \'hooks install\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'hooks install\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'hooks status\'' -l repo -r -F -d 'Repository (any directory or linked worktree in it); default: the current one'
complete -c thatch -n '__thatch_at \'hooks status\'' -l json -d 'Print JSON with stable keys (listed below); errors too'
complete -c thatch -n '__thatch_at \'hooks status\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'hooks status\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'hooks uninstall\'' -l repo -r -F -d 'Repository (any directory or linked worktree in it); default: the current one'
complete -c thatch -n '__thatch_at \'hooks uninstall\'' -l json -d 'Print JSON with stable keys (listed below); errors too'
complete -c thatch -n '__thatch_at \'hooks uninstall\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'hooks uninstall\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'hygiene\'' -l store -r -f -a '(__thatch_values stores)' -d 'Store to use instead of the detected one (also THATCH_STORE)'
complete -c thatch -n '__thatch_at \'hygiene\'' -s s -r -f -a '(__thatch_values stores)' -d 'Store to use instead of the detected one (also THATCH_STORE)'
complete -c thatch -n '__thatch_at \'hygiene\'' -l global -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'hygiene\'' -s g -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'hygiene\'' -l stale-days -r -f -d 'Call a memory stale after this many days without update or recall'
complete -c thatch -n '__thatch_at \'hygiene\'' -l json -d 'Print JSON with stable keys (listed below); errors too'
complete -c thatch -n '__thatch_at \'hygiene\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'hygiene\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'import\'' -l overwrite -d 'Replace memories whose label already exists'
complete -c thatch -n '__thatch_at \'import\'' -l store -r -f -a '(__thatch_values stores)' -d 'Import every memory into this store'
complete -c thatch -n '__thatch_at \'import\'' -s s -r -f -a '(__thatch_values stores)' -d 'Import every memory into this store'
complete -c thatch -n '__thatch_at \'import\'' -l global -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'import\'' -s g -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'import\'' -l json -d 'Print JSON with stable keys (listed below); errors too'
complete -c thatch -n '__thatch_at \'import\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'import\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_arg \'import\' 0' -F -d 'JSONL file to import (\'-\' reads stdin)'
complete -c thatch -n '__thatch_at \'init\'' -l deactivate -d 'Print what removes the hook from the running shell instead'
complete -c thatch -n '__thatch_at \'init\'' -l json -d 'Print JSON with stable keys (listed below); errors too'
complete -c thatch -n '__thatch_at \'init\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'init\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_arg \'init\' 0' -f -a 'bash zsh fish' -d 'Shell to print the hook for (default: the one running thatch)'
complete -c thatch -n '__thatch_at \'list\'' -l store -r -f -a '(__thatch_values stores)' -d 'Store to use instead of the detected one (also THATCH_STORE)'
complete -c thatch -n '__thatch_at \'list\'' -s s -r -f -a '(__thatch_values stores)' -d 'Store to use instead of the detected one (also THATCH_STORE)'
complete -c thatch -n '__thatch_at \'list\'' -l global -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'list\'' -s g -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'list\'' -l branch -r -f -a '(__thatch_values branches)' -d 'Only memories scoped to this branch'
complete -c thatch -n '__thatch_at \'list\'' -s b -r -f -a '(__thatch_values branches)' -d 'Only memories scoped to this branch'
complete -c thatch -n '__thatch_at \'list\'' -l this-branch -d 'Only memories scoped to the current branch'
complete -c thatch -n '__thatch_at \'list\'' -l all-branches -d 'Memories of every branch and unscoped ones (the default, said explicitly)'
complete -c thatch -n '__thatch_at \'list\'' -l archived -d 'List archived memories instead of live ones'
complete -c thatch -n '__thatch_at \'list\'' -l json -d 'Print JSON with stable keys (listed below); errors too'
complete -c thatch -n '__thatch_at \'list\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'list\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_arg \'list\' 0' -f -a '(__thatch_values stores)'
complete -c thatch -n '__thatch_at \'mcp\'' -l max-chars -r -f -d 'Cap each tool result at CHARS characters (default: setting mcp.max_chars, 20000)'
complete -c thatch -n '__thatch_at \'mcp\'' -l lock-wait -r -f -d 'How long a write waits for another writer\'s lock'
complete -c thatch -n '__thatch_at \'mcp\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'mcp\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'recall\'' -l store -r -f -a '(__thatch_values stores)' -d 'Search only this store'
complete -c thatch -n '__thatch_at \'recall\'' -s s -r -f -a '(__thatch_values stores)' -d 'Search only this store'
complete -c thatch -n '__thatch_at \'recall\'' -l global -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'recall\'' -s g -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'recall\'' -l all-stores -d 'Search every store'
complete -c thatch -n '__thatch_at \'recall\'' -s a -d 'Search every store'
complete -c thatch -n '__thatch_at \'recall\'' -l branch -r -f -a '(__thatch_values branches)' -d 'Include this branch\'s memories instead of the current branch\'s'
complete -c thatch -n '__thatch_at \'recall\'' -s b -r -f -a '(__thatch_values branches)' -d 'Include this branch\'s memories instead of the current branch\'s'
complete -c thatch -n '__thatch_at \'recall\'' -l this-branch -d 'Include the current branch\'s memories (the default)'
complete -c thatch -n '__thatch_at \'recall\'' -l all-branches -d 'Include the memories of every branch (each result names its branch)'
complete -c thatch -n '__thatch_at \'recall\'' -l limit -r -f -d 'Most results to show (default: setting recall.limit, 10)'
complete -c thatch -n '__thatch_at \'recall\'' -s n -r -f -d 'Most results to show (default: setting recall.limit, 10)'
complete -c thatch -n '__thatch_at \'recall\'' -l include-archived -d 'Search archived memories too'
complete -c thatch -n '__thatch_at \'recall\'' -l mode -r -f -a 'hybrid semantic lexical' -d 'Ranking: hybrid (meaning and exact words), semantic or lexical'
complete -c thatch -n '__thatch_at \'recall\'' -s m -r -f -a 'hybrid semantic lexical' -d 'Ranking: hybrid (meaning and exact words), semantic or lexical'
complete -c thatch -n '__thatch_at \'recall\'' -l floor -r -f -d 'Leave out matches scoring below SCORE, 0-1 (default: setting recall.floor, 0.35; 0 shows all)'
complete -c thatch -n '__thatch_at \'recall\'' -l show-weak -d 'Also list the matches below the floor, apart (never counted as recalled)'
complete -c thatch -n '__thatch_at \'recall\'' -l budget -r -f -d 'Cap stdout at CHARS characters, dropping whole results (JSON becomes one compact line)'
complete -c thatch -n '__thatch_at \'recall\'' -l json -d 'Print JSON with stable keys (listed below); errors too'
complete -c thatch -n '__thatch_at \'recall\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'recall\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'reindex\'' -l store -r -f -a '(__thatch_values stores)' -d 'Store to use instead of the detected one (also THATCH_STORE)'
complete -c thatch -n '__thatch_at \'reindex\'' -s s -r -f -a '(__thatch_values stores)' -d 'Store to use instead of the detected one (also THATCH_STORE)'
complete -c thatch -n '__thatch_at \'reindex\'' -l global -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'reindex\'' -s g -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'reindex\'' -l json -d 'Print JSON with stable keys (listed below); errors too'
complete -c thatch -n '__thatch_at \'reindex\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'reindex\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'remember\'' -l store -r -f -a '(__thatch_values stores)' -d 'Store to use instead of the detected one (also THATCH_STORE)'
complete -c thatch -n '__thatch_at \'remember\'' -s s -r -f -a '(__thatch_values stores)' -d 'Store to use instead of the detected one (also THATCH_STORE)'
complete -c thatch -n '__thatch_at \'remember\'' -l global -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'remember\'' -s g -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'remember\'' -l branch -r -f -a '(__thatch_values branches)' -d 'Scope the memory to this branch'
complete -c thatch -n '__thatch_at \'remember\'' -s b -r -f -a '(__thatch_values branches)' -d 'Scope the memory to this branch'
complete -c thatch -n '__thatch_at \'remember\'' -l this-branch -d 'Scope the memory to the current branch'
complete -c thatch -n '__thatch_at \'remember\'' -l confidence -r -f -d 'How sure you are, 1-10'
complete -c thatch -n '__thatch_at \'remember\'' -s c -r -f -d 'How sure you are, 1-10'
complete -c thatch -n '__thatch_at \'remember\'' -l overwrite -d 'Replace an existing memory with this label'
complete -c thatch -n '__thatch_at \'remember\'' -l archived -d 'Archive (or restore) it; required when updating an archived memory'
complete -c thatch -n '__thatch_at \'remember\'' -l no-archived -d 'Negate --archived'
complete -c thatch -n '__thatch_at \'remember\'' -l json -d 'Print JSON with stable keys (listed below); errors too'
complete -c thatch -n '__thatch_at \'remember\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'remember\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_arg \'remember\' 0' -f -a '(__thatch_values labels)'
complete -c thatch -n '__thatch_at \'rename\'' -l store -r -f -a '(__thatch_values stores)' -d 'Store to use instead of the detected one (also THATCH_STORE)'
complete -c thatch -n '__thatch_at \'rename\'' -s s -r -f -a '(__thatch_values stores)' -d 'Store to use instead of the detected one (also THATCH_STORE)'
complete -c thatch -n '__thatch_at \'rename\'' -l global -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'rename\'' -s g -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'rename\'' -l json -d 'Print JSON with stable keys (listed below); errors too'
complete -c thatch -n '__thatch_at \'rename\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'rename\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'rescope\'' -l from -r -f -a '(__thatch_values branches)' -d 'Branch whose memories move (live and archived)'
complete -c thatch -n '__thatch_at \'rescope\'' -l to -r -f -a '(__thatch_values branches)' -d 'Branch to scope them to instead'
complete -c thatch -n '__thatch_at \'rescope\'' -l unscoped -d 'Make them project-wide (e.g. after a merge)'
complete -c thatch -n '__thatch_at \'rescope\'' -l store -r -f -a '(__thatch_values stores)' -d 'Store to use instead of the detected one (also THATCH_STORE)'
complete -c thatch -n '__thatch_at \'rescope\'' -s s -r -f -a '(__thatch_values stores)' -d 'Store to use instead of the detected one (also THATCH_STORE)'
complete -c thatch -n '__thatch_at \'rescope\'' -l global -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'rescope\'' -s g -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'rescope\'' -l json -d 'Print JSON with stable keys (listed below); errors too'
complete -c thatch -n '__thatch_at \'rescope\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'rescope\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'restore\'' -l json -d 'Print JSON with stable keys (listed below); errors too'
complete -c thatch -n '__thatch_at \'restore\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'restore\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_arg \'restore\' 0' -F -d 'A backup file (from thatch backup)'
complete -c thatch -n '__thatch_at \'restore-memory\'' -l version -r -f -d 'Version to bring back (see thatch history; default: the newest)'
complete -c thatch -n '__thatch_at \'restore-memory\'' -l store -r -f -a '(__thatch_values stores)' -d 'Store to use instead of the detected one (also THATCH_STORE)'
complete -c thatch -n '__thatch_at \'restore-memory\'' -s s -r -f -a '(__thatch_values stores)' -d 'Store to use instead of the detected one (also THATCH_STORE)'
complete -c thatch -n '__thatch_at \'restore-memory\'' -l global -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'restore-memory\'' -s g -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'restore-memory\'' -l json -d 'Print JSON with stable keys (listed below); errors too'
complete -c thatch -n '__thatch_at \'restore-memory\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'restore-memory\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_arg \'restore-memory\' 0' -f -a '(__thatch_values labels)'
complete -c thatch -n '__thatch_at \'search\'' -l limit -r -f -d 'Most results to show (default: setting recall.limit, 10)'
complete -c thatch -n '__thatch_at \'search\'' -s n -r -f -d 'Most results to show (default: setting recall.limit, 10)'
complete -c thatch -n '__thatch_at \'search\'' -l mode -r -f -a 'hybrid semantic lexical' -d 'Ranking: hybrid (meaning and exact words), semantic or lexical'
complete -c thatch -n '__thatch_at \'search\'' -s m -r -f -a 'hybrid semantic lexical' -d 'Ranking: hybrid (meaning and exact words), semantic or lexical'
complete -c thatch -n '__thatch_at \'search\'' -l all-branches -d 'Include the memories of every branch (each result names its branch)'
complete -c thatch -n '__thatch_at \'search\'' -l json -d 'Print JSON with stable keys (listed below); errors too'
complete -c thatch -n '__thatch_at \'search\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'search\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'setup\'' -l global -d 'Wire your user configuration instead of this project'
complete -c thatch -n '__thatch_at \'setup\'' -l plan -d 'List every file and change; write nothing'
complete -c thatch -n '__thatch_at \'setup\'' -l uninstall -d 'Remove exactly what setup added'
complete -c thatch -n '__thatch_at \'setup\'' -l status -d 'Show which hosts are wired, and what drifted'
complete -c thatch -n '__thatch_at \'setup\'' -l json -d 'Print JSON with stable keys (listed below); errors too'
complete -c thatch -n '__thatch_at \'setup\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'setup\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_arg \'setup\' 0' -f -a 'claude cursor codex' -d 'claude, cursor or codex'
complete -c thatch -n '__thatch_at \'show\'' -l store -r -f -a '(__thatch_values stores)' -d 'Store to use instead of the detected one (also THATCH_STORE)'
complete -c thatch -n '__thatch_at \'show\'' -s s -r -f -a '(__thatch_values stores)' -d 'Store to use instead of the detected one (also THATCH_STORE)'
complete -c thatch -n '__thatch_at \'show\'' -l global -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'show\'' -s g -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'show\'' -l json -d 'Print JSON with stable keys (listed below); errors too'
complete -c thatch -n '__thatch_at \'show\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'show\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_arg \'show\' 0' -f -a '(__thatch_values labels)'
complete -c thatch -n '__thatch_arg \'show\' 1' -f -a '(__thatch_values stores)'
complete -c thatch -n '__thatch_at \'stores\'' -l drop -r -f -d 'Remove this store, which must be empty, from the list'
complete -c thatch -n '__thatch_at \'stores\'' -l json -d 'Print JSON with stable keys (listed below); errors too'
complete -c thatch -n '__thatch_at \'stores\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'stores\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'unarchive\'' -l store -r -f -a '(__thatch_values stores)' -d 'Store to use instead of the detected one (also THATCH_STORE)'
complete -c thatch -n '__thatch_at \'unarchive\'' -s s -r -f -a '(__thatch_values stores)' -d 'Store to use instead of the detected one (also THATCH_STORE)'
complete -c thatch -n '__thatch_at \'unarchive\'' -l global -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'unarchive\'' -s g -d 'Short for --store global'
complete -c thatch -n '__thatch_at \'unarchive\'' -l json -d 'Print JSON with stable keys (listed below); errors too'
complete -c thatch -n '__thatch_at \'unarchive\'' -l help -d 'Show help and exit'
complete -c thatch -n '__thatch_at \'unarchive\'' -s h -d 'Show help and exit'
complete -c thatch -n '__thatch_arg \'unarchive\' 0' -f -a '(__thatch_values labels)'
