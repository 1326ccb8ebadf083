#!/usr/bin/env python3
"""Drives the real `codex app-server` against openai_mock.py, headless, and asserts on what happens.

The reference for switchboard's Codex adapter: each scenario shows the exact command line, CODEX_HOME config,
environment, JSON-RPC lines we write and the lines Codex writes back, over stdio.

    smoke_codex.py [--codex PATH] [--only NAME,...] [--write-fixtures DIR] [--keep] [--no-netns]

PATH defaults to `scripts/agent-path codex` (run scripts/install-agents first). Exits non-zero if any scenario
fails. As root, and when `unshare` works, the whole run happens in a private network namespace (loopback only),
so nothing can leave the machine whatever the CLI tries. Every scenario has its own CODEX_HOME and HOME under a
scratch directory: the user's ~/.codex is never read or written. --write-fixtures saves each process's stdout
(and what we sent on stdin) as NDJSON, with the scratch directory replaced by "<scratch>".
"""

import base64
import json
import os
import queue
import subprocess
import sys
import threading
import time

import smoke_support  # beside this script
from smoke_support import Failure, check

HERE = os.path.dirname(os.path.abspath(__file__))
MOCK = os.path.join(HERE, "openai_mock.py")
TIMEOUT = 60  # seconds for any one expected line; a healthy turn takes well under 2 s
API_KEY_VARIABLE = "SWITCHBOARD_CODEX_API_KEY"


class Mock(smoke_support.Mock):
    """openai_mock.py in a child process, with its script and request log in `dir`."""

    server = MOCK

    def model_requests(self):
        return [r for r in self.records() if r["type"] == "request" and r["path"].startswith("/v1/responses")]


def codex_config(port, model="mock-model"):
    """$CODEX_HOME/config.toml: the mock as the only provider; no plugins (git fetch to github.com), no update
    check, no analytics, no retries (a broken mock shows at once), no endless reconnects."""
    return f"""model = "{model}"
model_provider = "switchboard"
approval_policy = "on-request"
sandbox_mode = "read-only"
check_for_update_on_startup = false

[model_providers.switchboard]
name = "switchboard provider"
base_url = "http://127.0.0.1:{port}/v1"
env_key = "{API_KEY_VARIABLE}"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 60000

[analytics]
enabled = false

[features]
plugins = false
unbounded_connection_retries = false
"""


def codex_env(home, codex_home):
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": home,  # `bash -lc` reads this home's profile, not the user's
        "CODEX_HOME": codex_home,  # config, sessions, logs: nothing of the user's ~/.codex
        API_KEY_VARIABLE: "sk-mock",  # any value; sent as Authorization: Bearer
        "RUST_LOG": "warn",
    }



class Codex:
    """One `codex app-server` process speaking JSON-RPC over stdio (no "jsonrpc" field; params always sent).
    Its stdout is also appended to codex.stdout.ndjson in the scratch dir, its stderr to codex.stderr.txt."""

    def __init__(self, exe, scratch, mock, model="mock-model", write_config=True):
        self.scratch = scratch
        self.home = os.path.join(scratch, "home")
        self.codex_home = os.path.join(self.home, ".codex")
        os.makedirs(self.codex_home, exist_ok=True)
        if write_config:
            with open(os.path.join(self.codex_home, "config.toml"), "w") as f:
                f.write(codex_config(mock.port, model))
        self.cwd = os.path.join(scratch, "work")
        os.makedirs(self.cwd, exist_ok=True)
        self.env = codex_env(self.home, self.codex_home)
        self.args = [exe, "app-server"]
        self.started = time.monotonic()
        with open(os.path.join(scratch, "codex.stderr.txt"), "ab") as stderr:
            self.proc = subprocess.Popen(self.args, cwd=self.cwd, env=self.env, stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=stderr)
        self.raw = []
        self.lines = []
        self.sent = []
        self.next_id = 1
        self.queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        with open(os.path.join(self.scratch, "codex.stdout.ndjson"), "ab") as copy:
            for raw in self.proc.stdout:
                copy.write(raw)
                copy.flush()
                self.raw.append(raw.decode("utf-8", "replace").rstrip("\n"))
                try:
                    obj = json.loads(raw)
                except ValueError:
                    obj = {"method": "<not json>", "text": raw.decode("utf-8", "replace")}
                self.lines.append(obj)
                self.queue.put(obj)
        self.queue.put(None)

    def send(self, obj):
        self.sent.append(obj)
        self.proc.stdin.write((json.dumps(obj) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method, params):
        rid = self.next_id
        self.next_id += 1
        self.send({"method": method, "id": rid, "params": params})
        return rid

    def call(self, method, params, timeout=TIMEOUT):
        rid = self.request(method, params)
        reply = self.wait_for(f"reply to {method}", lambda o: o.get("id") == rid and "method" not in o, timeout)
        check("error" not in reply, f"{method} failed: {reply}")
        return reply["result"]

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

    def wait_method(self, method, timeout=TIMEOUT):
        return self.wait_for(method, lambda o: o.get("method") == method, timeout)

    def initialize(self):
        result = self.call("initialize", {"clientInfo": {"name": "switchboard", "title": "Switchboard",
                                                         "version": "0.1.0"},
                                          "capabilities": {"experimentalApi": False}})
        self.send({"method": "initialized", "params": {}})
        return result

    def start_thread(self, approval="never", sandbox="read-only"):
        result = self.call("thread/start", {"cwd": self.cwd, "approvalPolicy": approval, "sandbox": sandbox})
        return result["thread"]["id"]

    def turn(self, thread_id, text):
        result = self.call("turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": text}]})
        return result["turn"]["id"]

    def wait_turn_completed(self, timeout=TIMEOUT):
        return self.wait_method("turn/completed", timeout)["params"]["turn"]

    def answer(self, request, decision):
        self.send({"id": request["id"], "result": {"decision": decision}})

    def finish(self, timeout=10):
        """EOF on stdin: the app-server exits."""
        self.proc.stdin.close()
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise Failure("did not exit after EOF on stdin")

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def notifications(codex, method):
    return [o for o in codex.lines if o.get("method") == method and "id" not in o]


def items(codex, event, item_type):
    return [o["params"]["item"] for o in notifications(codex, event) if o["params"]["item"]["type"] == item_type]


def deltas(codex, method="item/agentMessage/delta"):
    return [o["params"]["delta"] for o in notifications(codex, method)]


# ------------------------------------------------------------------------------------------------------------
# Scenarios. Each gets a fresh scratch dir and the codex path, returns a list of Codex processes (for fixtures)
# and a dict of notes to print.

def scenario_text(exe, scratch):
    """A plain text turn with a reasoning summary, streamed in pieces; usage reported."""
    mock = Mock(scratch, {"turns": [{"reasoning": "The user wants a greeting.", "text": "Hello from the mock.",
                                     "chunks": 3, "usage": {"input_tokens": 120, "output_tokens": 7,
                                                            "cached_tokens": 20}}]})
    codex = Codex(exe, scratch, mock)
    try:
        init = codex.initialize()
        ready = time.monotonic() - codex.started
        thread = codex.start_thread()
        t0 = time.monotonic()
        codex.turn(thread, "say hello")
        turn = codex.wait_turn_completed()
        took = time.monotonic() - t0
        check(turn["status"] == "completed", f"turn {turn}")
        check(deltas(codex) == ["Hello f", "rom the", " mock."], f"deltas {deltas(codex)}")
        messages = items(codex, "item/completed", "agentMessage")
        check([m["text"] for m in messages] == ["Hello from the mock."], f"messages {messages}")
        reasoning = items(codex, "item/completed", "reasoning")
        check(reasoning and reasoning[0]["summary"] == ["The user wants a greeting."], f"reasoning {reasoning}")
        check(deltas(codex, "item/reasoning/summaryTextDelta") == ["The user wants a greeting."], "reasoning deltas")
        usage = notifications(codex, "thread/tokenUsage/updated")[-1]["params"]["tokenUsage"]["last"]
        check(usage["inputTokens"] == 120 and usage["outputTokens"] == 7 and usage["cachedInputTokens"] == 20,
              f"usage {usage}")
        check(codex.finish() == 0, "exit code")
        paths = [r["path"] for r in mock.records() if r["type"] == "request"]
        check(all(p == "/v1/responses" for p in paths), f"unexpected requests {paths}")
        return [codex], {"spawn_to_initialize_s": round(ready, 2), "turn_s": round(took, 2),
                         "initialize_keys": sorted(init.keys())}
    finally:
        codex.kill()
        mock.stop()


def scenario_command(exe, scratch):
    """A shell command that needs no approval (policy never): item started, output deltas, item completed."""
    mock = Mock(scratch, {"turns": [
        {"text": "Running it.", "exec": "echo hi; sleep 0.5; echo bye"},
        {"match": {"last_input_is_tool_output": True, "tool_output_contains": "bye"}, "text": "It printed hi."},
    ]})
    codex = Codex(exe, scratch, mock)
    try:
        codex.initialize()
        thread = codex.start_thread(approval="never", sandbox="danger-full-access")
        codex.turn(thread, "run echo")
        turn = codex.wait_turn_completed()
        check(turn["status"] == "completed", f"turn {turn}")
        done = items(codex, "item/completed", "commandExecution")
        check(len(done) == 1 and done[0]["status"] == "completed" and done[0]["exitCode"] == 0
              and done[0]["aggregatedOutput"] == "hi\nbye\n", f"command {done}")
        pieces = deltas(codex, "item/commandExecution/outputDelta")
        # Quirk (0.171.0): output written before the item/started notification is not sent as a delta (here
        # "hi\n" usually is missing); aggregatedOutput in item/completed is the whole output.
        check(len(pieces) >= 1 and "hi\nbye\n".endswith("".join(pieces)), f"output deltas {pieces}")
        check(codex.finish() == 0, "exit code")
        return [codex], {"command": done[0]["command"], "source": done[0]["source"], "output_deltas": pieces}
    finally:
        codex.kill()
        mock.stop()


def approval_script(command, final):
    return [{"exec": command}, {"match": {"last_input_is_tool_output": True}, "text": final}]


def scenario_approval(exe, scratch):
    """Policy untrusted: a command that is not known-safe asks item/commandExecution/requestApproval.
    accept runs it; decline does not, and the model sees the rejection; serverRequest/resolved follows each."""
    mock = Mock(scratch, {"turns": approval_script("touch accepted.txt && echo created", "Accepted.")
                          + approval_script("touch declined.txt && echo created", "Declined.")})
    codex = Codex(exe, scratch, mock)
    try:
        codex.initialize()
        thread = codex.start_thread(approval="untrusted", sandbox="workspace-write")
        codex.turn(thread, "create accepted.txt")
        ask = codex.wait_method("item/commandExecution/requestApproval")
        check(ask["params"]["command"].endswith("'touch accepted.txt && echo created'"), f"ask {ask}")
        codex.answer(ask, "accept")
        resolved = codex.wait_method("serverRequest/resolved")
        check(resolved["params"]["requestId"] == ask["id"], f"resolved {resolved}")
        turn = codex.wait_turn_completed()
        check(turn["status"] == "completed", f"turn {turn}")
        check(os.path.exists(os.path.join(codex.cwd, "accepted.txt")), "the accepted command did not run")

        codex.turn(thread, "create declined.txt")
        ask2 = codex.wait_method("item/commandExecution/requestApproval")
        codex.answer(ask2, "decline")
        turn2 = codex.wait_turn_completed()
        check(turn2["status"] == "completed", f"turn {turn2}")
        check(not os.path.exists(os.path.join(codex.cwd, "declined.txt")), "the declined command ran")
        declined = [i for i in items(codex, "item/completed", "commandExecution") if i["status"] == "declined"]
        check(len(declined) == 1, "no declined item")
        last = mock.model_requests()[-1]["body"]["input"][-1]
        check(last["type"] == "function_call_output" and "rejected by user" in last["output"], f"model saw {last}")
        check(codex.finish() == 0, "exit code")
        return [codex], {"request_ids": [ask["id"], ask2["id"]], "available": ask["params"].get("availableDecisions"),
                         "declined_output": last["output"]}
    finally:
        codex.kill()
        mock.stop()


def scenario_accept_for_session(exe, scratch):
    """acceptForSession: the same command later in the thread runs without asking again."""
    command = "touch again.txt && echo created"
    mock = Mock(scratch, {"turns": approval_script(command, "First.") + approval_script(command, "Second.")})
    codex = Codex(exe, scratch, mock)
    try:
        codex.initialize()
        thread = codex.start_thread(approval="untrusted", sandbox="workspace-write")
        codex.turn(thread, "first")
        codex.answer(codex.wait_method("item/commandExecution/requestApproval"), "acceptForSession")
        check(codex.wait_turn_completed()["status"] == "completed", "first turn")
        codex.turn(thread, "second")
        check(codex.wait_turn_completed()["status"] == "completed", "second turn")
        asks = [o for o in codex.lines if o.get("method") == "item/commandExecution/requestApproval"]
        check(len(asks) == 1, f"{len(asks)} approval requests")
        check(codex.finish() == 0, "exit code")
        return [codex], {"approval_requests": len(asks)}
    finally:
        codex.kill()
        mock.stop()


def scenario_patch(exe, scratch):
    """apply_patch under untrusted + read-only: item/fileChange/requestApproval, accepted; the file appears."""
    patch = "*** Begin Patch\n*** Add File: hello.txt\n+hello from mock\n*** End Patch\n"
    mock = Mock(scratch, {"turns": [{"patch": patch},
                                    {"match": {"last_input_is_tool_output": True}, "text": "Patched."}]})
    codex = Codex(exe, scratch, mock, model="gpt-5.5")
    try:
        codex.initialize()
        thread = codex.start_thread(approval="untrusted", sandbox="read-only")
        codex.turn(thread, "add hello.txt")
        ask = codex.wait_method("item/fileChange/requestApproval")
        codex.answer(ask, "accept")
        turn = codex.wait_turn_completed()
        check(turn["status"] == "completed", f"turn {turn}")
        changes = items(codex, "item/completed", "fileChange")
        check(changes and changes[0]["status"] == "completed", f"file changes {changes}")
        check(os.path.exists(os.path.join(codex.cwd, "hello.txt")), "no hello.txt")
        check(notifications(codex, "turn/diff/updated"), "no turn/diff/updated")
        check(codex.finish() == 0, "exit code")
        return [codex], {"ask": ask["params"]}
    finally:
        codex.kill()
        mock.stop()


def scenario_interrupt(exe, scratch):
    """turn/interrupt while a command runs: turn/completed interrupted, no item/completed for it; the thread
    takes the next turn."""
    mock = Mock(scratch, {"turns": [
        {"exec": "sleep 30; echo never", "yield_time_ms": 20000},
        {"match": {"last_user_text_contains": "again"}, "text": "Back after the interrupt."},
    ]})
    codex = Codex(exe, scratch, mock)
    try:
        codex.initialize()
        thread = codex.start_thread(approval="never", sandbox="danger-full-access")
        turn_id = codex.turn(thread, "sleep")
        codex.wait_for("command started", lambda o: o.get("method") == "item/started"
                       and o["params"]["item"]["type"] == "commandExecution")
        time.sleep(0.3)
        t0 = time.monotonic()
        reply = codex.call("turn/interrupt", {"threadId": thread, "turnId": turn_id})
        turn = codex.wait_turn_completed()
        stop = time.monotonic() - t0
        check(reply == {} and turn["status"] == "interrupted", f"interrupt {reply} {turn}")
        codex.turn(thread, "again please")
        turn2 = codex.wait_turn_completed()
        check(turn2["status"] == "completed", f"second turn {turn2}")
        check(codex.finish() == 0, "exit code")
        return [codex], {"interrupt_to_completed_s": round(stop, 3),
                         "command_completed_items": len(items(codex, "item/completed", "commandExecution"))}
    finally:
        codex.kill()
        mock.stop()


def scenario_resume(exe, scratch):
    """thread/resume in a fresh process: the next model request carries the prior conversation."""
    mock = Mock(scratch, {"turns": [
        {"match": {"last_user_text_contains": "PINEAPPLE"}, "text": "Noted the word."},
        {"match": {"last_user_text_contains": "which word", "any_user_text_contains": "PINEAPPLE"},
         "text": "It was PINEAPPLE."},
    ]})
    first = Codex(exe, scratch, mock)
    second = None
    try:
        first.initialize()
        thread = first.start_thread()
        first.turn(thread, "remember the word PINEAPPLE")
        check(first.wait_turn_completed()["status"] == "completed", "first turn")
        check(first.finish() == 0, "first exit code")
        t0 = time.monotonic()
        second = Codex(exe, scratch, mock, write_config=False)
        second.initialize()
        resumed = second.call("thread/resume", {"threadId": thread, "excludeTurns": True})
        check(resumed["thread"]["id"] == thread, f"resumed {resumed['thread']['id']}")
        second.turn(thread, "which word did I ask you to remember?")
        turn = second.wait_turn_completed()
        check(turn["status"] == "completed", f"resumed turn {turn}")
        body = mock.model_requests()[-1]
        sent = json.dumps(body["body"]["input"])
        check("remember the word PINEAPPLE" in sent and "Noted the word." in sent, "prior messages not sent")
        metadata = json.loads(body["headers"].get("x-codex-turn-metadata", "{}"))
        check(second.finish() == 0, "second exit code")
        return [first, second], {"thread": thread, "history_initialization": metadata.get("history_initialization"),
                                 "resume_to_completed_s": round(time.monotonic() - t0, 2)}
    finally:
        first.kill()
        if second:
            second.kill()
        mock.stop()


def scenario_api_error(exe, scratch):
    """A 400 from the model (no retries configured): an error notification, then turn/completed failed; the
    thread takes the next turn."""
    mock = Mock(scratch, {"turns": [{"error": {"status": 400, "message": "mock: bad request"}},
                                    {"text": "Recovered."}]})
    codex = Codex(exe, scratch, mock)
    try:
        codex.initialize()
        thread = codex.start_thread()
        codex.turn(thread, "hello")
        turn = codex.wait_turn_completed()
        check(turn["status"] == "failed" and "mock: bad request" in json.dumps(turn["error"]), f"turn {turn}")
        errors = notifications(codex, "error")
        check(errors and not errors[-1]["params"]["willRetry"], f"errors {errors}")
        codex.turn(thread, "try again")
        check(codex.wait_turn_completed()["status"] == "completed", "second turn")
        check(codex.finish() == 0, "exit code")
        return [codex], {"turn_error": turn["error"], "error_notification": errors[-1]["params"]["error"]}
    finally:
        codex.kill()
        mock.stop()


def scenario_escalate(exe, scratch):
    """Policy on-request + workspace-write: the model asks to run outside the sandbox (`sandbox_permissions:
    require_escalated` with a justification); the approval request carries the justification as `reason`."""
    target = os.path.join(scratch, "outside", "escalated.txt")
    os.makedirs(os.path.dirname(target), exist_ok=True)
    mock = Mock(scratch, {"turns": [
        {"exec": f"touch {target} && echo ok", "escalate": True, "justification": "needs to write outside the workspace"},
        {"match": {"last_input_is_tool_output": True}, "text": "Escalated."}]})
    codex = Codex(exe, scratch, mock)
    try:
        codex.initialize()
        thread = codex.start_thread(approval="on-request", sandbox="workspace-write")
        codex.turn(thread, "write outside")
        ask = codex.wait_method("item/commandExecution/requestApproval")
        check(ask["params"].get("reason") == "needs to write outside the workspace", f"ask {ask}")
        codex.answer(ask, "accept")
        turn = codex.wait_turn_completed()
        check(turn["status"] == "completed", f"turn {turn}")
        check(os.path.exists(target), "the escalated command did not run")
        check(codex.finish() == 0, "exit code")
        return [codex], {"reason": ask["params"]["reason"], "available": ask["params"].get("availableDecisions")}
    finally:
        codex.kill()
        mock.stop()


def scenario_history(exe, scratch):
    """One thread with a bit of everything, for the rollout file it leaves (history fixtures): reasoning and text,
    a command, a declined command, an accepted patch, a command interrupted mid-run, a failed model request and
    a prompt with an image. Policy untrusted, so `echo` runs unasked and the others ask."""
    patch = "*** Begin Patch\n*** Add File: hello.txt\n+hello from mock\n*** End Patch\n"
    mock = Mock(scratch, {"turns": [
        {"reasoning": "The user wants a greeting.", "text": "Hello from the mock.",
         "usage": {"input_tokens": 120, "output_tokens": 7, "cached_tokens": 20}},
        {"exec": "echo hi"}, {"match": {"last_input_is_tool_output": True}, "text": "It printed hi."},
        {"exec": "touch declined.txt && echo created"}, {"match": {"last_input_is_tool_output": True}, "text": "Declined."},
        {"patch": patch}, {"match": {"last_input_is_tool_output": True}, "text": "Patched."},
        {"exec": "sleep 30; echo never", "yield_time_ms": 20000},
        {"error": {"status": 400, "message": "mock: bad request"}},
        {"match": {"last_user_text_contains": "look at this"}, "text": "Saw the image."},
    ]})
    codex = Codex(exe, scratch, mock, model="gpt-5.5")

    def turn(text, decisions=(), expect="completed"):
        """A turn whose approval requests get `decisions` in order (Codex's safe-command list varies by model)."""
        codex.turn(thread, text)
        pending = list(decisions)
        while True:
            line = codex.wait_for("approval or turn end", lambda o: o.get("method") == "turn/completed"
                                  or str(o.get("method", "")).endswith("/requestApproval"))
            if line["method"] == "turn/completed":
                check(line["params"]["turn"]["status"] == expect, f"turn {text!r}: {line['params']['turn']}")
                check(not pending, f"turn {text!r}: unused decisions {pending}")
                return
            codex.answer(line, pending.pop(0) if pending else "accept")

    try:
        codex.initialize()
        thread = codex.start_thread(approval="untrusted", sandbox="workspace-write")
        turn("say hello")
        turn("run echo hi")
        turn("create declined.txt", ["decline"])
        turn("add hello.txt", ["accept"])
        turn_id = codex.turn(thread, "sleep a while")
        codex.answer(codex.wait_method("item/commandExecution/requestApproval"), "accept")
        time.sleep(0.5)  # the approved `sleep 30` is running now
        codex.call("turn/interrupt", {"threadId": thread, "turnId": turn_id})
        check(codex.wait_turn_completed()["status"] == "interrupted", "interrupted turn")
        turn("hello again", expect="failed")
        image = os.path.join(codex.cwd, "dot.png")
        with open(image, "wb") as f:
            f.write(base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="))
        codex.call("turn/start", {"threadId": thread, "input": [{"type": "text", "text": "look at this"},
                                                                {"type": "localImage", "path": image}]})
        check(codex.wait_turn_completed()["status"] == "completed", "image turn")
        check(codex.finish() == 0, "exit code")
        rollouts = rollout_files(codex.codex_home)
        check(len(rollouts) == 1 and rollouts[0].endswith(f"-{thread}.jsonl"), f"rollouts {rollouts}")
        return [codex], {"thread": thread, "rollout": os.path.relpath(rollouts[0], codex.codex_home)}
    finally:
        codex.kill()
        mock.stop()


def scenario_fork(exe, scratch):
    """One thread open in two processes: the second cannot resume it (Codex allows one writer per thread) but can
    fork it; the fork's model request carries the conversation before the fork, and the first process's later
    turns are not part of the fork. Both rollouts are saved (history fixtures)."""
    mock = Mock(scratch, {"turns": [
        {"text": "Noted: teal."},
        {"match": {"any_user_text_contains": "teal", "last_user_text_contains": "which colour"}, "text": "It was teal."},
        {"match": {"last_user_text_contains": "after the fork"}, "text": "Still here."},
    ]})
    first = Codex(exe, scratch, mock)
    second = None
    try:
        first.initialize()
        thread = first.start_thread()
        first.turn(thread, "remember the colour teal")
        check(first.wait_turn_completed()["status"] == "completed", "first turn")
        second = Codex(exe, scratch, mock, write_config=False)
        second.initialize()
        rid = second.request("thread/resume", {"threadId": thread, "excludeTurns": True})
        refused = second.wait_for("resume reply", lambda o: o.get("id") == rid and "method" not in o)
        check("active writer" in json.dumps(refused.get("error")), f"resume while open elsewhere: {refused}")
        forked = second.call("thread/fork", {"threadId": thread, "excludeTurns": True, "cwd": second.cwd,
                                             "approvalPolicy": "never", "sandbox": "read-only"})["thread"]
        check(forked["forkedFromId"] == thread, f"fork {forked}")
        second.turn(forked["id"], "which colour did I say?")
        turn = second.wait_turn_completed()
        check(turn["status"] == "completed" and turn["items"][-1].get("text") == "It was teal.", f"fork turn {turn}")
        first.turn(thread, "a turn after the fork")
        check(first.wait_turn_completed()["status"] == "completed", "first thread after the fork")
        check(first.finish() == 0 and second.finish() == 0, "exit codes")
        rollouts = rollout_files(first.codex_home)
        check(len(rollouts) == 2, f"rollouts {rollouts}")
        return [first, second], {"thread": thread, "fork": forked["id"], "resume_refused": refused["error"]["message"]}
    finally:
        first.kill()
        if second:
            second.kill()
        mock.stop()


def rollout_files(codex_home):
    found = []
    for root, _, files in os.walk(os.path.join(codex_home, "sessions")):
        found += [os.path.join(root, f) for f in files if f.startswith("rollout-") and f.endswith(".jsonl")]
    return sorted(found)


SCENARIOS = {
    "text": scenario_text, "command": scenario_command, "approval": scenario_approval,
    "accept_for_session": scenario_accept_for_session, "escalate": scenario_escalate, "patch": scenario_patch, "interrupt": scenario_interrupt,
    "resume": scenario_resume, "api_error": scenario_api_error, "history": scenario_history,
    "fork": scenario_fork,
}

# Scenarios whose rollout files (Codex's own session history) are saved with their fixtures, under rollout/.
ROLLOUT_FIXTURES = {"history", "fork"}
# Longer strings in a saved rollout are cut: the base instructions and developer messages are tens of KB of
# Codex's prompt, which no test reads.
MAX_ROLLOUT_STRING = 600


def write_fixture(out_dir, name, processes, scratch):
    """stdout as printed (and what we sent, as sent) per process, scratch paths made stable."""
    real = os.path.realpath(scratch)

    def clean(line):
        return line.replace(real, "<scratch>").replace(scratch, "<scratch>")

    os.makedirs(out_dir, exist_ok=True)
    for i, proc in enumerate(processes):
        suffix = "" if len(processes) == 1 else f".{i + 1}"
        for kind, lines in (("", proc.raw), (".stdin", [json.dumps(o) for o in proc.sent])):
            with open(os.path.join(out_dir, f"{name}{suffix}{kind}.ndjson"), "w") as f:
                f.writelines(clean(line) + "\n" for line in lines)
    if name not in ROLLOUT_FIXTURES:
        return

    def cut(value):
        if isinstance(value, str):
            value = clean(value)
            return value if len(value) <= MAX_ROLLOUT_STRING else value[:80] + "…(cut)"
        if isinstance(value, list):
            return [cut(v) for v in value]
        if isinstance(value, dict):
            return {clean(k): cut(v) for k, v in value.items()}
        return value

    rollout_dir = os.path.join(out_dir, "rollout")
    os.makedirs(rollout_dir, exist_ok=True)
    for path in rollout_files(os.path.join(scratch, "home", ".codex")):
        with open(path) as f, open(os.path.join(rollout_dir, os.path.basename(path)), "w") as out:
            for line in f:
                out.write(json.dumps(cut(json.loads(line)), ensure_ascii=False, separators=(",", ":")) + "\n")


def main():
    # Not under /tmp: Codex refuses to create its helper aliases under a temporary directory (a warning).
    return smoke_support.main(__doc__, "codex", SCENARIOS, write_fixture, scratch_root=os.environ.get("SMOKE_SCRATCH_ROOT"))


if __name__ == "__main__":
    sys.exit(main())
