#!/usr/bin/env python3
"""A stand-in for Claude Code's duplex stream-json mode whose every turn follows a script, for the tests of
`switchboard run` (never shipped). The script is JSON in $FAKE_TURN: a list of steps, run in order for each
prompt:

  {"tool": "ls", "output": "a\\nb"}   a Bash tool call that runs without asking, and its output
  {"ask": "rm -rf build"}            a Bash call that asks permission first; allowed: it runs; denied: it does not
  {"question": "Which one?"}         an AskUserQuestion call (a question; the answer is not used)
  {"sleep": 1.5}                     seconds of silence
  {"spawn": true}                    a tool child (`sleep 600`) in the agent's process group, pid to $FAKE_CHILD_PID
  {"hang": true}                     wait (answering control requests) until the turn is interrupted
  {"fail": "message"}                end the turn as failed with this message
  {"text": "the answer"}             end the turn normally with this final text (the default end)
  {"echo": true}                     end the turn normally, the final text "you said: <the prompt>"

$FAKE_PID: a file the fake writes its pid to at start; $FAKE_ARGV: one it writes its arguments to, as JSON. Every permission decision is appended to $FAKE_RECORD.
Each `--version` (the daemon's discovery probe) appends a line to $FAKE_PROBED."""

import json
import os
import select
import subprocess
import sys
import uuid

SESSION_ID = str(uuid.uuid4())
LINES = []  # stdin lines read but not handled yet


def emit(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def record(entry):
    path = os.environ.get("FAKE_RECORD")
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps(entry) + "\n")


BUFFER = [b""]  # bytes read from stdin after the last complete line


def read_message(timeout=None):
    """The next stdin message, None at EOF, or "timeout". Reads the descriptor itself: a buffered reader
    would hold lines select() cannot see."""
    while not LINES:
        ready, _, _ = select.select([0], [], [], timeout)
        if not ready:
            return "timeout"
        chunk = os.read(0, 65536)
        if not chunk:
            return None
        BUFFER[0] += chunk
        *complete, BUFFER[0] = BUFFER[0].split(b"\n")
        LINES.extend(line for line in complete if line.strip())
    return json.loads(LINES.pop(0))


def answer_control(message):
    """Answers a control request that is not the one a step waits for; True for an interrupt."""
    request = message.get("request", {})
    emit({"type": "control_response",
          "response": {"subtype": "success", "request_id": message.get("request_id"), "response": {}}})
    return request.get("subtype") == "interrupt"


def result(text=None, error=None, cancelled=False):
    if cancelled:
        emit({"type": "result", "subtype": "error_during_execution", "is_error": True, "session_id": SESSION_ID,
              "terminal_reason": "aborted_streaming"})
    elif error is not None:
        emit({"type": "result", "subtype": "error_during_execution", "is_error": True, "result": error,
              "session_id": SESSION_ID})
    else:
        emit({"type": "result", "subtype": "success", "is_error": False, "result": text, "stop_reason": "end_turn",
              "session_id": SESSION_ID, "total_cost_usd": 0.001, "usage": {"input_tokens": 10, "output_tokens": 5}})


def tool_call(name, tool_input, output, is_error=False):
    tool_id = "toolu_" + uuid.uuid4().hex[:12]
    emit({"type": "assistant", "message": {"id": "msg_" + uuid.uuid4().hex[:8], "role": "assistant",
                                           "content": [{"type": "tool_use", "id": tool_id, "name": name,
                                                        "input": tool_input}]}})
    emit({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id,
                                                                   "content": output, "is_error": is_error}]}})


def wait_for_answer(request_id):
    """The behavior the daemon answered `request_id` with; "interrupt" or None (EOF) otherwise."""
    while True:
        message = read_message()
        if message is None:
            return None
        if message.get("type") == "control_response" and message.get("response", {}).get("request_id") == request_id:
            return message["response"].get("response", {}).get("behavior")
        if message.get("type") == "control_request" and answer_control(message):
            return "interrupt"


def prompt_of(message):
    content = message.get("message", {}).get("content", "")
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content if block.get("type") == "text")


def run_turn(steps, prompt):
    """Runs one turn; False when stdin ended."""
    emit({"type": "system", "subtype": "init", "cwd": os.getcwd(), "session_id": SESSION_ID, "tools": ["Bash"],
          "model": "fake", "permissionMode": "default"})
    for step in steps:
        if "tool" in step:
            tool_call("Bash", {"command": step["tool"]}, step.get("output", ""))
        elif "ask" in step or "question" in step:
            request_id = "perm-" + uuid.uuid4().hex[:8]
            if "ask" in step:
                tool, tool_input = "Bash", {"command": step["ask"]}
            else:
                tool, tool_input = "AskUserQuestion", {"questions": [{"question": step["question"], "header": "Q",
                                                                      "options": [{"label": "a", "description": "a"},
                                                                                  {"label": "b", "description": "b"}],
                                                                      "multiSelect": False}]}
            emit({"type": "control_request", "request_id": request_id,
                  "request": {"subtype": "can_use_tool", "tool_name": tool, "input": tool_input,
                              "tool_use_id": "toolu_" + uuid.uuid4().hex[:12]}})
            behavior = wait_for_answer(request_id)
            record({"ask": tool, "behavior": behavior})
            if behavior is None:
                return False
            if behavior == "interrupt":
                result(cancelled=True)
                return True
            if behavior == "allow" and "ask" in step:
                tool_call("Bash", tool_input, "ran " + step["ask"])
        elif "sleep" in step:
            deadline = step["sleep"]
            message = read_message(deadline)
            if message is None:
                return False
            if message != "timeout" and message.get("type") == "control_request" and answer_control(message):
                result(cancelled=True)
                return True
        elif "spawn" in step:
            child = subprocess.Popen(["sleep", "600"])
            path = os.environ.get("FAKE_CHILD_PID")
            if path:
                with open(path, "w", encoding="utf-8") as out:
                    out.write(str(child.pid))
        elif "hang" in step:
            while True:
                message = read_message()
                if message is None:
                    return False
                if message.get("type") == "control_request" and answer_control(message):
                    result(cancelled=True)
                    return True
        elif "fail" in step:
            result(error=step["fail"])
            return True
        elif "text" in step:
            result(text=step["text"])
            return True
        elif "echo" in step:
            result(text="you said: " + prompt)
            return True
    result(text="done")
    return True


def main():
    if sys.argv[1:2] == ["--version"]:
        probed = os.environ.get("FAKE_PROBED")
        if probed:
            with open(probed, "a", encoding="utf-8") as out:
                out.write("--version\n")
        print("9.9.9 (Claude Code)")
        return 0
    argv_path = os.environ.get("FAKE_ARGV")
    if argv_path:
        with open(argv_path, "w", encoding="utf-8") as out:
            json.dump(sys.argv[1:], out)
    path = os.environ.get("FAKE_PID")
    if path:
        with open(path, "w", encoding="utf-8") as out:
            out.write(str(os.getpid()))
    steps = json.loads(os.environ.get("FAKE_TURN", "[]"))
    while True:
        message = read_message()
        if message is None:
            return 0
        kind = message.get("type")
        if kind == "control_request":
            answer_control(message)
        elif kind == "user":
            if not run_turn(steps, prompt_of(message)):
                return 0


if __name__ == "__main__":
    sys.exit(main())
