#!/bin/sh
# SPDX-License-Identifier: MIT
# cmake/ember-man.sh — the man pages, made from the program's own help text,
# so that they never say other than `--help` does: ember(1) from
# `ember --help`, with its commands, and ember-COMMAND(1) from each
# `ember COMMAND --help`. The build runs it (CMakeLists.txt, ember_man).
#
#   cmake/ember-man.sh EMBER OUTPUT-DIR DOC-DIR
#
# EMBER_RUN, when set, is what runs the program: a cross build's emulator
# (qemu-aarch64-static for cmake/aarch64-linux-gnu.cmake's build).
#
# In the help text: "usage:" lines are the synopsis; a line indented by
# two spaces is an item of a list (an option, an operand, a command), and
# the more indented lines under it the rest of its description; a list
# goes under OPTIONS, or under the heading a one-line paragraph such as
# "commands:" gives just before it; any other paragraph is prose.
set -eu
case "${1:-}" in
-h | --help)
    sed -n '1d; /^# --help:/q; /^#/!q; /SPDX-License-Identifier/d; s/^# \{0,1\}//p' "$0"
    exit 0
    ;;
esac
if [ $# -ne 3 ]; then
    echo "usage: cmake/ember-man.sh EMBER OUTPUT-DIR DOC-DIR (--help says more)" >&2
    exit 2
fi
EMBER=$1 OUT=$2 DOCS=$3
mkdir -p "$OUT"
version=$(${EMBER_RUN:-} "$EMBER" --version | sed 's/^ember //')

# roff-safe text: backslashes doubled, a leading . or ' escaped, - as a
# hyphen-minus; lines marked with a leading \001 are requests, kept as they are
roff() { sed -e '/^\x01/!{s/\\/\\e/g; s/-/\\-/g; s/^\([.'"'"']\)/\\\&\1/}' -e 's/^\x01//'; }

# page NAME SUMMARY HELP-FILE SEE-ALSO
page() {
    name=$1 summary=$2 help=$3 see=$4
    upper=$(echo "$name" | tr 'a-z' 'A-Z')
    {
        printf '\001.TH %s 1 "" "ember %s" "User Commands"\n\001.SH NAME\n' "$upper" "$version"
        printf '\001%s \\- %s\n' "$(echo "$name" | sed 's/-/\\-/g')" "$(echo "$summary" | sed 's/\\/\\e/g; s/-/\\-/g')"
        printf '\001.SH SYNOPSIS\n'
        sed -n 's/^usage: //p; s/^       \(ember .*\)/\1/p' "$help" | sed 's/$/\n\x01.br/'
        awk '
            # a paragraph of prose is held until it is known whether it is a
            # heading ("commands:", a line of its own just before a list)
            function flush() { if (held != "") { if (!described) { print "\001.SH DESCRIPTION"; described = 1 } else print "\001.PP"; print held; held = "" } }
            /^usage: / || /^       ember / { next }
            /^$/ { gap = 1; next }
            /^  [^ ]/ {                                     # a list item: an option, an operand, a command
                if (!in_list) {
                    if (held != "" && held !~ /\n/ && held ~ /:$/) { sub(/:$/, "", held); print "\001.SH " toupper(held); held = "" }
                    else { flush(); print "\001.SH OPTIONS" }
                    in_list = 1
                }
                line = substr($0, 3)
                # the item (an option and its value), two or more spaces, the text
                if (match(line, /  +/) && RSTART > 1) { item = substr(line, 1, RSTART - 1); text = substr(line, RSTART + RLENGTH) }
                else { item = line; text = "" }
                print "\001.TP"; print "\001.B"; print item; if (text != "") print text
                gap = 0; next
            }
            /^   / && in_list && !gap { sub(/^ +/, ""); print; next }  # the item goes on
            {                                                # prose
                if (gap || in_list) flush()
                in_list = 0; gap = 0
                sub(/^ +/, ""); held = held == "" ? $0 : held "\n" $0
            }
            END { flush() }
        ' "$help"
        printf '\001.SH SEE ALSO\n%s\n\001.PP\n' "$see"
        printf 'The documents cited above (README.md, docs/*.md) are installed in %s.\n' "$DOCS"
    } | roff >"$OUT/$name.1"
}

# (its last paragraph, where the documents are, is said at the end of every page)
${EMBER_RUN:-} "$EMBER" --help | sed '/^The documents the help cites/,$d' >"$OUT/ember.help"
commands=$(sed -n '/^commands:/,/^$/s/^  \([a-z][a-z]*\)  .*/\1/p' "$OUT/ember.help")
see=""
for c in $commands; do see="$see${see:+, }ember-$c(1)"; done
page ember "train small neural networks on the CPU, OpenCL devices and NVIDIA GPUs" "$OUT/ember.help" "$see"
for c in $commands; do
    ${EMBER_RUN:-} "$EMBER" "$c" --help >"$OUT/ember-$c.help"
    summary=$(sed -n "s/^  $c  *//p" "$OUT/ember.help" | head -1)
    page "ember-$c" "$summary" "$OUT/ember-$c.help" "ember(1)"
done
rm -f "$OUT"/*.help
