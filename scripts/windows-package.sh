#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/windows-package.sh — cross-builds ember for 64-bit Windows on
# Debian (mingw-w64) and writes build-win/ember-VERSION-win64.zip: unzip it
# anywhere and run bin\ember.exe; no installer, no administrator.
#
#   bin/       ember.exe, ember.dll, and the DLL they need (OpenBLAS)
#   include/   ember.h (and ember-mpi.h)
#   lib/       libember.dll.a (mingw-w64) and ember.lib (MSVC) to link
#              ember.dll; libember.a; pkgconfig/ember.pc and cmake/ember/
#   README-windows.txt, LICENSE, docs/
#
# Needs what scripts/setup.sh --windows installs (mingw-w64, zlib for it)
# and PyPI for OpenBLAS (scripts/windows-deps.sh). docs/windows.md says
# what is in it and what has been checked only under Wine.
# --help: the comment above, and nothing else done
case "${1:-}" in -h | --help) sed -n '1d; /^# --help:/q; /^#/!q; /SPDX-License-Identifier/d; s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -eu
cd "$(dirname "$0")/.."
build=build-win
scripts/windows-deps.sh "$build/deps"
cmake -S . -B "$build" -DCMAKE_TOOLCHAIN_FILE=cmake/mingw-w64.cmake -DCMAKE_BUILD_TYPE=Release \
    -DEMBER_WERROR=ON -DEMBER_MPI=OFF >/dev/null
cmake --build "$build" -j "$(nproc)" --target ember ember_static ember_cli
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
name=ember-$version-win64
stage=$build/package/$name
rm -rf "$build/package"
cmake --install "$build" --prefix "$stage" >/dev/null
# Windows users read neither man pages nor bash completion; docs/ is there as Markdown
rm -rf "$stage/share/bash-completion"
mv "$stage/share/doc/ember/docs" "$stage/docs"
mv "$stage/share/doc/ember/LICENSE" "$stage/LICENSE"
rm -rf "$stage/share"
# MSVC's import library for ember.dll, from the exports the link wrote
x86_64-w64-mingw32-dlltool -d "$build/ember.def" -D ember.dll -l "$stage/lib/ember.lib"
# the README for Windows, with Windows' line ends so that Notepad shows it
sed "s/@VERSION@/$version/g; s/\$/\r/" scripts/README-windows.txt >"$stage/README-windows.txt"
rm -f "$build/$name.zip"
(cd "$build/package" && python3 -m zipfile -c "../$name.zip" "$name")
echo "windows-package: $build/$name.zip"
