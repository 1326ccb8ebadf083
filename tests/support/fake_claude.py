#!/usr/bin/env python3
"""A stand-in for Claude Code in duplex stream-json mode, for tests that need the adapter's plumbing (a real
process, real pipes) but not a model: it answers `--version`, `initialize`, and each prompt with one scripted turn.

Behaviour is chosen by environment variables, so the daemon can run it unchanged as SWITCHBOARD_CLAUDE_BIN:

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

SESSION = "fake-session-1"


def emit(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main():
    if "--version" in sys.argv:
        print("2.1.197 (Claude Code)")
        return 0
    refused = set(filter(None, os.environ.get("FAKE_CLAUDE_REFUSE", "").split(",")))
    transcript = os.environ.get("FAKE_CLAUDE_TRANSCRIPT")
    persist_ms = int(os.environ.get("FAKE_CLAUDE_PERSIST_MS", "0"))
    answered = []
    signal.signal(signal.SIGTERM, lambda *_: os._exit(143))
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        kind = message.get("type")
        if kind == "control_request":
            request_id = message.get("request_id")
            subtype = message.get("request", {}).get("subtype")
            if subtype in refused:
                emit({"type": "control_response",
                      "response": {"subtype": "error", "request_id": request_id, "error": "refused " + subtype}})
            else:
                emit({"type": "control_response", "response": {"subtype": "success", "request_id": request_id}})
        elif kind == "user":
            text = message["message"]["content"][0].get("text", "")
            emit({"type": "system", "subtype": "init", "session_id": SESSION, "model": "fake-model",
                  "permissionMode": "default", "cwd": os.getcwd(), "tools": []})
            answer = "answer to: " + text
            emit({"type": "result", "subtype": "success", "is_error": False, "result": answer,
                  "stop_reason": "end_turn", "session_id": SESSION, "total_cost_usd": 0.0,
                  "usage": {"input_tokens": 1, "output_tokens": 1}})
            answered.append(text)
    # EOF: what the real CLI does here is finish writing its conversation, then exit 0.
    time.sleep(persist_ms / 1000.0)
    if transcript:
        with open(transcript, "w") as out:
            for text in answered:
                out.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
