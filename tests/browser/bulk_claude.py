#!/usr/bin/env python3
"""A stand-in for Claude Code's duplex stream-json mode that writes one very long turn, for the console's
first-paint measurement (tests/browser/test_console.py). Each user message becomes $BULK_CLAUDE_STEPS steps
(default 3334) of: a text message, a Bash tool call, its result; the daemon turns each step into
message.completed, tool.started and tool.completed, three events the event log keeps (no deltas, which it
compacts away once the turn ends). Never shipped; no model involved."""

import json
import os
import sys
import uuid

SESSION_ID = str(uuid.uuid4())


def emit(message):
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")


def main():
    if sys.argv[1:2] == ["--version"]:
        print("2.1.197 (Claude Code)")
        return 0
    steps = int(os.environ.get("BULK_CLAUDE_STEPS", "3334"))
    for line in sys.stdin:
        message = json.loads(line)
        kind = message.get("type")
        if kind == "control_request":
            emit({"type": "control_response",
                  "response": {"subtype": "success", "request_id": message["request_id"], "response": {}}})
            sys.stdout.flush()
        elif kind == "user":
            emit({"type": "system", "subtype": "init", "cwd": os.getcwd(), "session_id": SESSION_ID, "tools": ["Bash"],
                  "model": "bulk", "permissionMode": "default"})
            for i in range(steps):
                common = {"parent_tool_use_id": None, "session_id": SESSION_ID}
                emit({"type": "assistant", **common, "message": {
                    "id": f"msg_bulk_{i:05}a", "type": "message", "role": "assistant", "model": "bulk",
                    "content": [{"type": "text", "text": f"Step **{i}**: listing the files of `dir{i}`."}]}})
                emit({"type": "assistant", **common, "message": {
                    "id": f"msg_bulk_{i:05}b", "type": "message", "role": "assistant", "model": "bulk",
                    "content": [{"type": "tool_use", "id": f"toolu_bulk_{i:05}", "name": "Bash",
                                 "input": {"command": f"ls dir{i}", "description": "List files"}}]}})
                emit({"type": "user", **common, "message": {"role": "user", "content": [
                    {"tool_use_id": f"toolu_bulk_{i:05}", "type": "tool_result", "content": f"a.txt\nb{i}.txt",
                     "is_error": False}]}})
            emit({"type": "result", "subtype": "success", "is_error": False, "result": "All steps done.",
                  "num_turns": steps, "stop_reason": "end_turn", "session_id": SESSION_ID, "duration_ms": 1,
                  "total_cost_usd": 0.0, "usage": {"input_tokens": 1, "output_tokens": 1}})
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
