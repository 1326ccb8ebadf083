#!/usr/bin/env python3
"""A stand-in for Claude Code in duplex stream-json mode, for tests that need the adapter's plumbing (a real
process, real pipes) but not a model: it answers `--version`, every control request, and each prompt with one
scripted turn.

Behaviour is chosen by environment variables, so the daemon can run it unchanged as SWITCHBOARD_CLAUDE_BIN:

  FAKE_CLAUDE_ASK         set (to anything): each turn first asks permission to run `ls` (can_use_tool, Bash) and
                          ends once the daemon answers; unset: each turn answers at once
  FAKE_CLAUDE_RECORD      a file to append what it was told to, one JSON object a line: {"argv": [...]} at start,
                          {"control": subtype, "model": ...} for each control request, {"decision": behavior} for
                          each permission answer
  FAKE_CLAUDE_REFUSE      comma-separated control subtypes to refuse (set_model, set_permission_mode, interrupt)
  FAKE_CLAUDE_PERSIST_MS  after EOF on stdin, wait this long, then write the conversation file and exit (as the real
                          CLI finishes its writes before it exits); SIGTERM during the wait exits without writing
  FAKE_CLAUDE_TRANSCRIPT  the conversation file (one line per answered prompt); none: nothing is written
"""

import json
import os
import signal
import sys
import time

SESSION = "fake-session-" + str(os.getpid())  # one conversation per process, as the real CLI


def emit(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def record(entry):
    path = os.environ.get("FAKE_CLAUDE_RECORD")
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps(entry) + "\n")


def result(text):
    return {"type": "result", "subtype": "success", "is_error": False, "result": text, "num_turns": 1,
            "stop_reason": "end_turn", "session_id": SESSION, "total_cost_usd": 0.0, "duration_ms": 1,
            "usage": {"input_tokens": 1, "output_tokens": 1}}


def main():
    if "--version" in sys.argv:
        print("2.1.197 (Claude Code)")
        return 0
    record({"argv": sys.argv[1:]})
    refused = set(filter(None, os.environ.get("FAKE_CLAUDE_REFUSE", "").split(",")))
    transcript = os.environ.get("FAKE_CLAUDE_TRANSCRIPT")
    persist_ms = int(os.environ.get("FAKE_CLAUDE_PERSIST_MS", "0"))
    asks = "FAKE_CLAUDE_ASK" in os.environ
    answered = []
    asking = None  # (the permission request's id, the prompt) while a turn waits for its answer
    signal.signal(signal.SIGTERM, lambda *_: os._exit(143))
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        kind = message.get("type")
        if kind == "control_request":
            request_id = message.get("request_id")
            request = message.get("request", {})
            subtype = request.get("subtype")
            record({"control": subtype, "model": request.get("model")})
            if subtype in refused:
                emit({"type": "control_response",
                      "response": {"subtype": "error", "request_id": request_id, "error": "refused " + subtype}})
            else:
                emit({"type": "control_response",
                      "response": {"subtype": "success", "request_id": request_id, "response": {}}})
        elif kind == "user":
            text = message["message"]["content"][0].get("text", "")
            emit({"type": "system", "subtype": "init", "session_id": SESSION, "model": "fake-model",
                  "permissionMode": "default", "cwd": os.getcwd(), "tools": ["Bash"] if asks else []})
            if asks:
                asking = ("perm-" + str(len(answered) + 1), text)
                emit({"type": "control_request", "request_id": asking[0],
                      "request": {"subtype": "can_use_tool", "tool_name": "Bash", "input": {"command": "ls"},
                                  "description": "List files"}})
                continue
            emit(result("answer to: " + text))
            answered.append(text)
        elif kind == "control_response" and asking and message.get("response", {}).get("request_id") == asking[0]:
            record({"decision": message["response"].get("response", {}).get("behavior")})
            emit(result("answer to: " + asking[1]))
            answered.append(asking[1])
            asking = None
    # EOF: what the real CLI does here is finish writing its conversation, then exit 0.
    time.sleep(persist_ms / 1000.0)
    if transcript:
        with open(transcript, "w") as out:
            for text in answered:
                out.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
