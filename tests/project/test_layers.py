#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/project/test_layers.py — the layers of docs/design.md's "Layout", checked
in the objects the build made rather than in its include paths alone.

    test_layers.py NM BUILD_DIR

With nm it reads which symbols every object file of the library and the
program defines and which it uses, and fails when
  - an object calls up the stack: a layer uses a symbol defined in a layer
    above it (the backends, for one, use nothing of the engine's);
  - files call each other in a circle: two or more source files each use
    something the next one defines, round to the first. Such a pair is
    broken by moving what the callee uses into a file of its own (as
    core/backward.c holds the walk that calls every op's backward, while
    the ops call core/autograd.c's tape).
  - a file of io/ includes a header of core/ other than core/engine.h,
    the narrow API the engine publishes for loaders and writers (the
    -impl.h headers are the engine's private parts: its structs).
It prints each offence with the symbol or the line that makes it.
"""
import os
import subprocess
import sys
from collections import defaultdict

# bottom up: a layer may use what the layers at its rank or below define
LAYERS = ["ember_base", "ember_ptxsim", "ember_backends", "ember_core", "ember_io", "ember_models",
          "ember_parallel", "ember_tools"]


def objects(build):
    found = {}
    for layer in LAYERS:
        top = os.path.join(build, "CMakeFiles", layer + ".dir")
        if not os.path.isdir(top):
            sys.exit(f"no {top}: build the library first")
        for folder, _, files in os.walk(top):
            for name in files:
                if name.endswith(".o"):
                    path = os.path.join(folder, name)
                    found[path] = (layer, os.path.relpath(path, top)[:-2])
    return found


def symbols(nm, path):
    out = subprocess.run([nm, "-P", path], check=True, capture_output=True, text=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            used.add(name)
        elif kind in "TDBRVWGSC":
            defined.add(name)
    return defined, used


def circles(edges):
    """The strongly connected components of more than one file (Tarjan)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in list(edges):
        if v not in index:
            visit(v)
    return found


SOURCE = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
ENGINE_API = "engine.h"


def engine_private_includes():
    """io/'s includes of core/ headers other than engine.h, as messages."""
    core = set(os.listdir(os.path.join(SOURCE, "core")))
    found = []
    io = os.path.join(SOURCE, "io")
    for name in sorted(os.listdir(io)):
        if not name.endswith((".c", ".h")):
            continue
        with open(os.path.join(io, name), encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                words = line.split()
                if len(words) >= 2 and words[0] == "#include" and words[1].startswith('"'):
                    header = words[1].strip('"')
                    if header in core and header != ENGINE_API:
                        found.append(f"io/{name}:{number} includes core/{header}, the engine's private "
                                     f"header: io/ sees the engine through core/{ENGINE_API}")
    return found


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    nm, build = sys.argv[1], sys.argv[2]
    files = objects(build)
    where = {}  # symbol -> (layer, file)
    uses = {}
    for path, (layer, name) in files.items():
        defined, used = symbols(nm, path)
        for symbol in defined:
            where.setdefault(symbol, (layer, name))
        uses[(layer, name)] = used
    failures = []
    edges = defaultdict(set)
    for (layer, name), used in sorted(uses.items()):
        edges[(layer, name)]
        for symbol in sorted(used):
            if symbol not in where:
                continue  # the C library, zlib, OpenBLAS, ...
            other_layer, other = where[symbol]
            if LAYERS.index(other_layer) > LAYERS.index(layer):
                failures.append(f"{name} ({layer}) calls up the stack: {symbol} of {other} ({other_layer})")
            if (other_layer, other) != (layer, name):
                edges[(layer, name)].add((other_layer, other))
    for group in circles(edges):
        names = [name for _, name in group]
        links = []
        for a in group:
            for b in group:
                if b in edges[a]:
                    symbol = next(s for s in sorted(uses[a]) if where.get(s) == b)
                    links.append(f"{a[1]} uses {symbol} of {b[1]}")
        failures.append("files call each other in a circle: " + ", ".join(names) + "\n    " +
                        "\n    ".join(links))
    failures += engine_private_includes()
    for failure in failures:
        print(failure)
    print(f"test_layers: {len(files)} objects in {len(LAYERS)} layers, "
          + (f"{len(failures)} failures" if failures else "ok"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
