#!/usr/bin/env python3
"""A scripted mock of the Anthropic Messages API, for running real agent CLIs (Claude Code) in tests.

Binds 127.0.0.1 only and never opens a connection of its own. Each test gives it a JSON script saying what to
answer (README.md in this folder has the format) and a file to record every request in, as NDJSON.

    anthropic_mock.py --script turns.json --log requests.ndjson [--port 0] [--port-file FILE]

It prints the port it got on stdout (one line) and, with --port-file, also writes it there (atomically).
Python 3 standard library only.
"""

import argparse
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

SECRET_HEADERS = {"x-api-key", "authorization", "proxy-authorization", "cookie"}
ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error", 401: "authentication_error", 403: "permission_error", 404: "not_found_error",
    413: "request_too_large", 429: "rate_limit_error", 500: "api_error", 529: "overloaded_error",
}


# ------------------------------------------------------------------------------------------------------------
# Reading a request

def user_messages(body):
    """The request's user messages, oldest first. Claude Code also puts role "system" entries in `messages`."""
    return [m for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") == "user"]


def blocks_of(message):
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def text_of(message):
    return "\n".join(b.get("text", "") for b in blocks_of(message) if b.get("type") == "text")


def tool_result_text(block):
    content = block.get("content")
    if isinstance(content, list):
        return "\n".join(c.get("text", "") for c in content if isinstance(c, dict))
    return content if isinstance(content, str) else ""


def system_text(body):
    system = body.get("system")
    if isinstance(system, list):
        return "\n".join(b.get("text", "") for b in system if isinstance(b, dict))
    return system if isinstance(system, str) else ""


def mismatch(match, body):
    """Why `body` does not satisfy the predicate `match` (all keys must hold), or None if it does."""
    users = user_messages(body)
    last = users[-1] if users else {"content": []}
    last_results = [b for b in blocks_of(last) if b.get("type") == "tool_result"]
    checks = {
        "last_user_text_contains": lambda v: v in text_of(last),
        "any_user_text_contains": lambda v: any(v in text_of(m) for m in users),
        "last_user_has_tool_result": lambda v: bool(last_results) == v,
        "tool_result_contains": lambda v: any(v in tool_result_text(b) for b in last_results),
        "tool_result_is_error": lambda v: any(bool(b.get("is_error")) == v for b in last_results),
        "system_contains": lambda v: v in system_text(body),
        "stream": lambda v: bool(body.get("stream")) == v,
        "model": lambda v: body.get("model") == v,
        "min_messages": lambda v: len(body.get("messages") or []) >= v,
    }
    for key, value in match.items():
        check = checks.get(key)
        if check is None:
            return f"unknown predicate {key!r}"
        if not check(value):
            return f"{key}={json.dumps(value)} does not hold"
    return None


# ------------------------------------------------------------------------------------------------------------
# The script

class Script:
    """The replies for one test: `rules` answer any request they match (side requests such as titles), `turns`
    are taken in order by the other /v1/messages requests. Shared by the handler threads, so guarded by a lock."""

    def __init__(self, doc):
        self.turns = list(doc.get("turns", []))
        self.rules = list(doc.get("rules", []))
        self.exhausted = doc.get("exhausted")
        self.next_turn = 0
        self.rule_uses = [0] * len(self.rules)
        self.lock = threading.Lock()

    def pick(self, body):
        """Returns (label, reply) for a /v1/messages request."""
        with self.lock:
            for i, rule in enumerate(self.rules):
                times = rule.get("times")
                if (times is None or self.rule_uses[i] < times) and mismatch(rule.get("match", {}), body) is None:
                    self.rule_uses[i] += 1
                    return f"rule {i}", rule["reply"]
            if self.next_turn >= len(self.turns):
                return "exhausted", self.exhausted or error_reply(
                    400, f"mock: script exhausted ({len(self.turns)} turns served)")
            k = self.next_turn
            turn = self.turns[k]
            why = mismatch(turn.get("match", {}), body)
            if why is not None:
                # The turn stays in place: a stray request fails loudly, the scripted one can still come.
                return f"mismatch turn {k}", error_reply(400, f"mock: request does not match turn {k}: {why}")
            self.next_turn += 1
            return f"turn {k}", turn


def error_reply(status, message):
    return {"error": {"status": status, "message": message}}


def split(text, chunks):
    """`text` in `chunks` nearly equal pieces (at least one, none empty unless text is)."""
    chunks = max(1, min(int(chunks), len(text) or 1))
    size, extra = divmod(len(text), chunks)
    pieces, at = [], 0
    for i in range(chunks):
        n = size + (1 if i < extra else 0)
        pieces.append(text[at:at + n])
        at += n
    return pieces


def content_of(reply):
    """The reply's content blocks; the shorthands `thinking`, `text`, `tool_use` come in that order."""
    blocks = list(reply.get("content", []))
    if "thinking" in reply:
        blocks.append({"type": "thinking", "thinking": reply["thinking"]})
    if "text" in reply:
        blocks.append({"type": "text", "text": reply["text"], "chunks": reply.get("chunks", 1)})
    if "tool_use" in reply:
        blocks.append({"type": "tool_use", **reply["tool_use"]})
    return blocks


def deltas_of(block):
    """The pieces a text/thinking block streams in: `deltas`, or `repeat` x `times`, or `text` in `chunks`."""
    if "deltas" in block:
        return list(block["deltas"])
    if "repeat" in block:
        return [block["repeat"]] * int(block.get("times", 1))
    return split(block.get("text", block.get("thinking", "")), block.get("chunks", 1))


class Ids:
    def __init__(self):
        self.lock = threading.Lock()
        self.counts = {}

    def next(self, prefix):
        with self.lock:
            self.counts[prefix] = self.counts.get(prefix, 0) + 1
            return f"{prefix}_mock_{self.counts[prefix]:04d}"


def stream_events(reply, request_body, ids):
    """The SSE events (name, data) of a streamed reply, in order."""
    msg_id = reply.get("id") or ids.next("msg")
    input_tokens = reply.get("usage", {}).get("input_tokens", max(1, len(json.dumps(request_body)) // 4))
    output_tokens = 0
    stop_reason = reply.get("stop_reason")
    yield "message_start", {"type": "message_start", "message": {
        "id": msg_id, "type": "message", "role": "assistant", "model": reply.get("model") or request_body.get("model") or "claude-mock",
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": 1,
                  "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}}
    yield "ping", {"type": "ping"}
    for index, block in enumerate(content_of(reply)):
        kind = block["type"]
        if kind == "text":
            yield "content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": {"type": "text", "text": ""}}
            for piece in deltas_of(block):
                output_tokens += max(1, len(piece) // 4)
                yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                              "delta": {"type": "text_delta", "text": piece}}
        elif kind == "thinking":
            yield "content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": {"type": "thinking", "thinking": "", "signature": ""}}
            for piece in deltas_of(block):
                output_tokens += max(1, len(piece) // 4)
                yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                              "delta": {"type": "thinking_delta", "thinking": piece}}
            yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": {
                "type": "signature_delta", "signature": block.get("signature", "mock-signature")}}
        elif kind == "tool_use":
            stop_reason = stop_reason or "tool_use"
            yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": {
                "type": "tool_use", "id": block.get("id") or ids.next("toolu"), "name": block["name"], "input": {}}}
            for piece in split(json.dumps(block.get("input", {})), block.get("chunks", 1)):
                output_tokens += max(1, len(piece) // 4)
                yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                              "delta": {"type": "input_json_delta", "partial_json": piece}}
        else:
            raise ValueError(f"unknown content block type {kind!r}")
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield "message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": stop_reason or "end_turn", "stop_sequence": None},
                            "usage": {"output_tokens": reply.get("usage", {}).get("output_tokens", output_tokens)}}
    yield "message_stop", {"type": "message_stop"}


def whole_message(reply, request_body, ids):
    """The non-streamed answer: the same events folded into one message object."""
    message, blocks, partial_json = None, [], {}
    for name, data in stream_events(reply, request_body, ids):
        if name == "message_start":
            message = data["message"]
        elif name == "content_block_start":
            blocks.append(dict(data["content_block"]))
        elif name == "content_block_delta":
            block, delta = blocks[data["index"]], data["delta"]
            if delta["type"] == "text_delta":
                block["text"] += delta["text"]
            elif delta["type"] == "thinking_delta":
                block["thinking"] += delta["thinking"]
            elif delta["type"] == "signature_delta":
                block["signature"] = delta["signature"]
            else:
                partial_json[data["index"]] = partial_json.get(data["index"], "") + delta["partial_json"]
        elif name == "message_delta":
            message.update(data["delta"])
            message["usage"]["output_tokens"] = data["usage"]["output_tokens"]
    for index, text in partial_json.items():
        blocks[index]["input"] = json.loads(text)
    message["content"] = blocks
    return message


# ------------------------------------------------------------------------------------------------------------
# The server

class Recorder:
    """Appends one JSON object per line to the log, flushed at once so a test can read it while we run."""

    def __init__(self, path):
        self.file = open(path, "a", encoding="utf-8") if path else None
        self.lock = threading.Lock()
        self.seq = 0

    def next_seq(self):
        with self.lock:
            self.seq += 1
            return self.seq

    def close(self):
        if self.file:
            self.file.close()

    def write(self, record):
        if self.file:
            with self.lock:
                self.file.write(json.dumps(record) + "\n")
                self.file.flush()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "switchboard-mock-anthropic"

    # Every response closes its connection: simpler than keep-alive, and the CLIs reconnect without complaint.
    def do_HEAD(self):
        self.handle_any()

    def do_GET(self):
        self.handle_any()

    def do_POST(self):
        self.handle_any()

    def handle_any(self):
        server = self.server
        seq = server.recorder.next_seq()
        raw = self.read_body()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        path = urlsplit(self.path).path
        headers = {k.lower(): ("<redacted>" if k.lower() in SECRET_HEADERS else v) for k, v in self.headers.items()}
        record = {"type": "request", "seq": seq, "time": round(time.time(), 3), "method": self.command,
                  "path": self.path, "headers": headers, "body": body}
        if body is None and raw:
            record["body_text"] = raw.decode("utf-8", "replace")

        if self.command == "POST" and path == "/v1/messages" and isinstance(body, dict):
            label, reply = server.script.pick(body)
            record["reply"] = label
            server.recorder.write(record)
            self.answer_messages(seq, body, reply)
        elif self.command == "POST" and path == "/v1/messages/count_tokens":
            record["reply"] = "count_tokens"
            server.recorder.write(record)
            self.send_json(200, {"input_tokens": max(1, len(raw) // 4)})
        elif path == "/" and self.command in ("HEAD", "GET"):
            record["reply"] = "root"
            server.recorder.write(record)
            self.send_json(200, {"mock": "anthropic"})
        elif self.command == "GET" and path == "/v1/models":
            record["reply"] = "models"
            server.recorder.write(record)
            self.send_json(200, {"data": [{"type": "model", "id": "claude-mock", "display_name": "Mock",
                                           "created_at": "2025-01-01T00:00:00Z"}],
                                 "has_more": False, "first_id": "claude-mock", "last_id": "claude-mock"})
        else:
            record["reply"] = "no route"
            server.recorder.write(record)
            self.send_error_json(404, f"mock: no route for {self.command} {path}")

    def read_body(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            parts = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def answer_messages(self, seq, body, reply):
        ids = self.server.ids
        time.sleep(reply.get("first_delay_ms", 0) / 1000)
        if "error" in reply:
            err = reply["error"]
            self.send_error_json(err.get("status", 500), err.get("message", "mock error"),
                                 err.get("type"), err.get("headers", {}))
            return
        if not body.get("stream"):
            self.send_json(200, whole_message(reply, body, ids), {"request-id": f"req_mock_{seq}"})
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.send_header("request-id", f"req_mock_{seq}")
        self.end_headers()
        self.close_connection = True
        delay = reply.get("delay_ms", 0) / 1000
        cut = reply.get("disconnect_after")
        sent = 0
        outcome = "complete"
        try:
            for name, data in stream_events(reply, body, ids):
                if cut is not None and sent >= cut:
                    outcome = "disconnected by script"
                    break
                if sent and delay:
                    time.sleep(delay)
                self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()
                sent += 1
        except (BrokenPipeError, ConnectionResetError):
            outcome = "client closed"
        self.server.recorder.write({"type": "response_end", "seq": seq, "time": round(time.time(), 3),
                                    "outcome": outcome, "events_sent": sent})

    def send_json(self, status, obj, headers=None):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        for k, v in (headers or {}).items():
            self.send_header(k, str(v))
        self.end_headers()
        self.close_connection = True
        if self.command != "HEAD":
            self.wfile.write(data)

    def send_error_json(self, status, message, kind=None, headers=None):
        kind = kind or ANTHROPIC_ERROR_TYPES.get(status, "api_error")
        self.send_json(status, {"type": "error", "error": {"type": kind, "message": message}}, headers)

    def log_message(self, fmt, *args):
        if self.server.verbose:
            sys.stderr.write("mock: " + (fmt % args) + "\n")


class MockServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port, script, recorder, verbose=False):
        super().__init__(("127.0.0.1", port), Handler)
        self.script, self.recorder, self.verbose, self.ids = script, recorder, verbose, Ids()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--script", help="JSON script (README.md); default: no turns")
    parser.add_argument("--log", help="append every request received to this NDJSON file")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1; 0 (default) picks a free one")
    parser.add_argument("--port-file", help="also write the port to this file once listening")
    parser.add_argument("--verbose", action="store_true", help="log each request line on stderr")
    args = parser.parse_args()

    doc = {}
    if args.script:
        with open(args.script, encoding="utf-8") as f:
            doc = json.load(f)
    server = MockServer(args.port, Script(doc), Recorder(args.log), args.verbose)
    port = server.server_address[1]
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(f"{port}\n")
        os.replace(tmp, args.port_file)
    print(port, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
