#!/usr/bin/env python3
"""Tests of openai_mock.py over real HTTP on 127.0.0.1, without any agent CLI."""

import json
import os
import sys
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import openai_mock  # noqa: E402
from mock_server_case import MockServerCase  # noqa: E402


def user(text):
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


ENVIRONMENT = user("<environment_context>\n  <cwd>/w</cwd>\n</environment_context>")
DEVELOPER = {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "You are Codex."}]}


class MockTest(MockServerCase):
    mock = openai_mock

    """POST /v1/responses."""

    def respond(self, inputs, stream=True, headers=None):
        return self.request("POST", "/v1/responses", {"model": "mock-model", "stream": stream, "input": inputs},
                            headers)

    def sse(self, text):
        events = []
        for frame in text.strip().split("\n\n"):
            name, data = frame.split("\n")
            self.assertTrue(name.startswith("event: ") and data.startswith("data: "))
            payload = json.loads(data[6:])
            self.assertEqual(payload["type"], name[7:])
            events.append((name[7:], payload))
        return events

    def test_text_stream_in_chunks_with_usage(self):
        self.start({"turns": [{"text": "hello world", "chunks": 3, "usage": {"input_tokens": 50, "output_tokens": 5}}]})
        status, headers, body = self.respond([DEVELOPER, ENVIRONMENT, user("hi")])
        self.assertEqual(status, 200)
        self.assertIn("text/event-stream", headers["content-type"])
        events = self.sse(body)
        self.assertEqual([n for n, _ in events], [
            "response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
            "response.output_text.delta", "response.output_text.delta", "response.output_text.delta",
            "response.output_text.done", "response.content_part.done", "response.output_item.done",
            "response.completed"])
        self.assertEqual("".join(d["delta"] for n, d in events if n == "response.output_text.delta"), "hello world")
        done = events[-2][1]["item"]
        self.assertEqual((done["type"], done["role"], done["content"][0]["text"]), ("message", "assistant", "hello world"))
        usage = events[-1][1]["response"]["usage"]
        self.assertEqual((usage["input_tokens"], usage["output_tokens"], usage["total_tokens"]), (50, 5, 55))
        self.assertEqual(events[-1][1]["response"]["status"], "completed")

    def test_exec_call_then_text_after_the_tool_output(self):
        self.start({"turns": [
            {"reasoning": "think", "exec": "echo hi", "escalate": True},
            {"match": {"last_input_is_tool_output": True, "tool_output_contains": "hi"}, "text": "done"}]})
        _, _, body = self.respond([ENVIRONMENT, user("go")])
        events = self.sse(body)
        done = [d["item"] for n, d in events if n == "response.output_item.done"]
        self.assertEqual([i["type"] for i in done], ["reasoning", "function_call"])
        self.assertEqual(done[0]["summary"], [{"type": "summary_text", "text": "think"}])
        call = done[1]
        self.assertEqual((call["name"], call["call_id"]), ("exec_command", "call_mock_0001"))
        self.assertEqual(json.loads(call["arguments"]), {"cmd": "echo hi", "yield_time_ms": 2000,
                                                         "sandbox_permissions": "require_escalated",
                                                         "justification": "the mock asks for it"})
        history = [ENVIRONMENT, user("go"), call,
                   {"type": "function_call_output", "call_id": "call_mock_0001", "output": "Output:\nhi\n"}]
        status, _, body = self.respond(history, stream=False)
        self.assertEqual(status, 200)
        response = json.loads(body)
        self.assertEqual(response["output"][0]["content"][0]["text"], "done")

    def test_patch_shorthand_is_a_custom_tool_call(self):
        self.start({"turns": [{"patch": "*** Begin Patch\n*** End Patch\n"}]})
        _, _, body = self.respond([user("patch it")])
        done = [d["item"] for n, d in self.sse(body) if n == "response.output_item.done"]
        self.assertEqual((done[0]["type"], done[0]["name"]), ("custom_tool_call", "apply_patch"))
        self.assertEqual(done[0]["input"], "*** Begin Patch\n*** End Patch\n")

    def test_context_blocks_are_not_prompts_and_rules_do_not_consume(self):
        self.start({"rules": [{"match": {"developer_contains": "Summarize"}, "reply": {"text": "T"}}],
                    "turns": [{"match": {"last_user_text_contains": "PING"}, "text": "PONG"}]})
        status, _, body = self.respond([ENVIRONMENT])
        self.assertEqual(status, 400)
        self.assertIn("does not match turn 0: last_user_text_contains", json.loads(body)["error"]["message"])
        summarize = {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Summarize"}]}
        for _ in range(2):
            _, _, body = self.respond([summarize, user("x")], stream=False)
            self.assertEqual(json.loads(body)["output"][0]["content"][0]["text"], "T")
        _, _, body = self.respond([ENVIRONMENT, user("PING")], stream=False)
        self.assertEqual(json.loads(body)["output"][0]["content"][0]["text"], "PONG")
        status, _, body = self.respond([])
        self.assertEqual(status, 400)
        self.assertIn("script exhausted", body)
        self.assertEqual([r["reply"] for r in self.records()],
                         ["mismatch turn 0", "rule 0", "rule 0", "turn 0", "exhausted"])

    def test_error_status_failed_stream_and_the_log(self):
        self.start({"turns": [{"error": {"status": 429, "headers": {"retry-after": "0"}}},
                              {"text": "partial", "fail": {"code": "server_error", "message": "boom"}}]})
        status, headers, body = self.respond([user("x")], headers={"authorization": "Bearer secret"})
        self.assertEqual(status, 429)
        self.assertEqual(headers["retry-after"], "0")
        self.assertEqual(json.loads(body)["error"]["type"], "rate_limit_exceeded")
        _, _, body = self.respond([user("x")])
        events = self.sse(body)
        self.assertEqual(events[-1][0], "response.failed")
        self.assertEqual(events[-1][1]["response"]["error"], {"code": "server_error", "message": "boom"})
        records = self.records()
        self.assertEqual(records[0]["headers"]["authorization"], "<redacted>")
        self.assertEqual([r["type"] for r in records], ["request", "request", "response_end"])
        self.assertEqual(records[2]["outcome"], "complete")

    def test_long_stream_and_disconnect(self):
        self.start({"turns": [{"output": [{"type": "message", "repeat": "ab", "times": 500}]},
                              {"text": "cut", "disconnect_after": 3}]})
        _, _, body = self.respond([user("x")])
        self.assertEqual(sum(1 for n, _ in self.sse(body) if n == "response.output_text.delta"), 500)
        _, _, body = self.respond([user("x")])
        self.assertEqual([n for n, _ in self.sse(body)],
                         ["response.created", "response.in_progress", "response.output_item.added"])
        self.assertEqual(self.records()[-1]["outcome"], "disconnected by script")

    def test_side_routes(self):
        self.start({})
        status, _, body = self.request("GET", "/v1/models")
        self.assertEqual(status, 200)
        self.assertEqual(json.loads(body)["data"][0]["id"], "mock-model")
        status, _, body = self.request("POST", "/v1/embeddings", {})
        self.assertEqual(status, 404)
        self.assertEqual(json.loads(body)["error"]["type"], "invalid_request_error")
        self.assertEqual([r["reply"] for r in self.records()], ["models", "no route"])



class ChatCompletionsTest(MockServerCase):
    mock = openai_mock

    """POST /v1/chat/completions (openai_chat.py): the same script, predicates read from `messages`."""

    def chat(self, messages, stream=True, include_usage=True):
        body = {"model": "mock-model", "stream": stream, "messages": messages}
        if stream and include_usage:
            body["stream_options"] = {"include_usage": True}
        return self.request("POST", "/v1/chat/completions", body)

    def chunks(self, text):
        frames = text.strip().split("\n\n")
        for frame in frames:
            self.assertTrue(frame.startswith("data: "), frame)  # data-only frames, no event names
        self.assertEqual(frames[-1], "data: [DONE]")
        return [json.loads(frame[6:]) for frame in frames[:-1]]

    def test_text_in_chunks_then_finish_and_usage(self):
        self.start({"turns": [{"text": "hello world", "chunks": 3, "usage": {"input_tokens": 50, "output_tokens": 5}}]})
        status, headers, body = self.chat([{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}])
        self.assertEqual(status, 200)
        self.assertIn("text/event-stream", headers["content-type"])
        chunks = self.chunks(body)
        self.assertEqual(chunks[0]["choices"][0]["delta"], {"role": "assistant", "content": ""})
        self.assertEqual("".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"]), "hello world")
        self.assertEqual(sum(1 for c in chunks if c["choices"] and c["choices"][0]["delta"].get("content")), 3)
        self.assertEqual(chunks[-2]["choices"][0]["finish_reason"], "stop")
        self.assertEqual(chunks[-1]["choices"], [])
        self.assertEqual(chunks[-1]["usage"]["total_tokens"], 55)
        self.assertTrue(all(c["object"] == "chat.completion.chunk" for c in chunks))

    def test_a_barrier_holds_each_stream_until_the_other_got_there(self):
        reply = {"text": "together", "chunks": 2, "barrier": {"name": "pair", "parties": 2, "at_event": 1}}
        self.start({"rules": [{"match": {"last_user_text_contains": "x"}, "reply": reply}]})
        first_done = threading.Event()

        def first():
            self.chat([{"role": "user", "content": "x one"}])
            first_done.set()

        thread = threading.Thread(target=first)
        thread.start()
        # Alone at the barrier, the first stream holds (its role chunk was sent, its content was not).
        self.assertFalse(first_done.wait(0.5))
        _, _, body = self.chat([{"role": "user", "content": "x two"}])
        self.assertTrue(first_done.wait(5))
        thread.join()
        self.assertEqual("".join(c["choices"][0]["delta"].get("content", "") for c in self.chunks(body) if c["choices"]),
                         "together")
        self.assertNotIn("barrier_timeout", [r["type"] for r in self.records()])

    def test_a_barrier_nobody_else_reaches_gives_up_and_says_so(self):
        reply = {"text": "alone", "barrier": {"name": "pair", "parties": 2, "timeout_ms": 200}}
        self.start({"turns": [reply]})
        _, _, body = self.chat([{"role": "user", "content": "x"}])
        self.assertEqual("".join(c["choices"][0]["delta"].get("content", "") for c in self.chunks(body) if c["choices"]),
                         "alone")
        self.assertIn("barrier_timeout", [r["type"] for r in self.records()])

    def test_no_usage_chunk_unless_asked(self):
        self.start({"turns": [{"text": "x"}]})
        _, _, body = self.chat([{"role": "user", "content": "hi"}], include_usage=False)
        self.assertTrue(all(c["choices"] for c in self.chunks(body)))

    def test_tool_call_streamed_then_text_after_the_tool_result(self):
        self.start({"turns": [
            {"text": "Running it.", "function_call": {"name": "bash", "arguments": {"command": "echo hi"}, "chunks": 2}},
            {"match": {"last_input_is_tool_output": True, "tool_output_contains": "hi"}, "text": "done"}]})
        _, _, body = self.chat([{"role": "user", "content": [{"type": "text", "text": "go"}]}])
        chunks = self.chunks(body)
        calls = [c["choices"][0]["delta"]["tool_calls"][0] for c in chunks if c["choices"] and "tool_calls" in c["choices"][0]["delta"]]
        self.assertEqual(calls[0]["id"], "call_mock_0001")
        self.assertEqual(calls[0]["function"], {"name": "bash", "arguments": ""})
        self.assertEqual(json.loads("".join(c["function"]["arguments"] for c in calls[1:])), {"command": "echo hi"})
        self.assertEqual(len(calls), 3)
        finish = [c for c in chunks if c["choices"] and c["choices"][0]["finish_reason"]]
        self.assertEqual(finish[0]["choices"][0]["finish_reason"], "tool_calls")
        history = [{"role": "user", "content": "go"},
                   {"role": "assistant", "content": "Running it.", "tool_calls": [
                       {"id": "call_mock_0001", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]},
                   {"role": "tool", "tool_call_id": "call_mock_0001", "content": "hi\n"}]
        status, _, body = self.chat(history, stream=False)
        self.assertEqual(status, 200)
        completion = json.loads(body)
        self.assertEqual(completion["object"], "chat.completion")
        self.assertEqual(completion["choices"][0]["message"]["content"], "done")
        self.assertEqual(completion["choices"][0]["finish_reason"], "stop")

    def test_predicates_read_messages_and_a_mismatch_is_a_400(self):
        self.start({"turns": [{"match": {"any_user_text_contains": "banana", "last_user_text_contains": "word"},
                               "text": "banana it was"}]})
        status, _, body = self.chat([{"role": "user", "content": "what was the word?"}])
        self.assertEqual(status, 400)
        self.assertIn("any_user_text_contains", json.loads(body)["error"]["message"])
        _, _, body = self.chat([{"role": "user", "content": "remember banana"}, {"role": "assistant", "content": "ok"},
                                {"role": "user", "content": "what was the word?"}], stream=False)
        self.assertEqual(json.loads(body)["choices"][0]["message"]["content"], "banana it was")

    def test_reasoning_is_streamed_as_reasoning_content(self):
        self.start({"turns": [{"reasoning": "let me think", "text": "ok"}]})
        _, _, body = self.chat([{"role": "user", "content": "hi"}])
        deltas = [c["choices"][0]["delta"] for c in self.chunks(body) if c["choices"]]
        self.assertEqual(deltas[1], {"reasoning_content": "let me think"})

    def test_a_forced_tool_request_is_answered_by_its_rule_and_leaves_the_turns(self):
        # Grok Build's title side request: tool_choice forces `session_title`; a rule answers it with that call.
        title = {"name": "session_title", "arguments": {"session_title": "Mock session title"}}
        self.start({"rules": [{"match": {"forced_tool": "session_title"}, "reply": {"function_call": title}}],
                    "turns": [{"text": "the real answer"}]})
        forced = {"model": "mock-model", "stream": True, "messages": [{"role": "user", "content": "name this"}],
                  "tool_choice": {"type": "function", "function": {"name": "session_title"}},
                  "tools": [{"type": "function", "function": {"name": "session_title", "parameters": {}}}]}
        for _ in range(2):  # a rule is not used up
            _, _, body = self.request("POST", "/v1/chat/completions", forced)
            calls = [c["choices"][0]["delta"]["tool_calls"][0] for c in self.chunks(body)
                     if c["choices"] and "tool_calls" in c["choices"][0]["delta"]]
            self.assertEqual(calls[0]["function"]["name"], "session_title")
            self.assertEqual(json.loads("".join(c["function"]["arguments"] for c in calls[1:])),
                             {"session_title": "Mock session title"})
        # A request that forces nothing ("auto", or no tool_choice) takes the scripted turn.
        _, _, body = self.chat([{"role": "user", "content": "hi"}])
        self.assertEqual("".join(c["choices"][0]["delta"].get("content", "") for c in self.chunks(body) if c["choices"]),
                         "the real answer")
        self.assertEqual([r["reply"] for r in self.records() if r["type"] == "request"], ["rule 0", "rule 0", "turn 0"])

    def test_forced_tool_holds_only_for_the_named_function(self):
        self.start({"turns": [{"match": {"forced_tool": "session_title"}, "text": "x"}]})
        body = {"model": "m", "stream": False, "messages": [{"role": "user", "content": "hi"}], "tool_choice": "auto"}
        status, _, text = self.request("POST", "/v1/chat/completions", body)
        self.assertEqual(status, 400)
        self.assertIn("forced_tool", json.loads(text)["error"]["message"])
        body["tool_choice"] = {"type": "function", "function": {"name": "other"}}
        status, _, _ = self.request("POST", "/v1/chat/completions", body)
        self.assertEqual(status, 400)

    def test_a_responses_only_reply_is_refused_loudly(self):
        self.start({"turns": [{"exec": "echo hi"}]})
        status, _, body = self.chat([{"role": "user", "content": "hi"}])
        self.assertEqual(status, 500)
        self.assertIn("'exec' is a Responses API reply", json.loads(body)["error"]["message"])


if __name__ == "__main__":
    unittest.main()
