#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/project/test_library_words.sh — the library speaks in its API's words, never
# in the `ember` program's: no message string in core/, backends/, parallel/
# or models/ cites a command-line option ("--data-dir") or a subcommand
# ("`ember devices`"), which a program embedding ember does not have. The
# messages name the API instead ("ember_data_options.dir"), and tools/cli.c
# says those as options (cli_words).
#
#   test_library_words.sh SOURCE-DIR
set -u
SRC=$1
cd "$SRC" || exit 1
# every string literal of the library's C files, with its file and line;
# compiler options handed to NVRTC are not messages
found=$(find core backends parallel models -name '*.c' -o -name '*.h' | sort | while read -r f; do
    grep -n '"' "$f" | grep -v '^[0-9]*:\s*\(/\*\|\*\|//\)' | while IFS= read -r line; do
        printf '%s\n' "$line" | grep -o '"[^"]*"' |
            grep -E '(^"|[ (`])--[a-z]|`ember [a-z]|ember (train|eval|predict|summary|plot|devices|ptx) --' |
            grep -v -- '--gpu-architecture' | sed "s|^|$f:${line%%:*}: |"
    done
done)
if [ -n "$found" ]; then
    echo "FAILED: library messages that cite the ember program's options or commands (name the API instead):"
    echo "$found"
    exit 1
fi
echo "the library's messages cite no command-line option or subcommand"
