#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/fortunes.sh — Debian's fortunes as one text file, the corpus
# gpt-tiny trains on in the README: every file of /usr/share/games/fortunes
# but the .dat indexes (and the .u8 links to the same files), in name
# order, about 2.6 MB of English. Installs the package (fortunes) first if
# it is missing, as scripts/setup.sh installs the rest.
#
#   scripts/fortunes.sh [OUTPUT]    default: build/fortunes.txt
case "${1:-}" in -h | --help) sed -n '1d; /^# --help:/q; /^#/!q; /SPDX-License-Identifier/d; s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -eu
cd "$(dirname "$0")/.."
out=${1:-build/fortunes.txt}
dir=/usr/share/games/fortunes
if [ ! -d "$dir" ]; then
    echo "fortunes: installing Debian's fortunes"
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo=sudo
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends fortunes
fi
mkdir -p "$(dirname "$out")"
: >"$out"
for f in "$dir"/*; do
    case $f in *.dat | *.u8) continue ;; esac
    [ -f "$f" ] && [ ! -L "$f" ] && cat "$f" >>"$out"
done
echo "fortunes: $out ($(wc -c <"$out") bytes)"
