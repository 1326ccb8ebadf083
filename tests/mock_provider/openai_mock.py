#!/usr/bin/env python3
"""A scripted mock of the OpenAI Responses API as Codex uses it (`POST /v1/responses`, streamed), and of the Chat
Completions API as OpenAI-compatible clients use it (`POST /v1/chat/completions`, openai_chat.py), for running real
agent CLIs in tests.

Binds 127.0.0.1 only and never opens a connection of its own. Each test gives it a JSON script saying what to
answer (README.md in this folder has the format; it is the Anthropic mock's design with Responses output items)
and a file to record every request in, as NDJSON.

    openai_mock.py --script turns.json --log requests.ndjson [--port 0] [--port-file FILE]

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
import openai_chat  # noqa: E402
from mock_common import Recorder, split  # noqa: E402,F401  (Recorder: used by tests)

OPENAI_ERROR_TYPES = {
    400: "invalid_request_error", 401: "invalid_request_error", 403: "invalid_request_error",
    404: "invalid_request_error", 429: "rate_limit_exceeded", 500: "server_error", 503: "server_error",
}
TOOL_OUTPUT_TYPES = ("function_call_output", "custom_tool_call_output")


# ------------------------------------------------------------------------------------------------------------
# Reading a request. Codex sends the whole conversation every time as `input`: developer messages (system
# prompt, skills), user messages (an <environment_context> block, then the prompts), assistant messages,
# reasoning items, function_call / function_call_output pairs, custom_tool_call / custom_tool_call_output pairs.

def input_items(body):
    return [i for i in body.get("input") or [] if isinstance(i, dict)]


def message_text(item):
    content = item.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(c.get("text", "") for c in content or [] if isinstance(c, dict))


def user_messages(body):
    """The user messages that are prompts, oldest first: Codex's own <environment_context> and similar
    context blocks (user messages that start with '<') are left out."""
    return [i for i in input_items(body) if i.get("type") == "message" and i.get("role") == "user"
            and not message_text(i).lstrip().startswith("<")]


def trailing_tool_outputs(body):
    """The tool outputs at the end of `input`: what the model is asked to react to in this request."""
    outputs = []
    for item in reversed(input_items(body)):
        if item.get("type") not in TOOL_OUTPUT_TYPES:
            break
        outputs.append(item)
    return list(reversed(outputs))


def output_text(item):
    output = item.get("output")
    if isinstance(output, list):
        return "\n".join(c.get("text", "") for c in output if isinstance(c, dict))
    return output if isinstance(output, str) else json.dumps(output)


def developer_text(body):
    parts = [message_text(i) for i in input_items(body) if i.get("type") == "message" and i.get("role") == "developer"]
    instructions = body.get("instructions")
    if isinstance(instructions, str):
        parts.insert(0, instructions)
    return "\n".join(parts)


def mismatch(match, body):
    """Why `body` does not satisfy the predicate `match` (all keys must hold), or None if it does. A chat
    completion request (`messages`) is read by openai_chat.py, with the same predicate names."""
    if "messages" in body:
        return openai_chat.mismatch(match, body)
    users = user_messages(body)
    last = users[-1] if users else {"content": []}
    outputs = trailing_tool_outputs(body)
    checks = {
        "last_user_text_contains": lambda v: v in message_text(last),
        "any_user_text_contains": lambda v: any(v in message_text(m) for m in users),
        "last_input_is_tool_output": lambda v: bool(outputs) == v,
        "tool_output_contains": lambda v: any(v in output_text(o) for o in outputs),
        "developer_contains": lambda v: v in developer_text(body),
        "input_contains": lambda v: v in json.dumps(body.get("input")),
        "stream": lambda v: bool(body.get("stream")) == v,
        "model": lambda v: body.get("model") == v,
        "min_input_items": lambda v: len(input_items(body)) >= v,
    }
    return mock_common.check_predicates(checks, match)


class Script(mock_common.Script):
    """The script (mock_common.Script) with the Responses API predicates."""

    def __init__(self, doc):
        super().__init__(doc, mismatch)


# ------------------------------------------------------------------------------------------------------------
# Writing a response

def exec_call(command, reply):
    """The `exec` shorthand: Codex's unified-exec tool, `exec_command`, running `command` in a login shell."""
    arguments = {"cmd": command, "yield_time_ms": reply.get("yield_time_ms", 2000)}
    if reply.get("escalate"):
        arguments["sandbox_permissions"] = "require_escalated"
        arguments["justification"] = reply.get("justification", "the mock asks for it")
    return {"type": "function_call", "name": "exec_command", "arguments": arguments}


def output_of(reply):
    """The reply's output items; the shorthands `reasoning`, `text`, `exec`, `function_call`, `patch` come after
    `output`, in that order."""
    items = list(reply.get("output", []))
    if "reasoning" in reply:
        items.append({"type": "reasoning", "summary": reply["reasoning"]})
    if "text" in reply:
        items.append({"type": "message", "text": reply["text"], "chunks": reply.get("chunks", 1)})
    if "exec" in reply:
        items.append(exec_call(reply["exec"], reply))
    if "function_call" in reply:
        items.append({"type": "function_call", **reply["function_call"]})
    if "patch" in reply:
        items.append({"type": "custom_tool_call", "name": "apply_patch", "input": reply["patch"]})
    return items


def usage_of(reply, request_body, output_tokens):
    usage = reply.get("usage", {})
    input_tokens = usage.get("input_tokens", max(1, len(json.dumps(request_body)) // 4))
    output_tokens = usage.get("output_tokens", output_tokens)
    return {"input_tokens": input_tokens,
            "input_tokens_details": {"cached_tokens": usage.get("cached_tokens", 0)},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": usage.get("reasoning_tokens", 0)},
            "total_tokens": input_tokens + output_tokens}


def stream_events(reply, request_body, ids):
    """The SSE events (name, data) of a streamed reply, in order."""
    response_id = reply.get("id") or ids.next("resp")
    model = reply.get("model") or request_body.get("model") or "mock-model"
    output_tokens = 0
    done_items = []
    shell = {"id": response_id, "object": "response", "created_at": int(time.time()), "model": model,
             "status": "in_progress", "output": []}
    yield "response.created", {"type": "response.created", "response": shell}
    yield "response.in_progress", {"type": "response.in_progress", "response": shell}
    for index, item in enumerate(output_of(reply)):
        kind = item["type"]
        if kind == "message":
            item_id = item.get("id") or ids.next("msg")
            yield "response.output_item.added", {"type": "response.output_item.added", "output_index": index, "item": {
                "type": "message", "id": item_id, "status": "in_progress", "role": "assistant", "content": []}}
            yield "response.content_part.added", {"type": "response.content_part.added", "item_id": item_id,
                                                  "output_index": index, "content_index": 0,
                                                  "part": {"type": "output_text", "text": "", "annotations": []}}
            text = ""
            for piece in mock_common.pieces_of(item):
                text += piece
                output_tokens += max(1, len(piece) // 4)
                yield "response.output_text.delta", {"type": "response.output_text.delta", "item_id": item_id,
                                                     "output_index": index, "content_index": 0, "delta": piece}
            yield "response.output_text.done", {"type": "response.output_text.done", "item_id": item_id,
                                                "output_index": index, "content_index": 0, "text": text}
            part = {"type": "output_text", "text": text, "annotations": []}
            yield "response.content_part.done", {"type": "response.content_part.done", "item_id": item_id,
                                                 "output_index": index, "content_index": 0, "part": part}
            done = {"type": "message", "id": item_id, "status": "completed", "role": "assistant", "content": [part]}
        elif kind == "reasoning":
            item_id = item.get("id") or ids.next("rs")
            summaries = item["summary"] if isinstance(item["summary"], list) else [item["summary"]]
            yield "response.output_item.added", {"type": "response.output_item.added", "output_index": index,
                                                 "item": {"type": "reasoning", "id": item_id, "summary": []}}
            parts = []
            for summary_index, summary in enumerate(summaries):
                yield "response.reasoning_summary_part.added", {
                    "type": "response.reasoning_summary_part.added", "item_id": item_id, "output_index": index,
                    "summary_index": summary_index, "part": {"type": "summary_text", "text": ""}}
                for piece in split(summary, item.get("chunks", 1)):
                    output_tokens += max(1, len(piece) // 4)
                    yield "response.reasoning_summary_text.delta", {
                        "type": "response.reasoning_summary_text.delta", "item_id": item_id, "output_index": index,
                        "summary_index": summary_index, "delta": piece}
                yield "response.reasoning_summary_text.done", {
                    "type": "response.reasoning_summary_text.done", "item_id": item_id, "output_index": index,
                    "summary_index": summary_index, "text": summary}
                parts.append({"type": "summary_text", "text": summary})
            done = {"type": "reasoning", "id": item_id, "summary": parts, "encrypted_content": None}
        elif kind == "function_call":
            item_id = item.get("id") or ids.next("fc")
            call_id = item.get("call_id") or ids.next("call")
            arguments = item.get("arguments", {})
            arguments = arguments if isinstance(arguments, str) else json.dumps(arguments)
            yield "response.output_item.added", {"type": "response.output_item.added", "output_index": index, "item": {
                "type": "function_call", "id": item_id, "call_id": call_id, "name": item["name"], "arguments": "",
                "status": "in_progress"}}
            for piece in split(arguments, item.get("chunks", 1)):
                output_tokens += max(1, len(piece) // 4)
                yield "response.function_call_arguments.delta", {
                    "type": "response.function_call_arguments.delta", "item_id": item_id, "output_index": index,
                    "delta": piece}
            yield "response.function_call_arguments.done", {"type": "response.function_call_arguments.done",
                                                            "item_id": item_id, "output_index": index,
                                                            "arguments": arguments}
            done = {"type": "function_call", "id": item_id, "call_id": call_id, "name": item["name"],
                    "arguments": arguments, "status": "completed"}
        elif kind == "custom_tool_call":
            item_id = item.get("id") or ids.next("ctc")
            call_id = item.get("call_id") or ids.next("call")
            yield "response.output_item.added", {"type": "response.output_item.added", "output_index": index, "item": {
                "type": "custom_tool_call", "id": item_id, "call_id": call_id, "name": item["name"], "input": "",
                "status": "in_progress"}}
            output_tokens += max(1, len(item["input"]) // 4)
            done = {"type": "custom_tool_call", "id": item_id, "call_id": call_id, "name": item["name"],
                    "input": item["input"], "status": "completed"}
        else:
            raise ValueError(f"unknown output item type {kind!r}")
        done_items.append(done)
        yield "response.output_item.done", {"type": "response.output_item.done", "output_index": index, "item": done}
    if "fail" in reply:
        failure = reply["fail"]
        yield "response.failed", {"type": "response.failed", "response": {
            **shell, "status": "failed", "output": done_items,
            "error": {"code": failure.get("code", "server_error"), "message": failure.get("message", "mock failure")}}}
        return
    yield "response.completed", {"type": "response.completed", "response": {
        **shell, "status": "completed", "output": done_items, "usage": usage_of(reply, request_body, output_tokens)}}


def whole_response(reply, request_body, ids):
    """The non-streamed answer: the final response object of the same events."""
    last = None
    for _, data in stream_events(reply, request_body, ids):
        last = data
    return last["response"]


# ------------------------------------------------------------------------------------------------------------
# The server

class Handler(mock_common.MockHandler):
    protocol_version = "HTTP/1.1"
    server_version = "switchboard-mock-openai"

    # Every response closes its connection: simpler than keep-alive, and Codex reconnects without complaint.
    def do_HEAD(self):
        self.handle_any()

    def do_GET(self):
        self.handle_any()

    def do_POST(self):
        self.handle_any()

    def handle_any(self):
        server = self.server
        seq = server.recorder.next_seq()
        raw = mock_common.read_body(self)
        record, body = mock_common.request_record(self, seq, raw)
        path = urlsplit(self.path).path

        if self.command == "POST" and path in ("/v1/responses", "/v1/chat/completions") and isinstance(body, dict):
            label, reply = server.script.pick(body)
            record["reply"] = label
            server.recorder.write(record)
            if path == "/v1/responses":
                self.answer(seq, body, reply, stream_events, whole_response)
            else:
                try:
                    openai_chat.parts_of(reply)
                except ValueError as refused:  # a script written for the other API: say so, loudly
                    return self.send_error_json(500, f"mock: {refused}")
                self.answer(seq, body, reply, openai_chat.stream_events, openai_chat.whole_completion)
        elif self.command == "GET" and path == "/v1/models":
            # Codex 0.171.0 never asked with a custom provider; both list shapes are given in case one does.
            record["reply"] = "models"
            server.recorder.write(record)
            model = {"id": "mock-model", "object": "model", "created": 1735689600, "owned_by": "mock"}
            mock_common.send_json(self, 200, {"object": "list", "data": [model], "models": []})
        elif path == "/" and self.command in ("HEAD", "GET"):
            record["reply"] = "root"
            server.recorder.write(record)
            mock_common.send_json(self, 200, {"mock": "openai"})
        else:
            record["reply"] = "no route"
            server.recorder.write(record)
            self.send_error_json(404, f"mock: no route for {self.command} {path}")

    def answer(self, seq, body, reply, events_of, whole_of):
        ids = self.server.ids
        time.sleep(reply.get("first_delay_ms", 0) / 1000)
        headers = {"x-request-id": f"req_mock_{seq}"}
        if "error" in reply:
            err = reply["error"]
            self.send_error_json(err.get("status", 500), err.get("message", "mock error"), err.get("type"),
                                 err.get("code"), {**headers, **err.get("headers", {})})
            return
        if not body.get("stream"):
            mock_common.send_json(self, 200, whole_of(reply, body, ids), headers)
            return
        mock_common.start_sse(self, headers)
        mock_common.stream_sse(self, seq, events_of(reply, body, ids), reply)

    def send_error_json(self, status, message, kind=None, code=None, headers=None):
        kind = kind or OPENAI_ERROR_TYPES.get(status, "server_error")
        mock_common.send_json(self, status, {"error": {"message": message, "type": kind, "param": None, "code": code}},
                              headers)



class MockServer(mock_common.MockServer):
    handler = Handler


def main():
    mock_common.serve_main(__doc__, MockServer, Script)


if __name__ == "__main__":
    main()
