#!/usr/bin/env python3
"""A stand-in for Claude Code's duplex stream-json mode, for tests of the daemon's configuration (never shipped).

It answers the version probe and every control request; each user message becomes a turn that asks permission
for one Bash command (can_use_tool) and ends once the daemon answers. What it was told is appended, one JSON line
per event, to the file named by $FAKE_CLAUDE_RECORD: its argv at start, each control request's subtype (with
the model of set_model), and each permission decision."""

import json
import os
import sys
import uuid

SESSION_ID = str(uuid.uuid4())


def record(entry):
    path = os.environ.get("FAKE_CLAUDE_RECORD")
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps(entry) + "\n")


def emit(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main():
    if sys.argv[1:2] == ["--version"]:
        print("9.9.9 (Claude Code)")
        return 0
    record({"argv": sys.argv[1:]})
    pending = None  # the request id of the permission the current turn waits for
    for line in sys.stdin:
        message = json.loads(line)
        kind = message.get("type")
        if kind == "control_request":
            request = message.get("request", {})
            record({"control": request.get("subtype"), "model": request.get("model")})
            emit({"type": "control_response",
                  "response": {"subtype": "success", "request_id": message["request_id"], "response": {}}})
        elif kind == "user":
            emit({"type": "system", "subtype": "init", "cwd": os.getcwd(), "session_id": SESSION_ID, "tools": ["Bash"],
                  "model": "fake", "permissionMode": "default"})
            pending = "perm-" + str(uuid.uuid4())
            emit({"type": "control_request", "request_id": pending,
                  "request": {"subtype": "can_use_tool", "tool_name": "Bash", "input": {"command": "ls"},
                              "description": "List files"}})
        elif kind == "control_response" and pending and message.get("response", {}).get("request_id") == pending:
            pending = None
            decision = message["response"].get("response", {}).get("behavior")
            record({"decision": decision})
            emit({"type": "result", "subtype": "success", "is_error": False, "result": "done", "num_turns": 1,
                  "stop_reason": "end_turn", "session_id": SESSION_ID, "duration_ms": 1})
    return 0


if __name__ == "__main__":
    sys.exit(main())
