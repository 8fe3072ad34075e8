#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/fortune-chat.sh — Debian's fortunes as conversations, the chat
# data the README's chat fine-tuning takes: JSON Lines, one conversation a
# line, a user asking for a fortune on one of the collections' subjects
# (the file's name: computers, science, wisdom...) in one of a few ways,
# and the assistant answering with one of that file's fortunes:
#
#   {"messages": [{"role": "user", "content": "Tell me a fortune about science."},
#                 {"role": "assistant", "content": "..."}]}
#
# Fortunes of more than 400 bytes are left out, and the conversations are
# shuffled (the same way each time) so that every subject is in the last
# tenth that validates; COUNT keeps the first COUNT of them. Installs the
# package (fortunes) first if it is missing (scripts/fortunes.sh).
#
#   scripts/fortune-chat.sh [OUTPUT [COUNT]]    default: build/fortune-chat.jsonl, all 13,866
case "${1:-}" in -h | --help) sed -n '1d; /^# --help:/q; /^#/!q; /SPDX-License-Identifier/d; s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -eu
cd "$(dirname "$0")/.."
out=${1:-build/fortune-chat.jsonl}
count=${2:-0}
max=400
dir=/usr/share/games/fortunes
[ -d "$dir" ] || scripts/fortunes.sh /dev/null >/dev/null
mkdir -p "$(dirname "$out")"
: >"$out.part"
for f in "$dir"/*; do
    case $f in *.dat | *.u8) continue ;; esac
    [ -f "$f" ] && [ ! -L "$f" ] || continue
    # a fortune ends at a line of "%"; every byte below 0x20 but the newline is dropped, the
    # newline, quotes and backslashes escaped as JSON writes them
    LC_ALL=C awk -v subject="$(basename "$f")" -v max="$max" '
        BEGIN {
            ask[0] = "Tell me a fortune about %s."; ask[1] = "Do you know a saying about %s?"
            ask[2] = "Say something on %s."; ask[3] = "I would like a %s fortune, please."
        }
        function flush() {
            sub(/\n+$/, "", text)
            if (text != "" && length(text) <= max) {
                k = split(text, part, /\\/)     # each backslash doubled, without gsub (whose
                text = part[1]                   # replacement text differs between awks)
                for (i = 2; i <= k; i++) text = text "\\\\" part[i]
                gsub(/"/, "\\\"", text); gsub(/\t/, "    ", text)
                gsub(/[\001-\010\013-\037]/, "", text); gsub(/\n/, "\\n", text)
                printf "{\"messages\": [{\"role\": \"user\", \"content\": \"" ask[n % 4] "\"}, ", subject
                printf "{\"role\": \"assistant\", \"content\": \"%s\"}]}\n", text
                n++
            }
            text = ""
        }
        /^%$/ { flush(); next }
        { text = text $0 "\n" }
        END { flush() }' "$f" >>"$out.part"
done
# shuffled by a multiplicative hash of the line's number, the same on every machine
LC_ALL=C awk '{ printf "%d\t%s\n", (NR * 40503) % 65521, $0 }' "$out.part" | LC_ALL=C sort -n -k1,1 -s |
    cut -f2- | if [ "$count" -gt 0 ]; then head -n "$count"; else cat; fi >"$out"
rm -f "$out.part"
echo "fortune-chat: $out ($(wc -l <"$out") conversations)"
