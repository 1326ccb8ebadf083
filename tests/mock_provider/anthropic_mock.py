#!/usr/bin/env python3
"""A scripted mock of the Anthropic Messages API, for running real agent CLIs (Claude Code) in tests.

Binds 127.0.0.1 only and never opens a connection of its own. Each test gives it a JSON script saying what to
answer (README.md in this folder has the format) and a file to record every request in, as NDJSON.

    anthropic_mock.py --script turns.json --log requests.ndjson [--port 0] [--port-file FILE]

It prints the port it got on stdout (one line) and, with --port-file, also writes it there (atomically).
Python 3 standard library only.
"""

import json
import os
import sys
import time
from urllib.parse import urlsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mock_common  # noqa: E402
from mock_common import Recorder, split  # noqa: E402,F401  (Recorder: used by tests)

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
    return mock_common.check_predicates(checks, match)


# ------------------------------------------------------------------------------------------------------------
# The script

class Script(mock_common.Script):
    """The script (mock_common.Script) with the Messages API predicates."""

    def __init__(self, doc):
        super().__init__(doc, mismatch)


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
    return mock_common.pieces_of({**block, "text": block.get("text", block.get("thinking", ""))})


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

class Handler(mock_common.MockHandler):
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
        record, body = mock_common.request_record(self, seq, raw)
        path = urlsplit(self.path).path

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
        return mock_common.read_body(self)

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
        mock_common.start_sse(self, {"request-id": f"req_mock_{seq}"})
        mock_common.stream_sse(self, seq, stream_events(reply, body, ids), reply)

    def send_json(self, status, obj, headers=None):
        mock_common.send_json(self, status, obj, headers)

    def send_error_json(self, status, message, kind=None, headers=None):
        kind = kind or ANTHROPIC_ERROR_TYPES.get(status, "api_error")
        self.send_json(status, {"type": "error", "error": {"type": kind, "message": message}}, headers)



class MockServer(mock_common.MockServer):
    handler = Handler


def main():
    mock_common.serve_main(__doc__, MockServer, Script)


if __name__ == "__main__":
    main()
