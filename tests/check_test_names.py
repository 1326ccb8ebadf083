#!/usr/bin/env python3
"""Fails when a Catch test name cannot be run by CTest.

catch_discover_tests registers each test by name, and CTest splits a name at ';' (a CMake list separator); the
pieces then match no test, so CTest runs nothing and reports it passed. Names must not contain ';' (or
the characters Catch treats as filter syntax at the start of a name)."""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
bad = []
for path in sorted((root / "tests").rglob("*.cpp")):
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        for name in re.findall(r'TEST_CASE\(\s*"((?:[^"\\]|\\.)*)"', line):
            if ";" in name or name.startswith(("~", "[", "*")) or name.endswith("*"):
                bad.append(f"{path.relative_to(root)}:{number}: {name}")
for entry in bad:
    print(entry)
sys.exit(1 if bad else 0)
