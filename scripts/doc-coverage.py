#!/usr/bin/env python3
"""Fails when a public symbol of a Sesame product has no doc comment.

Reads the symbol graphs `swift package dump-symbol-graph` wrote (the directory is the first
argument) for each product module (the other arguments) and lists every public or open symbol
without a doc comment of its own or inherited from the requirement it implements. Symbols the
compiler synthesizes (`Equatable` operators, `RawRepresentable` initializers, property wrappers'
`$` projections) are documented where they come from and are not counted.
"""
import glob
import json
import os
import sys


def undocumented(directory, module):
    total, missing = 0, []
    paths = glob.glob(os.path.join(directory, module + ".symbols.json"))
    paths += glob.glob(os.path.join(directory, module + "@*.symbols.json"))
    if not paths:
        sys.exit(f"doc coverage: no symbol graph for {module} in {directory}")
    for path in paths:
        with open(path, encoding="utf-8") as file:
            graph = json.load(file)
        for symbol in graph["symbols"]:
            if symbol["accessLevel"] not in ("public", "open"):
                continue
            if "::SYNTHESIZED::" in symbol["identifier"]["precise"]:
                continue
            name = ".".join(symbol["pathComponents"])
            if "location" not in symbol and symbol["pathComponents"][-1].startswith("$"):
                continue
            total += 1
            if not symbol.get("docComment"):
                location = symbol.get("location", {})
                place = location.get("uri", "?").split("/Sources/")[-1]
                line = location.get("position", {}).get("line", -1) + 1
                missing.append(f"Sources/{place}:{line}: {name}")
    return total, sorted(set(missing))


def main():
    directory, modules = sys.argv[1], sys.argv[2:]
    failed = False
    for module in modules:
        total, missing = undocumented(directory, module)
        print(f"doc coverage: {module}: {total - len(missing)} of {total} public symbols documented")
        for entry in missing:
            print(f"  undocumented: {entry}", file=sys.stderr)
        failed = failed or bool(missing)
    if failed:
        sys.exit("doc coverage: every public symbol needs a doc comment (above)")


main()
