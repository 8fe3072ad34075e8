#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/windows/wine-run.sh — runs $EMBER_WINE_PROGRAM (a Windows program)
# under Wine with these arguments, as cli-util.sh's `run` runs a program:
# its exit status passes through.
exec wine "$EMBER_WINE_PROGRAM" "$@"
