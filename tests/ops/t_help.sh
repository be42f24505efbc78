#!/bin/bash
# --help as a user reads it, whatever path the binaries were started by:
#   - ztensord --help names the program "ztensord", never the absolute path it was run
#     by (NAME and SYNOPSIS), and so does a copy under another name;
#   - zt --help lists every flag of every subcommand, as the subcommand's own --help
#     lists them (zt pull's above all), and zt pull --help lists every flag its parser
#     knows (the "--name" strings compared with an argument in cli/tool_pull*.c).
. "$(dirname "$0")/lib.sh" "$@"

abs=$(cd "$(dirname "$ZTENSORD")" && pwd)/$(basename "$ZTENSORD")
out=$("$abs" --help)
check_match "ztensord --help: NAME is the program's name" "$(sed -n 2p <<<"$out")" '^    ztensord - '
check_match "ztensord --help: SYNOPSIS starts with the program's name" "$out" '^    ztensord --root DIR'
check_nomatch "ztensord --help: no path in it" "$out" "$(dirname "$abs")"
cp "$ZTENSORD" "$T/ztd-renamed"
check_match "a copy named ztd-renamed: NAME is ztd-renamed" "$("$T/ztd-renamed" --help | sed -n 2p)" '^    ztd-renamed - '
out=$(cd "$(dirname "$abs")" && ./"$(basename "$abs")" --help | sed -n 2p)
check_match "run as ./ztensord: NAME is ztensord" "$out" '^    ztensord - '

zabs=$(cd "$(dirname "$ZT")" && pwd)/$(basename "$ZT")
top=$("$zabs" --help)
check_nomatch "zt --help: no path in it" "$top" "$(dirname "$zabs")"
# flags_of TEXT: the -o and --name flags a help text shows
flags_of() { grep -oE '(^|[ ,[])(-o|--[a-z][a-z0-9-]*)' <<<"$1" | sed 's/^[ ,[]//' | sort -u; }
for cmd in info verify get pack convert pull; do
    sub=$("$zabs" "$cmd" --help 2>&1)
    # the lines of zt --help for this command (a synopsis line and its continuations)
    lines=$(awk -v c="    zt $cmd " 'index($0, c) == 1 { on = 1; print; next } on && /^            / { print; next } { on = 0 }' <<<"$top")
    check_ne "zt --help has a line for zt $cmd" "$lines" ""
    for f in $(flags_of "$sub"); do
        [ "$f" = --help ] && continue
        check_match "zt --help lists zt $cmd $f" "$lines" "(^|[ [])$f([][ =]|$)"
    done
done
pull_help=$("$zabs" pull --help 2>&1)
known=$(cat "$REPO"/cli/tool_pull*.c | grep -oE 'strcmp\((a|arg|argv\[i\]), "(-o|--[a-z][a-z0-9-]*)"' | grep -oE '"[^"]+"' | tr -d '"' | sort -u)
check_ne "zt pull's parser: flags found" "$known" ""
for f in $known; do
    [ "$f" = --help ] && continue
    check_match "zt pull --help lists $f" "$pull_help" "(^|[ [])$f([][ =]|$)"
done
finish
