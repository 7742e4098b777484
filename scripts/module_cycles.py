#!/usr/bin/env python3
"""Prints the cycles of engram's module graph: file A imports from file B and
B (directly or through others) from A. Reads `use crate::…`, `use super::…`
and `crate::x::` paths of every file under src/; exits 1 if there is a cycle.

    python3 scripts/module_cycles.py
"""
import re
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"


def module_of(path):
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return tuple(parts)


def resolve(modules, path):
    """The longest known module that `path` (a tuple of names) starts with."""
    for end in range(len(path), 0, -1):
        if tuple(path[:end]) in modules:
            return tuple(path[:end])
    return None


def imports(file, module, modules):
    text = re.sub(r"//[^\n]*", "", file.read_text())
    # The tests of a file may import anything; they are not part of its graph.
    text = text.split("#[cfg(test)]")[0]
    found = set()
    for match in re.finditer(r"\b(crate|super)((?:::\w+)+)", text):
        names = match.group(2).strip(":").split("::")
        base = [] if match.group(1) == "crate" else list(module[:-1])
        target = resolve(modules, tuple(base + names))
        if target is not None and target != module and target != ():
            found.add(target)
    for match in re.finditer(r"\buse (crate|super)::\{([^;]*)\};", text, re.S):
        base = [] if match.group(1) == "crate" else list(module[:-1])
        for item in re.findall(r"(\w+)(?:::|\s*[,}]|$)", match.group(2)):
            target = resolve(modules, tuple(base + [item]))
            if target is not None and target != module and target != ():
                found.add(target)
    # A module's parent (`mod.rs`) holding its children is not an import.
    return {t for t in found if t[: len(module)] != module}


def main():
    files = {module_of(f): f for f in SRC.rglob("*.rs") if f.name != "main.rs"}
    modules = set(files)
    graph = {m: imports(f, m, modules) for m, f in files.items()}
    name = lambda m: "::".join(m)
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    sys.setrecursionlimit(10000)
    for node in sorted(graph):
        if node not in index:
            visit(node)
    print(f"{len(graph)} modules, {sum(len(v) for v in graph.values())} imports between them")
    for cycle in cycles:
        print("cycle: " + " <-> ".join(name(m) for m in cycle))
    if not cycles:
        print("no cycles")
    return 1 if cycles else 0


if __name__ == "__main__":
    sys.exit(main())
