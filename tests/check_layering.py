#!/usr/bin/env python3
"""Fails when a module includes a header of a module it does not declare.

Each library of ours (the modules of src/, the adapters, the adapter interface) declares in CMake the libraries
it uses (src/<module>/module.cmake, cmake/SwitchboardModule.cmake). The layering check programs catch a call into an undeclared module at
link time; this catches what the linker cannot see: an include whose header needs none of that module's code (a
struct, an inline function, a template). A file may include the headers of its own library, of the libraries
it declares, and of whatever those expose publicly, transitively.

    check_layering.py SOURCE_DIR MANIFEST      (MANIFEST: build/<preset>/layering/modules.tsv, written by CMake)
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1]).resolve()
manifest = pathlib.Path(sys.argv[2])

libraries = {}  # name -> (source dir, public, private, sources)
for line in manifest.read_text(encoding="utf-8").splitlines():
    if not line.strip():
        continue
    name, directory, public, private, sources = (line.split("\t") + [""] * 5)[:5]
    split = lambda text: [item for item in text.split(",") if item]
    libraries[name] = (pathlib.Path(directory), split(public), split(private),
                       [pathlib.Path(source).resolve() for source in split(sources)])

checked_roots = [root / "src", root / "include", root / "adapters"]
owner = {}  # file -> library: our own sources (not the generated ones, which the build writes)
for name, (_, _, _, sources) in libraries.items():
    for source in sources:
        if source.is_file() and any(source.is_relative_to(base) for base in checked_roots):
            owner[source] = name


def owner_of_header(path):
    """The library a header belongs to: that of the source beside it with its name, else by where it lies."""
    for suffix in (".cpp",):
        twin = path.with_suffix(suffix)
        if twin in owner:
            return owner[twin]
    parts = path.relative_to(root).parts
    if parts[:2] == ("include", "switchboard") and len(parts) > 3:
        name = "switchboard_adapter_api" if parts[2] == "adapters" else f"switchboard_{parts[2]}"
        return name if name in libraries else None
    if parts[0] == "src" and len(parts) > 2:
        name = f"switchboard_{parts[1]}"
        return name if name in libraries else None
    if parts[0] == "adapters":
        return "switchboard_adapters" if "switchboard_adapters" in libraries else None
    return None


def public_closure(names):
    seen = set()
    pending = list(names)
    while pending:
        name = pending.pop()
        if name in seen or name not in libraries:
            continue
        seen.add(name)
        pending.extend(libraries[name][1])
    return seen


def allowed(name):
    _, public, private, _ = libraries[name]
    return {name} | public_closure(public + private)


def resolve(include, including):
    """The file `#include "include"` names, among ours, or None (a generated or third-party header)."""
    # The include paths the file is compiled with: the adapters see adapters/ and the public headers, never src/.
    if including.is_relative_to(root / "adapters"):
        bases = [including.parent, root / "include", root / "adapters"]
    else:
        bases = [including.parent, root / "include", root / "src"]
    for base in bases:
        candidate = (base / include).resolve()
        if candidate.is_file() and candidate.is_relative_to(root):
            return candidate
    return None


files = set(owner)
for directory in ("src", "include/switchboard", "adapters"):
    for header in (root / directory).rglob("*.h"):
        header = header.resolve()
        if owner_of_header(header):
            files.add(header)
            owner.setdefault(header, owner_of_header(header))

include_line = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
problems = []
for path in sorted(files):
    name = owner[path]
    permitted = allowed(name)
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        match = include_line.match(line)
        if not match:
            continue
        target = resolve(match.group(1), path)
        if target is None:
            continue
        target_owner = owner.get(target) or owner_of_header(target)
        if target_owner and target_owner not in permitted:
            problems.append(f"{path.relative_to(root)}:{number}: {name} includes {match.group(1)} of {target_owner}, "
                            f"which it does not declare (in its module.cmake)")
for problem in problems:
    print(problem)
if not libraries:
    print(f"{manifest}: no libraries")
sys.exit(1 if problems or not libraries else 0)
