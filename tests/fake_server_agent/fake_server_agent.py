#!/usr/bin/env python3
"""An agent shaped like a local server (the way `opencode serve` is), for the daemon's tests only (never shipped).

One process serves every session over HTTP on 127.0.0.1 and reports what happens in all of them on one
server-sent event stream. Its "model" is an Anthropic Messages API (the project's mock provider, at
$FAKE_SERVER_AGENT_BASE_URL); a tool_use block whose input has a `command` runs that command in a shell, after
asking the client (mode "ask") or at once (mode "auto"). Conversations are kept as JSON files in
$FAKE_SERVER_AGENT_HOME (default ~/.fake-server-agent/sessions), written before a turn's end is reported, so a
session can be resumed by a later process.

  fake_server_agent.py --version
  fake_server_agent.py serve            prints "listening on http://127.0.0.1:PORT" once it accepts connections

HTTP API (JSON bodies):
  GET  /health                               {"version"}
  GET  /event                                text/event-stream; every event's data has "session" and "type"
  POST /session {"cwd"}                      {"id"} a new session
  GET  /session/ID                           the stored session, or 404
  POST /session/ID/prompt {"text","mode","model"}   202; 409 while a turn runs
  POST /session/ID/abort                     {"aborted": bool}
  POST /session/ID/permission/RID {"allow","message"}   200, or 404 when nothing waits for it

Events: text.delta {text}, text.done {text}, tool.started {tool_id, name, input}, permission.asked {request_id,
tool_id, name, input, description}, tool.output {tool_id, text}, tool.finished {tool_id, output, is_error},
turn.finished {stop: end_turn|cancelled|error, text, error?, usage?}.
"""

import http.client
import http.server
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
import uuid

VERSION = "1.0.0"


def sessions_dir():
    home = os.environ.get("FAKE_SERVER_AGENT_HOME") or os.path.join(os.path.expanduser("~"), ".fake-server-agent")
    path = os.path.join(home, "sessions")
    os.makedirs(path, exist_ok=True)
    return path


def session_file(session_id):
    return os.path.join(sessions_dir(), session_id + ".json")


def save(record):
    record["updated"] = int(time.time() * 1000)
    path = session_file(record["id"])
    with open(path + ".tmp", "w", encoding="utf-8") as out:
        json.dump(record, out)
    os.replace(path + ".tmp", path)


def load(session_id):
    if not session_id.startswith("fs_") or "/" in session_id:
        return None
    try:
        with open(session_file(session_id), encoding="utf-8") as source:
            return json.load(source)
    except (OSError, ValueError):
        return None


class Events:
    """Every subscriber of GET /event gets every event, numbered."""

    def __init__(self):
        self.lock = threading.Lock()
        self.subscribers = []
        self.next_id = 1

    def subscribe(self):
        q = queue.Queue()
        with self.lock:
            self.subscribers.append(q)
        return q

    def unsubscribe(self, q):
        with self.lock:
            if q in self.subscribers:
                self.subscribers.remove(q)

    def publish(self, session_id, kind, **data):
        data.update({"session": session_id, "type": kind})
        with self.lock:
            frame = "id: %d\nevent: %s\ndata: %s\n\n" % (self.next_id, kind, json.dumps(data))
            self.next_id += 1
            for q in self.subscribers:
                q.put(frame)


EVENTS = Events()


class Turn:
    """One prompt's work, run on a thread of its own; abort() may come from any other thread."""

    def __init__(self, session, text, mode, model):
        self.session = session
        self.text = text
        self.mode = mode or "ask"
        self.model = model or "mock-model"
        self.cancelled = threading.Event()
        self.lock = threading.Lock()
        self.connection = None  # the model request in flight
        self.command = None  # the shell command running
        self.pending = {}  # request id -> [threading.Event, answer]

    def abort(self):
        self.cancelled.set()
        with self.lock:
            if self.connection is not None and self.connection.sock is not None:
                try:
                    self.connection.sock.shutdown(2)
                except OSError:
                    pass
            if self.command is not None:
                try:
                    os.killpg(self.command.pid, signal.SIGKILL)
                except OSError:
                    pass
            for waiting in self.pending.values():
                waiting[0].set()

    def answer(self, request_id, allow, message):
        with self.lock:
            waiting = self.pending.get(request_id)
            if waiting is None:
                return False
            waiting[1] = (allow, message)
            waiting[0].set()
            return True

    def run(self):
        record = self.session.record
        record["messages"].append({"role": "user", "content": [{"type": "text", "text": self.text}]})
        if not record.get("title"):
            record["title"] = self.text[:60]
        stop, error, final_text, usage = "end_turn", None, "", None
        try:
            while True:
                if self.cancelled.is_set():
                    stop = "cancelled"
                    break
                reply = self.ask_model(record["messages"])
                if self.cancelled.is_set():
                    stop = "cancelled"
                    break
                if reply.get("error"):
                    stop, error = "error", reply["error"]
                    break
                usage = reply.get("usage") or usage
                record["messages"].append({"role": "assistant", "content": reply["content"]})
                texts = [b["text"] for b in reply["content"] if b["type"] == "text"]
                if texts:
                    final_text = "".join(texts)
                    EVENTS.publish(record["id"], "text.done", text=final_text)
                tools = [b for b in reply["content"] if b["type"] == "tool_use"]
                if not tools:
                    break
                results = [self.use_tool(tool) for tool in tools]
                record["messages"].append({"role": "user", "content": results})
                if self.cancelled.is_set():
                    stop = "cancelled"
                    break
        except Exception as failure:  # noqa: BLE001 - a test agent reports whatever went wrong
            if self.cancelled.is_set():
                stop = "cancelled"
            else:
                stop, error = "error", "%s: %s" % (type(failure).__name__, failure)
        save(record)
        self.session.turn = None
        finished = {"stop": stop, "text": final_text}
        if error:
            finished["error"] = error
        if usage:
            finished["usage"] = usage
        EVENTS.publish(record["id"], "turn.finished", **finished)

    def ask_model(self, messages):
        base = urllib.parse.urlparse(os.environ.get("FAKE_SERVER_AGENT_BASE_URL", "http://127.0.0.1:9"))
        connection = http.client.HTTPConnection(base.hostname, base.port, timeout=120)
        with self.lock:
            self.connection = connection
        body = {"model": self.model, "max_tokens": 1024, "stream": True, "messages": messages,
                "tools": [{"name": "shell", "description": "run a shell command",
                           "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}}]}
        try:
            connection.request("POST", base.path.rstrip("/") + "/v1/messages", json.dumps(body),
                               {"content-type": "application/json", "x-api-key": "sk-mock",
                                "anthropic-version": "2023-06-01"})
            response = connection.getresponse()
            if response.status != 200:
                return {"error": "the model answered HTTP %d: %s" % (response.status, response.read()[:300].decode(errors="replace"))}
            return self.read_stream(response)
        finally:
            with self.lock:
                self.connection = None
            connection.close()

    def read_stream(self, response):
        blocks, current, partial_json, usage, data = [], None, "", None, None
        for raw in response:
            line = raw.decode("utf-8").rstrip("\r\n")
            if line.startswith("data: "):
                data = json.loads(line[6:])
                continue
            if line or data is None:
                continue
            kind = data.get("type")
            if kind == "content_block_start":
                current = dict(data["content_block"])
                if current["type"] == "text":
                    current["text"] = ""
                partial_json = ""
            elif kind == "content_block_delta":
                delta = data["delta"]
                if delta.get("type") == "text_delta":
                    current["text"] += delta["text"]
                    EVENTS.publish(self.session.record["id"], "text.delta", text=delta["text"])
                elif delta.get("type") == "input_json_delta":
                    partial_json += delta["partial_json"]
            elif kind == "content_block_stop":
                if current["type"] == "tool_use":
                    current["input"] = json.loads(partial_json or "{}")
                if current["type"] in ("text", "tool_use"):
                    blocks.append(current)
                current = None
            elif kind == "message_delta":
                output = data.get("usage", {}).get("output_tokens")
                usage = {"output_tokens": output} if output is not None else usage
            elif kind == "message_stop":
                return {"content": blocks, "usage": usage}
            data = None
        if self.cancelled.is_set():
            return {"content": blocks}
        return {"error": "the model's stream ended early"}

    def use_tool(self, tool):
        session_id = self.session.record["id"]
        command = tool.get("input", {}).get("command")
        EVENTS.publish(session_id, "tool.started", tool_id=tool["id"], name="shell", input=tool.get("input", {}))
        if not isinstance(command, str):
            return self.tool_result(tool, "this agent only runs shell commands", True)
        if self.mode == "ask":
            request_id = "perm_" + uuid.uuid4().hex[:12]
            waiting = [threading.Event(), None]
            with self.lock:
                self.pending[request_id] = waiting
            EVENTS.publish(session_id, "permission.asked", request_id=request_id, tool_id=tool["id"], name="shell",
                           input=tool["input"], description="Run a shell command: " + command)
            waiting[0].wait()
            with self.lock:
                self.pending.pop(request_id, None)
            if self.cancelled.is_set():
                return self.tool_result(tool, "cancelled", True)
            allow, message = waiting[1]
            if not allow:
                return self.tool_result(tool, "The user rejected this command" + (": " + message if message else ""), True)
        return self.run_command(tool, command)

    def run_command(self, tool, command):
        with self.lock:
            if self.cancelled.is_set():
                return self.tool_result(tool, "cancelled", True)
            self.command = subprocess.Popen(["/bin/bash", "-c", command], cwd=self.session.record["cwd"],
                                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                            stderr=subprocess.STDOUT, start_new_session=True)
        process = self.command
        output = []
        for raw in process.stdout:
            text = raw.decode("utf-8", errors="replace")
            output.append(text)
            EVENTS.publish(self.session.record["id"], "tool.output", tool_id=tool["id"], text=text)
        status = process.wait()
        with self.lock:
            self.command = None
        return self.tool_result(tool, "".join(output), status != 0)

    def tool_result(self, tool, output, is_error):
        EVENTS.publish(self.session.record["id"], "tool.finished", tool_id=tool["id"], output=output, is_error=is_error)
        return {"type": "tool_result", "tool_use_id": tool["id"], "content": output, "is_error": is_error}


class Session:
    def __init__(self, record):
        self.record = record
        self.turn = None


SESSIONS = {}
SESSIONS_LOCK = threading.Lock()


def find_session(session_id):
    with SESSIONS_LOCK:
        if session_id in SESSIONS:
            return SESSIONS[session_id]
        record = load(session_id)
        if record is None:
            return None
        SESSIONS[session_id] = Session(record)
        return SESSIONS[session_id]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length == 0:
            return {}
        try:
            value = json.loads(self.rfile.read(length))
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    def do_GET(self):
        parts = [p for p in urllib.parse.urlparse(self.path).path.split("/") if p]
        if parts == ["health"]:
            return self.reply(200, {"version": VERSION})
        if parts == ["event"]:
            return self.stream_events()
        if len(parts) == 2 and parts[0] == "session":
            session = find_session(parts[1])
            return self.reply(200, session.record) if session else self.reply(404, {"error": "no session " + parts[1]})
        self.reply(404, {"error": "no route"})

    def do_POST(self):
        parts = [p for p in urllib.parse.urlparse(self.path).path.split("/") if p]
        body = self.body()
        if body is None:
            return self.reply(400, {"error": "the body is not a JSON object"})
        if parts == ["session"]:
            cwd = body.get("cwd")
            if not isinstance(cwd, str) or not os.path.isdir(cwd):
                return self.reply(400, {"error": "cwd must name a directory"})
            record = {"id": "fs_" + uuid.uuid4().hex, "cwd": cwd, "title": "", "created": int(time.time() * 1000),
                      "messages": []}
            save(record)
            with SESSIONS_LOCK:
                SESSIONS[record["id"]] = Session(record)
            return self.reply(200, {"id": record["id"]})
        if len(parts) < 3 or parts[0] != "session":
            return self.reply(404, {"error": "no route"})
        session = find_session(parts[1])
        if session is None:
            return self.reply(404, {"error": "no session " + parts[1]})
        action = parts[2]
        if action == "prompt":
            if session.turn is not None:
                return self.reply(409, {"error": "a turn is running"})
            text = body.get("text")
            if not isinstance(text, str):
                return self.reply(400, {"error": "text must be a string"})
            session.turn = Turn(session, text, body.get("mode"), body.get("model"))
            threading.Thread(target=session.turn.run, daemon=True).start()
            return self.reply(202, {})
        if action == "abort":
            turn = session.turn
            if turn is not None:
                turn.abort()
            return self.reply(200, {"aborted": turn is not None})
        if action == "permission" and len(parts) == 4:
            turn = session.turn
            if turn is None or not turn.answer(parts[3], bool(body.get("allow")), body.get("message")):
                return self.reply(404, {"error": "nothing waits for " + parts[3]})
            return self.reply(200, {})
        self.reply(404, {"error": "no route"})

    def stream_events(self):
        subscription = EVENTS.subscribe()
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(b": connected\n\n")
            self.wfile.flush()
            while True:
                try:
                    frame = subscription.get(timeout=10)
                except queue.Empty:
                    frame = ": heartbeat\n\n"
                self.wfile.write(frame.encode())
                self.wfile.flush()
        except OSError:
            pass
        finally:
            EVENTS.unsubscribe(subscription)
            self.close_connection = True


def stop_everything(*_):
    with SESSIONS_LOCK:
        sessions = list(SESSIONS.values())
    for session in sessions:
        if session.turn is not None:
            session.turn.abort()
    os._exit(0)


def main():
    if sys.argv[1:] == ["--version"]:
        print("fake-server-agent " + VERSION)
        return 0
    if sys.argv[1:] != ["serve"]:
        print("usage: fake_server_agent.py --version | serve", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, stop_everything)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print("listening on http://127.0.0.1:%d" % server.server_address[1], flush=True)
    # EOF on stdin is how the daemon asks for a graceful stop (as it does of every agent process).
    threading.Thread(target=lambda: (sys.stdin.read(), stop_everything()), daemon=True).start()
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
