
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
