#!/usr/bin/env python3
"""Tests of anthropic_mock.py over real HTTP on 127.0.0.1, without any agent CLI."""

import json
import os
import sys
import unittest
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import anthropic_mock  # noqa: E402
from mock_server_case import MockServerCase  # noqa: E402


class MockTest(MockServerCase):
    mock = anthropic_mock

    def post(self, path, body, headers=None):
        return self.request("POST", path, body, headers)

    def sse(self, text):
        events = []
        for frame in text.strip().split("\n\n"):
            name, data = frame.split("\n")
            self.assertTrue(name.startswith("event: ") and data.startswith("data: "))
            events.append((name[7:], json.loads(data[6:])))
        return events

    def test_text_stream_in_chunks(self):
        self.start({"turns": [{"text": "hello world", "chunks": 3}]})
        status, headers, body = self.post("/v1/messages?beta=true", {"model": "m", "stream": True, "messages": [
            {"role": "user", "content": "hi"}]})
        self.assertEqual(status, 200)
        self.assertIn("text/event-stream", headers["content-type"])
        events = self.sse(body)
        self.assertEqual([n for n, _ in events], ["message_start", "ping", "content_block_start",
                                                  "content_block_delta", "content_block_delta",
                                                  "content_block_delta", "content_block_stop", "message_delta",
                                                  "message_stop"])
        self.assertEqual("".join(d["delta"]["text"] for n, d in events if n == "content_block_delta"), "hello world")
        self.assertEqual(events[0][1]["message"]["model"], "m")
        self.assertEqual(events[-2][1]["delta"]["stop_reason"], "end_turn")

    def test_tool_use_then_text_after_tool_result(self):
        self.start({"turns": [
            {"thinking": "hm", "tool_use": {"name": "Bash", "input": {"command": "echo hi"}, "chunks": 4}},
            {"match": {"last_user_has_tool_result": True, "tool_result_contains": "hi"}, "text": "done"}]})
        _, _, body = self.post("/v1/messages", {"stream": True, "messages": [{"role": "user", "content": "go"}]})
        events = self.sse(body)
        deltas = [d["delta"] for n, d in events if n == "content_block_delta"]
        self.assertEqual([d["type"] for d in deltas], ["thinking_delta", "signature_delta"] + ["input_json_delta"] * 4)
        self.assertEqual(json.loads("".join(d["partial_json"] for d in deltas[2:])), {"command": "echo hi"})
        start = [d for n, d in events if n == "content_block_start"][1]["content_block"]
        self.assertEqual((start["type"], start["id"], start["name"]), ("tool_use", "toolu_mock_0001", "Bash"))
        self.assertEqual(events[-2][1]["delta"]["stop_reason"], "tool_use")
        result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_mock_0001",
                                               "content": [{"type": "text", "text": "hi"}]}]}
        status, _, body = self.post("/v1/messages", {"stream": False, "messages": [
            {"role": "user", "content": "go"}, {"role": "assistant", "content": []}, result,
            {"role": "system", "content": "skipped when finding the last user message"}]})
        self.assertEqual(status, 200)
        message = json.loads(body)
        self.assertEqual(message["content"], [{"type": "text", "text": "done"}])

    def test_mismatch_keeps_the_turn_and_rules_do_not_consume(self):
        self.start({"rules": [{"match": {"system_contains": "title"}, "reply": {"text": "T"}}],
                    "turns": [{"match": {"last_user_text_contains": "PING"}, "text": "PONG"}]})
        status, _, body = self.post("/v1/messages", {"stream": False, "messages": [{"role": "user", "content": "x"}]})
        self.assertEqual(status, 400)
        self.assertIn("does not match turn 0: last_user_text_contains", body)
        for _ in range(2):
            _, _, body = self.post("/v1/messages", {"stream": False, "system": [{"type": "text", "text": "a title"}],
                                                    "messages": [{"role": "user", "content": "x"}]})
            self.assertEqual(json.loads(body)["content"][0]["text"], "T")
        _, _, body = self.post("/v1/messages", {"stream": False, "messages": [{"role": "user", "content": "PING"}]})
        self.assertEqual(json.loads(body)["content"][0]["text"], "PONG")
        status, _, body = self.post("/v1/messages", {"stream": False, "messages": []})
        self.assertEqual(status, 400)
        self.assertIn("script exhausted", body)
        self.assertEqual([r["reply"] for r in self.records()],
                         ["mismatch turn 0", "rule 0", "rule 0", "turn 0", "exhausted"])

    def test_error_then_success_and_the_log(self):
        self.start({"turns": [{"error": {"status": 529, "headers": {"retry-after": "0"}}}, {"text": "ok"}]})
        status, headers, body = self.post("/v1/messages", {"stream": True, "messages": []}, {"x-api-key": "secret"})
        self.assertEqual(status, 529)
        self.assertEqual(headers["retry-after"], "0")
        self.assertEqual(json.loads(body)["error"]["type"], "overloaded_error")
        status, _, _ = self.post("/v1/messages", {"stream": True, "messages": []})
        self.assertEqual(status, 200)
        records = self.records()
        self.assertEqual(records[0]["headers"]["x-api-key"], "<redacted>")
        self.assertEqual(records[0]["body"], {"stream": True, "messages": []})
        self.assertEqual([r["type"] for r in records], ["request", "request", "response_end"])
        self.assertEqual(records[2]["outcome"], "complete")

    def test_long_stream_and_disconnect(self):
        self.start({"turns": [{"content": [{"type": "text", "repeat": "ab", "times": 500}]},
                              {"text": "cut", "disconnect_after": 3}]})
        _, _, body = self.post("/v1/messages", {"stream": True, "messages": []})
        self.assertEqual(sum(1 for n, _ in self.sse(body) if n == "content_block_delta"), 500)
        _, _, body = self.post("/v1/messages", {"stream": True, "messages": []})
        self.assertEqual([n for n, _ in self.sse(body)], ["message_start", "ping", "content_block_start"])
        self.assertEqual(self.records()[-1]["outcome"], "disconnected by script")

    def test_side_routes(self):
        self.start({})
        status, _, body = self.post("/v1/messages/count_tokens?beta=true", {"messages": [{"role": "user",
                                                                                          "content": "x" * 40}]})
        self.assertEqual(status, 200)
        self.assertGreater(json.loads(body)["input_tokens"], 0)
        req = urllib.request.Request(self.base + "/", method="HEAD")
        with urllib.request.urlopen(req, timeout=10) as resp:
            self.assertEqual(resp.status, 200)
        status, _, body = self.post("/v2/other", {})
        self.assertEqual(status, 404)
        self.assertEqual(json.loads(body)["error"]["type"], "not_found_error")


if __name__ == "__main__":
    unittest.main()
