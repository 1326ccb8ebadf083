#!/usr/bin/env python3
"""Fails when the committed generated protocol code or docs differ from what schema/ generates now."""
import filecmp
import os
import subprocess
import sys
import tempfile

root = sys.argv[1]
generated = [
    "include/switchboard/protocol/generated/ErrorCodes.h",
    "include/switchboard/protocol/generated/Types.h",
    "include/switchboard/protocol/generated/Methods.h",
    "include/switchboard/protocol/generated/Events.h",
    "include/switchboard/protocol/generated/OpenRpcDocument.h",
    "src/protocol/generated/Types.cpp",
    "src/protocol/generated/OpenRpcDocument.cpp",
    "docs/protocol.md",
]
with tempfile.TemporaryDirectory() as out:
    subprocess.run([sys.executable, os.path.join(root, "tools", "gen_protocol.py"), "--out", out,
                    "--schema-root", root], check=True)
    produced = set()
    for dirpath, _, files in os.walk(out):
        for f in files:
            produced.add(os.path.relpath(os.path.join(dirpath, f), out))
    stale = []
    if produced != set(generated):
        stale.append(f"generator outputs changed: {sorted(produced ^ set(generated))} (update this list)")
    for rel in generated:
        committed = os.path.join(root, rel)
        if not os.path.exists(committed) or not filecmp.cmp(committed, os.path.join(out, rel), shallow=False):
            stale.append(rel)
    if stale:
        print("stale generated files (run tools/gen_protocol.py and commit):", *stale, sep="\n  ")
        sys.exit(1)
print("generated protocol files are current")
