#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/project/test_docs.sh — every command in README.md and docs/*.md runs as
# written, after the README's first command (scripts/train.sh), in the
# order the pages give them.
#
#   test_docs.sh SOURCE-DIR BUILD-DIR [--long]
#
# The commands are those of the pages' shell blocks (```sh), cut out by
# tests/project/docs-commands.awk; a transcript's are its "$ " lines, and a "^C"
# under one interrupts it once it trains (it must then exit 130). They run
# in a scratch folder that holds the source tree (linked) and build/ (the
# build under test), with a home folder of its own, so that what they write
# (simplecnn.safetensors, curves.png, an install in ~/.local) goes nowhere
# else; each page's blocks run one after the other, and what a block
# exports (PKG_CONFIG_PATH) holds for the rest of its page.
#
# Markers, in a command's comment (or on a comment line of their own, for
# the rest of the block), are how a page says a command cannot run here;
# each such command is reported, not run:
#
#   [needs: WHAT]   what this machine may lack. The test checks "opencl" (a
#                   usable opencl:0, such as PoCL) and "mpi" (mpirun, and
#                   ember-mpi in the build), and a path ("build/cu11": that it
#                   exists), and runs the command where they are; anything
#                   else ("an NVIDIA GPU", "a download", "an idle machine
#                   and an hour") is skipped, saying so.
#   [slow]          runs for minutes: only with --long (ctest -L long,
#                   test_docs_long), which runs every command.
set -u
SRC=$(cd "$1" && pwd) BUILD=$(cd "$2" && pwd) LONG=${3:-}
TMP=$(mktemp -d)
running=""
trap '[ -n "$running" ] && kill -TERM -$running 2>/dev/null; rm -rf "$TMP"' EXIT
trap 'exit 1' INT TERM
W=$TMP/work
mkdir -p "$W/home" "$TMP/cmds"
for entry in "$SRC"/* "$SRC"/.[!.]*; do
    name=$(basename "$entry")
    case $name in build | build-* | .git | '.[!.]*') continue ;; esac
    ln -s "$entry" "$W/$name"
done
ln -s "$BUILD" "$W/build"

# the commands of every page, in order: README.md first
: >"$TMP/list"
for page in README.md docs/*.md; do
    [ -f "$SRC/$page" ] || continue
    first=$(($(ls "$TMP/cmds" | wc -l) + 1))
    awk -v out="$TMP/cmds" -v file="$page" -v first="$first" -f "$SRC/tests/project/docs-commands.awk" "$SRC/$page" >>"$TMP/list"
done

# what this machine has, of what the markers name
has_opencl=no
"$BUILD/ember" devices --json 2>/dev/null | grep -A4 '"name": "opencl:0",' | grep -q '"usable": true' && has_opencl=yes
has_mpi=no
command -v mpirun >/dev/null 2>&1 && [ -x "$BUILD/ember-mpi" ] && has_mpi=yes
# why a command is not run here, or nothing
skip_reason() { # NEEDS SLOW
    case $1 in
    -) ;;
    opencl) [ $has_opencl = yes ] || { echo "[needs: opencl]: no usable opencl:0 here"; return; } ;;
    mpi) [ $has_mpi = yes ] || { echo "[needs: mpi]: no mpirun or no ember-mpi here"; return; } ;;
    */*) [ -e "$W/$1" ] || { echo "[needs: $1]: not here"; return; } ;;
    *) echo "[needs: $1]"; return ;;
    esac
    [ "$2" = 1 ] && [ "$LONG" != --long ] && echo "[slow]: test_docs_long runs it (ctest -L long)"
}

# the environment the commands run in
export HOME="$W/home" EMBER_CACHE_DIR="$BUILD/test-cache" POCL_CACHE_DIR="$BUILD/test-cache/pocl"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_rmaps_base_oversubscribe=1
unset XDG_CACHE_HOME EMBER_DEVICE
: >"$TMP/env"

# each block as one script: the commands in order, a skipped one said, an interrupted one
# interrupted; the environment it leaves kept for the next block of the page
ran=0 skipped=0 failed=0 blocks=$(grep -v '^INTERRUPT' "$TMP/list" | cut -f2 | uniq)
page_of() { echo "${1%%#*}"; }
last_page=""
for block in $blocks; do
    [ "$(page_of "$block")" = "$last_page" ] || : >"$TMP/env"
    last_page=$(page_of "$block")
    script=$TMP/block.sh
    lines=""
    {
        echo ". '$TMP/env'"
        echo "set -e"
        echo "cd '$W'"
    } >"$script"
    grep -F "	$block	" "$TMP/list" >"$TMP/block.list"
    while IFS="	" read -r n _ where needs slow; do
        why=$(skip_reason "$needs" "$slow")
        if [ -n "$why" ]; then
            printf '%s  skipped %s: %s\n' "$where" "$why" "$(head -1 "$TMP/cmds/$n.cmd" | cut -c1-100)"
            skipped=$((skipped + 1))
            continue
        fi
        echo "echo '$n' >'$TMP/current'" >>"$script"
        if grep -q "^INTERRUPT	$n\$" "$TMP/list"; then
            # in the background, Ctrl-C once it trains: it must stop, save and say how to go on (130)
            cat >>"$script" <<EOT
sh -c "exec \$(cat '$TMP/cmds/$n.cmd' | sed 's/#.*//')" >'$TMP/int.out' 2>&1 &
pid=\$!
i=0; while ! grep -q 'adam lr' '$TMP/int.out' && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done
sleep 1; kill -INT \$pid; st=0; wait \$pid || st=\$?; cat '$TMP/int.out'
[ \$st -eq 130 ] || { echo "interrupted, it exited \$st, not 130"; exit 1; }
EOT
        else
            cat "$TMP/cmds/$n.cmd" >>"$script"
        fi
        echo "$n $where" >>"$TMP/ran"
        lines="$lines${lines:+,}${where##*:}"
        ran=$((ran + 1))
    done <"$TMP/block.list"
    echo "export -p >'$TMP/env'" >>"$script"
    [ -n "$lines" ] || continue # every command of it skipped, and said so
    start=$(date +%s)
    limit=600
    [ "$LONG" = --long ] && limit=3600
    # in a session of its own, so that a timeout (or this test's end) stops all it started
    setsid sh "$script" >"$TMP/out" 2>&1 &
    running=$!
    setsid sh -c "sleep $limit && kill -TERM -$running && echo timeout >'$TMP/timed-out'" 2>/dev/null &
    watchdog=$!
    status=0
    wait $running || status=$?
    kill -TERM -$watchdog 2>/dev/null
    running=""
    if [ $status -eq 0 ]; then
        printf '%s  ran: lines %s (%d s)\n' "${block%%#*}" "$lines" $(($(date +%s) - start))
    else
        n=$(cat "$TMP/current" 2>/dev/null)
        where=$(grep "^$n " "$TMP/ran" | cut -d' ' -f2)
        echo "FAILED: $where: the command exited $status$([ -f "$TMP/timed-out" ] && echo ", stopped after $limit s"):"
        sed 's/^/    /' "$TMP/cmds/$n.cmd"
        echo "  its output, the last lines:"
        tail -n 25 "$TMP/out" | sed 's/^/    /'
        failed=$((failed + 1))
        rm -f "$TMP/timed-out"
    fi
    rm -f "$TMP/current"
done
# what the commands left where a user runs them, the repository's root, is
# what .gitignore keeps out of `git status` (checkpoints, plots, metrics, ...)
if git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1; then
    for entry in "$W"/* "$W"/.[!.]*; do
        name=$(basename "$entry")
        [ -e "$entry" ] && [ ! -L "$entry" ] && [ "$name" != home ] || continue
        if ! git -C "$SRC" check-ignore -q --no-index -- "$name"; then
            echo "FAILED: the pages' commands leave $name in the repository's root, and .gitignore does not cover it"
            failed=$((failed + 1))
        fi
    done
fi
echo "docs: $ran commands given to run, $skipped skipped (said above); $failed blocks failed"
[ $failed -eq 0 ]
