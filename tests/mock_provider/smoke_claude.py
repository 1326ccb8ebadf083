#!/usr/bin/env python3
"""Drives the real `claude` CLI against anthropic_mock.py, headless, and asserts on what happens.

The reference for switchboard's C++ end-to-end tests: each scenario shows the exact command line, environment,
stdin lines and expected stdout lines of Claude Code's duplex stream-json mode with the stdio control protocol.

    smoke_claude.py [--claude PATH] [--only NAME,...] [--write-fixtures DIR] [--keep] [--no-netns]

PATH defaults to `scripts/agent-path claude` (run scripts/install-agents first). Exits non-zero if any scenario
fails. As root, and when `unshare` works, the whole run happens in a private network namespace (loopback only),
so nothing can leave the machine whatever the CLI tries. --write-fixtures saves each scenario's stdout (and what
we sent on stdin) as NDJSON, with the scratch directory replaced by "<scratch>".
"""

import json
import os
import queue
import subprocess
import sys
import threading
import time
from urllib.parse import urlsplit

import smoke_support  # beside this script
from smoke_support import Failure, check

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
MOCK = os.path.join(HERE, "anthropic_mock.py")
TIMEOUT = 60  # seconds for any one expected line; a healthy turn takes well under 2 s


class Mock(smoke_support.Mock):
    """anthropic_mock.py in a child process, with its script and request log in `dir`."""

    server = MOCK

    def message_requests(self):
        return [r for r in self.records()
                if r["type"] == "request" and urlsplit(r["path"]).path == "/v1/messages"]


class Claude:
    """One `claude -p` duplex process: stdin/stdout NDJSON. Its stdout is also appended to
    claude.stdout.ndjson in the scratch dir, its stderr to claude.stderr.txt (kept when a scenario fails)."""

    def __init__(self, exe, scratch, mock, extra_args=(), extra_env=None, cwd=None):
        self.scratch = scratch
        home = os.path.join(scratch, "home")
        os.makedirs(home, exist_ok=True)
        self.cwd = cwd or os.path.join(scratch, "work")
        os.makedirs(self.cwd, exist_ok=True)
        self.env = claude_env(home, mock.port)
        self.env.update(extra_env or {})
        self.args = [exe, "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
                     "--include-partial-messages", "--permission-prompt-tool", "stdio", *extra_args]
        self.started = time.monotonic()
        with open(os.path.join(scratch, "claude.stderr.txt"), "ab") as stderr:
            self.proc = subprocess.Popen(self.args, cwd=self.cwd, env=self.env, stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=stderr)
        self.raw = []  # everything printed, as printed (one str per line, no newline)
        self.lines = []  # the same, parsed
        self.sent = []  # everything we wrote to stdin
        self.queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        with open(os.path.join(self.scratch, "claude.stdout.ndjson"), "ab") as copy:
            for raw in self.proc.stdout:
                copy.write(raw)
                copy.flush()
                self._take(raw)
        self.queue.put(None)

    def _take(self, raw):
        self.raw.append(raw.decode("utf-8", "replace").rstrip("\n"))
        try:
            obj = json.loads(raw)
        except ValueError:
            obj = {"type": "<not json>", "text": raw.decode("utf-8", "replace")}
        self.lines.append(obj)
        self.queue.put(obj)

    def send(self, obj):
        self.sent.append(obj)
        self.proc.stdin.write((json.dumps(obj) + "\n").encode())
        self.proc.stdin.flush()

    def say(self, text):
        self.send({"type": "user", "message": {"role": "user", "content": text}})

    def wait_for(self, what, pred, timeout=TIMEOUT):
        """The next line satisfying `pred`; lines before it are skipped (they stay in self.lines)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                obj = self.queue.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise Failure(f"timed out after {timeout}s waiting for {what}")
            if obj is None:
                raise Failure(f"stdout closed (exit {self.proc.wait()}) while waiting for {what}")
            if pred(obj):
                return obj

    def wait_result(self, timeout=TIMEOUT):
        return self.wait_for("result", lambda o: o.get("type") == "result", timeout)

    def finish(self, timeout=30):
        """EOF on stdin; the CLI ends its turn and exits. Returns the exit code."""
        self.proc.stdin.close()
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise Failure("did not exit after EOF on stdin")
        while self.queue.get(timeout=5) is not None:
            pass
        return rc

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def claude_env(home, port):
    """Everything the CLI needs to talk only to the mock, with a private config directory."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": home,  # nothing of the user's ~/.claude is read or written
        "CLAUDE_CONFIG_DIR": os.path.join(home, ".claude"),
        "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
        "ANTHROPIC_API_KEY": "sk-mock",  # any value; sent as x-api-key
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "CLAUDE_CODE_MAX_RETRIES": "2",  # the default (10, backing off to ~36 s) hides a broken mock for minutes
    }


def is_event(obj, event_type, delta_type=None):
    if obj.get("type") != "stream_event" or obj["event"].get("type") != event_type:
        return False
    return delta_type is None or obj["event"].get("delta", {}).get("type") == delta_type


def text_deltas(lines):
    return [o["event"]["delta"]["text"] for o in lines if is_event(o, "content_block_delta", "text_delta")]


def tool_results(lines):
    return [b for o in lines if o.get("type") == "user" and isinstance(o["message"]["content"], list)
            for b in o["message"]["content"] if b.get("type") == "tool_result"]


def control_requests(lines, subtype):
    return [o for o in lines if o.get("type") == "control_request" and o["request"].get("subtype") == subtype]


def answer(claude, request, response):
    claude.send({"type": "control_response",
                 "response": {"subtype": "success", "request_id": request["request_id"], "response": response}})


def messages_text(body):
    """All text of a request's messages, for 'was this sent again' checks."""
    return json.dumps(body.get("messages", []))


# ------------------------------------------------------------------------------------------------------------
# Scenarios. Each gets a fresh scratch dir and the claude path, returns a list of Claude processes (for
# fixtures) and a dict of notes to print.

def scenario_text(exe, scratch):
    """(a) One plain text turn, streamed in 3 deltas; `initialize` first, as the Agent SDK does."""
    mock = Mock(scratch, {"turns": [{"text": "Hello from the mock.", "chunks": 3}]})
    claude = Claude(exe, scratch, mock)
    try:
        claude.send({"type": "control_request", "request_id": "init-1", "request": {"subtype": "initialize"}})
        init = claude.wait_for("initialize response", lambda o: o.get("type") == "control_response")
        check(init["response"]["subtype"] == "success" and init["response"]["request_id"] == "init-1",
              f"initialize: {init}")
        ready = time.monotonic() - claude.started
        t0 = time.monotonic()
        claude.say("say hello")
        result = claude.wait_result()
        turn = time.monotonic() - t0
        check(result["subtype"] == "success" and not result["is_error"], f"result: {result}")
        check(result["result"] == "Hello from the mock.", f"result text {result['result']!r}")
        check(text_deltas(claude.lines) == ["Hello f", "rom the", " mock."], f"deltas {text_deltas(claude.lines)}")
        rc = claude.finish()
        check(rc == 0, f"exit {rc}")
        check(any(r["method"] == "HEAD" and r["path"] == "/" for r in mock.records()), "no HEAD / preflight")
        return [claude], {"spawn_to_initialize_s": round(ready, 2), "turn_s": round(turn, 2),
                          "duration_ms": result["duration_ms"],
                          "initialize_response_keys": sorted(init["response"]["response"].keys())}
    finally:
        claude.kill()
        mock.stop()


TOUCH = {"command": "touch created_by_tool.txt && echo made", "description": "Create a file (mock)"}


def tool_script(final_match):
    return {"turns": [
        {"text": "I will create the file.", "tool_use": {"name": "Bash", "input": TOUCH, "chunks": 3}},
        {"match": final_match, "text": "The tool ran."},
    ]}


def scenario_allow(exe, scratch):
    """(b) A Bash tool call that needs permission: can_use_tool on stdout, allow on stdin, tool runs."""
    mock = Mock(scratch, tool_script({"last_user_has_tool_result": True, "tool_result_contains": "made"}))
    claude = Claude(exe, scratch, mock)
    try:
        t0 = claude.started
        claude.say("please create a file")
        ask = claude.wait_for("can_use_tool", lambda o: o.get("type") == "control_request")
        req = ask["request"]
        check(req["subtype"] == "can_use_tool" and req["tool_name"] == "Bash" and req["input"] == TOUCH,
              f"control request {ask}")
        answer(claude, ask, {"behavior": "allow", "updatedInput": req["input"]})
        result = claude.wait_result()
        turn = time.monotonic() - t0
        check(result["subtype"] == "success" and result["result"] == "The tool ran.", f"result {result}")
        check(result["permission_denials"] == [], f"denials {result['permission_denials']}")
        results = tool_results(claude.lines)
        check(len(results) == 1 and results[0]["content"] == "made" and not results[0]["is_error"],
              f"tool results {results}")
        check(os.path.exists(os.path.join(claude.cwd, "created_by_tool.txt")), "the tool did not run")
        reqs = mock.message_requests()
        check(len(reqs) == 2, f"{len(reqs)} model requests")
        check(claude.finish() == 0, "exit code")
        return [claude], {"spawn_to_result_s": round(turn, 2), "duration_ms": result["duration_ms"],
                          "can_use_tool": ask}
    finally:
        claude.kill()
        mock.stop()


def scenario_deny(exe, scratch):
    """(c) The same tool call, denied: the model gets an error tool_result carrying our message."""
    message = "Denied by smoke_claude.py"
    mock = Mock(scratch, tool_script({"last_user_has_tool_result": True, "tool_result_is_error": True,
                                      "tool_result_contains": message}))
    claude = Claude(exe, scratch, mock)
    try:
        claude.say("please create a file")
        ask = claude.wait_for("can_use_tool", lambda o: o.get("type") == "control_request")
        answer(claude, ask, {"behavior": "deny", "message": message})
        result = claude.wait_result()
        check(result["subtype"] == "success" and result["result"] == "The tool ran.", f"result {result}")
        results = tool_results(claude.lines)
        check(len(results) == 1 and results[0]["is_error"] and message in json.dumps(results[0]["content"]),
              f"tool results {results}")
        check(not os.path.exists(os.path.join(claude.cwd, "created_by_tool.txt")), "the denied tool ran")
        denials = result["permission_denials"]
        check(len(denials) == 1 and denials[0]["tool_name"] == "Bash", f"denials {denials}")
        check(claude.finish() == 0, "exit code")
        return [claude], {"tool_result": results[0], "permission_denials": denials}
    finally:
        claude.kill()
        mock.stop()


def scenario_deny_interrupt(exe, scratch):
    """Deny with `interrupt: true`: the tool is refused and the whole turn stops (no further model request)."""
    mock = Mock(scratch, tool_script({"last_user_has_tool_result": True}))
    claude = Claude(exe, scratch, mock)
    try:
        claude.say("please create a file")
        ask = claude.wait_for("can_use_tool", lambda o: o.get("type") == "control_request")
        answer(claude, ask, {"behavior": "deny", "message": "Stop here.", "interrupt": True})
        result = claude.wait_result()
        check(result["subtype"] == "error_during_execution" and result["terminal_reason"] == "aborted_tools",
              f"result {result}")
        results = tool_results(claude.lines)
        check(len(results) == 1 and results[0]["is_error"], f"tool results {results}")
        check(len(mock.message_requests()) == 1, "the model was asked again after an interrupting deny")
        rc = claude.finish()
        check(rc == 1, f"exit code {rc}")  # the exit code follows the last turn's result: is_error → 1
        return [claude], {"tool_result": results[0]["content"][:80] + "…", "terminal_reason": result["terminal_reason"],
                          "exit_code": rc}
    finally:
        claude.kill()
        mock.stop()


def scenario_allow_quirks(exe, scratch):
    """`updatedInput` is required on allow (2.1.197): without it the CLI fails the tool with a ZodError and
    counts a denial. With a changed `updatedInput`, the changed command is what runs."""
    mock = Mock(scratch, {"turns": tool_script({})["turns"] * 2})
    first = Claude(exe, scratch, mock)
    second = None
    try:
        first.say("please create a file")
        answer(first, first.wait_for("can_use_tool", lambda o: o.get("type") == "control_request"),
               {"behavior": "allow"})
        r1 = first.wait_result()
        results = tool_results(first.lines)
        check(results[0]["is_error"] and "ZodError" in results[0]["content"], f"tool results {results}")
        check(len(r1["permission_denials"]) == 1, f"denials {r1['permission_denials']}")
        check(first.finish() == 0, "first exit code")
        second = Claude(exe, scratch, mock)
        second.say("please create a file")
        answer(second, second.wait_for("can_use_tool", lambda o: o.get("type") == "control_request"),
               {"behavior": "allow", "updatedInput": {"command": "echo rewritten", "description": "Changed"}})
        r2 = second.wait_result()
        results = tool_results(second.lines)
        check(results[0]["content"] == "rewritten" and not results[0]["is_error"], f"tool results {results}")
        check(not os.path.exists(os.path.join(second.cwd, "created_by_tool.txt")), "the original command ran")
        check(r2["permission_denials"] == [], f"denials {r2['permission_denials']}")
        check(second.finish() == 0, "second exit code")
        return [first, second], {"allow_without_updatedInput": tool_results(first.lines)[0]["content"][:60] + "…"}
    finally:
        first.kill()
        if second:
            second.kill()
        mock.stop()


def scenario_interrupt(exe, scratch):
    """(d) An interrupt control request mid slow-stream; the process stays up for the next turn."""
    mock = Mock(scratch, {"turns": [
        {"content": [{"type": "text", "repeat": "tick ", "times": 100}], "delay_ms": 100},
        {"match": {"last_user_text_contains": "again"}, "text": "Back after the interrupt."},
    ]})
    claude = Claude(exe, scratch, mock)
    try:
        claude.say("stream slowly")
        claude.wait_for("a few text deltas", lambda o: is_event(o, "content_block_delta", "text_delta")
                        and len(text_deltas(claude.lines)) >= 3)
        t0 = time.monotonic()
        claude.send({"type": "control_request", "request_id": "intr-1", "request": {"subtype": "interrupt"}})
        ack = claude.wait_for("interrupt ack", lambda o: o.get("type") == "control_response")
        check(ack["response"] == {"subtype": "success", "request_id": "intr-1"}, f"ack {ack}")
        result = claude.wait_result()
        stop = time.monotonic() - t0
        check(result["subtype"] == "error_during_execution" and result["is_error"], f"result {result}")
        check(result.get("terminal_reason") == "aborted_streaming", f"terminal_reason {result.get('terminal_reason')}")
        deadline = time.monotonic() + 5
        while not [r for r in mock.records() if r["type"] == "response_end"]:
            check(time.monotonic() < deadline, "the mock never saw the stream end")
            time.sleep(0.05)
        end = [r for r in mock.records() if r["type"] == "response_end"][0]
        check(end["outcome"] == "client closed" and end["events_sent"] < 100, f"stream end {end}")
        claude.say("again please")
        result2 = claude.wait_result()
        check(result2["subtype"] == "success" and result2["result"] == "Back after the interrupt.",
              f"second result {result2}")
        check(result2["session_id"] == result["session_id"], "session changed after interrupt")
        check(claude.finish() == 0, "exit code")
        markers = [o for o in claude.lines if o.get("type") == "user" and "interrupted" in json.dumps(o["message"])]
        return [claude], {"interrupt_to_result_s": round(stop, 2), "mock_stream_end": end,
                          "interrupt_marker": markers[0]["message"] if markers else None}
    finally:
        claude.kill()
        mock.stop()


def scenario_overloaded(exe, scratch):
    """(e) A 529 overloaded, then success on the CLI's retry."""
    mock = Mock(scratch, {"turns": [{"error": {"status": 529, "message": "Overloaded"}},
                                    {"text": "Worked on retry."}]})
    claude = Claude(exe, scratch, mock)
    try:
        t0 = claude.started
        claude.say("hello")
        retry = claude.wait_for("api_retry", lambda o: o.get("subtype") == "api_retry")
        check(retry["error_status"] == 529 and retry["attempt"] == 1, f"retry {retry}")
        result = claude.wait_result()
        check(result["subtype"] == "success" and result["result"] == "Worked on retry.", f"result {result}")
        check(len(mock.message_requests()) == 2, "expected exactly two model requests")
        check(claude.finish() == 0, "exit code")
        return [claude], {"api_retry": retry, "spawn_to_result_s": round(time.monotonic() - t0, 2),
                          "duration_ms": result["duration_ms"]}
    finally:
        claude.kill()
        mock.stop()


def scenario_api_error(exe, scratch):
    """A 400 (not retried): an error result, then the same process answers the next message. (Had the error
    been the last turn before EOF, the exit code would be 1.)"""
    mock = Mock(scratch, {"turns": [{"error": {"status": 400, "message": "mock: bad request"}},
                                    {"text": "Recovered."}]})
    claude = Claude(exe, scratch, mock)
    try:
        claude.say("hello")
        result = claude.wait_result()
        check(result["is_error"] and result["api_error_status"] == 400 and "mock: bad request" in result["result"],
              f"result {result}")
        check(not any(o.get("subtype") == "api_retry" for o in claude.lines), "a 400 was retried")
        synthetic = [o for o in claude.lines if o.get("type") == "assistant"]
        check(len(synthetic) == 1 and synthetic[0]["message"]["model"] == "<synthetic>", "no synthetic message")
        claude.say("try again")
        again = claude.wait_result()
        check(again["subtype"] == "success" and again["result"] == "Recovered.", f"second result {again}")
        rc = claude.finish()
        return [claude], {"error_result": {k: result[k] for k in ("subtype", "is_error", "api_error_status",
                                                                 "result")}, "exit_code_after_recovery": rc}
    finally:
        claude.kill()
        mock.stop()


def scenario_two_turns(exe, scratch):
    """(f) A second turn in the same process; it runs `echo hi`, which the CLI allows without asking.
    The first answer starts with a thinking block."""
    mock = Mock(scratch, {"turns": [
        {"match": {"last_user_text_contains": "first"}, "thinking": "The user wants a first answer.",
         "text": "First answer."},
        {"match": {"last_user_text_contains": "second"}, "tool_use": {"name": "Bash", "input": {
            "command": "echo hi", "description": "Say hi"}}},
        {"match": {"tool_result_contains": "hi"}, "text": "Second answer."},
    ]})
    claude = Claude(exe, scratch, mock)
    try:
        claude.say("first question")
        r1 = claude.wait_result()
        check(r1["result"] == "First answer.", f"first result {r1}")
        thinking = [o for o in claude.lines if o.get("type") == "assistant"
                    and o["message"]["content"][0]["type"] == "thinking"]
        check(len(thinking) == 1 and thinking[0]["message"]["content"][0]["thinking"] == "The user wants a first answer.",
              "no thinking block in the first answer")
        check(any(is_event(o, "content_block_delta", "thinking_delta") for o in claude.lines), "no thinking_delta")
        t0 = time.monotonic()
        claude.say("second question")
        r2 = claude.wait_result()
        turn2 = time.monotonic() - t0
        check(r2["result"] == "Second answer." and r2["session_id"] == r1["session_id"], f"second result {r2}")
        check(control_requests(claude.lines, "can_use_tool") == [], "echo hi asked for permission")
        third = mock.message_requests()[-1]["body"]
        check("first question" in messages_text(third) and "First answer." in messages_text(third),
              "the second turn did not carry the first")
        check(claude.finish() == 0, "exit code")
        inits = [o for o in claude.lines if o.get("subtype") == "init"]
        return [claude], {"second_turn_s": round(turn2, 2), "system_init_lines": len(inits)}
    finally:
        claude.kill()
        mock.stop()


def scenario_side_requests(exe, scratch):
    """Side requests that must not eat scripted turns: generate_session_title (a streamed /v1/messages call,
    answered by a rule) and get_context_usage (count_tokens calls)."""
    mock = Mock(scratch, {
        "rules": [{"match": {"system_contains": "sentence-case title"}, "reply": {"text": '{"title": "Fix the login bug"}'}}],
        "turns": [{"text": "Hello."}]})
    claude = Claude(exe, scratch, mock)
    try:
        claude.send({"type": "control_request", "request_id": "title-1",
                     "request": {"subtype": "generate_session_title", "description": "fix the login bug"}})
        title = claude.wait_for("title", lambda o: o.get("type") == "control_response")
        check(title["response"] == {"subtype": "success", "request_id": "title-1",
                                    "response": {"title": "Fix the login bug"}}, f"title {title}")
        claude.say("hello")
        result = claude.wait_result()
        check(result["result"] == "Hello.", f"result {result}")
        claude.send({"type": "control_request", "request_id": "ctx-1", "request": {"subtype": "get_context_usage"}})
        usage = claude.wait_for("context usage", lambda o: o.get("type") == "control_response")
        check(usage["response"]["subtype"] == "success" and usage["response"]["response"]["totalTokens"] > 0,
              f"context usage {json.dumps(usage)[:300]}")
        counted = [r for r in mock.records() if r.get("reply") == "count_tokens"]
        check(counted, "no count_tokens request")
        check([r["reply"] for r in mock.message_requests()] == ["rule 0", "turn 0"], "a side request took a turn")
        check(claude.finish() == 0, "exit code")
        return [claude], {"title_response": title["response"], "count_tokens_requests": len(counted),
                          "context_usage_keys": sorted(usage["response"]["response"].keys())}
    finally:
        claude.kill()
        mock.stop()


def scenario_long_stream(exe, scratch):
    """A long answer, 2000 text deltas: all of it arrives, in order, one stream_event per delta."""
    mock = Mock(scratch, {"turns": [{"content": [{"type": "text", "deltas": [f"w{i} " for i in range(2000)]}]}]})
    claude = Claude(exe, scratch, mock)
    try:
        claude.say("talk a lot")
        result = claude.wait_result()
        expected = "".join(f"w{i} " for i in range(2000))
        check(result["subtype"] == "success" and result["result"] == expected,
              f"long result differs: {result['result'][:60]!r}...{result['result'][-60:]!r} ({len(result['result'])} chars)")
        deltas = text_deltas(claude.lines)
        check("".join(deltas) == expected, f"{len(deltas)} deltas do not add up")
        check(claude.finish() == 0, "exit code")
        # No fixture: 2000 near-identical lines say nothing the short ones do not.
        return [], {"stream_events": len(deltas), "duration_ms": result["duration_ms"]}
    finally:
        claude.kill()
        mock.stop()


def scenario_resume(exe, scratch):
    """(g) --resume <session id> in a new process sends the prior conversation to the model."""
    mock = Mock(scratch, {"turns": [
        {"match": {"last_user_text_contains": "PINEAPPLE"}, "text": "Noted the word."},
        {"match": {"last_user_text_contains": "which word"}, "text": "It was PINEAPPLE."},
    ]})
    first = Claude(exe, scratch, mock)
    second = None
    try:
        first.say("remember the word PINEAPPLE")
        r1 = first.wait_result()
        session = r1["session_id"]
        check(first.finish() == 0, "first exit code")
        t0 = time.monotonic()
        second = Claude(exe, scratch, mock, extra_args=["--resume", session])
        second.say("which word did I ask you to remember?")
        r2 = second.wait_result()
        took = time.monotonic() - t0
        check(r2["subtype"] == "success" and r2["result"] == "It was PINEAPPLE.", f"resumed result {r2}")
        check(r2["session_id"] == session, f"resumed session id {r2['session_id']} != {session}")
        body = mock.message_requests()[-1]["body"]
        roles = [m["role"] for m in body["messages"]]
        sent = messages_text(body)
        check("remember the word PINEAPPLE" in sent and "Noted the word." in sent, "prior messages not sent")
        check(second.finish() == 0, "second exit code")
        return [first, second], {"session_id": session, "resumed_roles": roles, "spawn_to_result_s": round(took, 2)}
    finally:
        first.kill()
        if second:
            second.kill()
        mock.stop()


def scenario_root(exe, scratch):
    """(h) As root, --permission-mode bypassPermissions is refused unless IS_SANDBOX=1."""
    if os.geteuid() != 0:
        return [], {"skipped": "not root"}
    mock = Mock(scratch, {"turns": [{"text": "bypass ok"}]})
    try:
        home = os.path.join(scratch, "home")
        work = os.path.join(scratch, "work")
        os.makedirs(work, exist_ok=True)
        base = [exe, "-p", "hi", "--output-format", "stream-json", "--verbose", "--permission-mode", "bypassPermissions"]
        refused = subprocess.run(base, cwd=work, env=claude_env(home, mock.port), capture_output=True, timeout=60)
        check(refused.returncode == 1 and b"root" in refused.stderr, f"not refused: {refused}")
        check(mock.message_requests() == [], "the refused run reached the model")
        sandbox = subprocess.run(base, cwd=work, env={**claude_env(home, mock.port), "IS_SANDBOX": "1"},
                                 capture_output=True, timeout=60)
        lines = [json.loads(x) for x in sandbox.stdout.splitlines()]
        check(sandbox.returncode == 0 and lines[-1].get("result") == "bypass ok", f"IS_SANDBOX run: {sandbox}")
        check(lines[0].get("permissionMode") == "bypassPermissions", f"init {lines[0]}")
        return [], {"refusal_exit": refused.returncode, "refusal_stderr": refused.stderr.decode().strip(),
                    "with_IS_SANDBOX": "exit 0, permissionMode bypassPermissions"}
    finally:
        mock.stop()


def scenario_file_edits(exe, scratch):
    """Write a new file, then Edit it, each asked and allowed: the tool inputs a diff is read from."""
    notes = os.path.join(scratch, "work", "notes.txt")
    write = {"file_path": notes, "content": "alpha\nbeta\ngamma\n"}
    edit = {"file_path": notes, "old_string": "beta", "new_string": "BETA"}
    mock = Mock(scratch, {"turns": [
        {"text": "Writing it.", "tool_use": {"name": "Write", "input": write}},
        {"match": {"last_user_has_tool_result": True}, "text": "Editing it.", "tool_use": {"name": "Edit", "input": edit}},
        {"match": {"last_user_has_tool_result": True}, "text": "Edited."},
    ]})
    claude = Claude(exe, scratch, mock)
    try:
        claude.say("write and edit the notes")
        for tool in ("Write", "Edit"):
            ask = claude.wait_for(f"can_use_tool {tool}", lambda o: o.get("type") == "control_request" and
                                  o["request"].get("tool_name") == tool)
            answer(claude, ask, {"behavior": "allow", "updatedInput": ask["request"]["input"]})
        result = claude.wait_result()
        check(result["subtype"] == "success" and result["result"] == "Edited.", f"result {result}")
        with open(notes) as f:
            check(f.read() == "alpha\nBETA\ngamma\n", "the file was not edited")
        check(claude.finish() == 0, "exit code")
        return [claude], {}
    finally:
        claude.kill()
        mock.stop()


SCENARIOS = {
    "text": scenario_text, "permission_allow": scenario_allow, "permission_deny": scenario_deny,
    "permission_deny_interrupt": scenario_deny_interrupt, "permission_allow_quirks": scenario_allow_quirks,
    "interrupt": scenario_interrupt, "overloaded_retry": scenario_overloaded,
    "api_error": scenario_api_error, "two_turns": scenario_two_turns,
    "long_stream": scenario_long_stream, "side_requests": scenario_side_requests,
    "resume": scenario_resume, "root_bypass": scenario_root, "file_edits": scenario_file_edits,
}


def write_fixture(out_dir, name, processes, scratch):
    """stdout as printed (and what we sent, as sent) per process, scratch paths made stable."""
    real = os.path.realpath(scratch)
    slug = "".join(c if c.isalnum() else "-" for c in real)

    def clean(line):
        return line.replace(real, "<scratch>").replace(slug, "-scratch-")

    os.makedirs(out_dir, exist_ok=True)
    for i, proc in enumerate(processes):
        suffix = "" if len(processes) == 1 else f".{i + 1}"
        for kind, lines in (("", proc.raw), (".stdin", [json.dumps(o) for o in proc.sent])):
            with open(os.path.join(out_dir, f"{name}{suffix}{kind}.ndjson"), "w") as f:
                f.writelines(clean(line) + "\n" for line in lines)


def main():
    return smoke_support.main(__doc__, "claude", SCENARIOS, write_fixture)


if __name__ == "__main__":
    sys.exit(main())
