"""The OpenAI Chat Completions side of openai_mock.py (`POST /v1/chat/completions`): what OpenCode (through the AI
SDK's openai-compatible provider), Grok Build and Pi speak to a custom OpenAI-compatible provider.

The script is the same as for the Responses API (rules, turns, `exhausted`; README.md); this module reads its
predicates from a chat request (`messages`) and writes a reply as chat completion chunks. Python 3 standard
library only.
"""

import json
import time

import mock_common
from mock_common import split

# ------------------------------------------------------------------------------------------------------------
# Reading a request: the whole conversation as `messages` (system/developer, user, assistant with tool_calls,
# tool results as role "tool").


def message_text(message):
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(c.get("text", "") for c in content or [] if isinstance(c, dict) and c.get("type") == "text")


def messages(body):
    return [m for m in body.get("messages") or [] if isinstance(m, dict)]


def user_messages(body):
    return [m for m in messages(body) if m.get("role") == "user"]


def trailing_tool_outputs(body):
    """The tool results at the end of the conversation: what the model is asked to react to now."""
    outputs = []
    for message in reversed(messages(body)):
        if message.get("role") != "tool":
            break
        outputs.append(message)
    return list(reversed(outputs))


def system_text(body):
    return "\n".join(message_text(m) for m in messages(body) if m.get("role") in ("system", "developer"))


def forced_tool(body):
    """The function the request forces the model to call (`tool_choice: {"type": "function", "function": {"name":
    ...}}`), or None. Grok Build forces `session_title` in the side request that names a new session."""
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        return (choice.get("function") or {}).get("name")
    return None


def mismatch(match, body):
    """Why a chat request `body` does not satisfy `match`, or None if it does. The predicate names are the
    Responses side's (README.md), read from `messages`."""
    users = user_messages(body)
    last = users[-1] if users else {"content": ""}
    outputs = trailing_tool_outputs(body)
    checks = {
        "last_user_text_contains": lambda v: v in message_text(last),
        "any_user_text_contains": lambda v: any(v in message_text(m) for m in users),
        "last_input_is_tool_output": lambda v: bool(outputs) == v,
        "tool_output_contains": lambda v: any(v in message_text(o) for o in outputs),
        "developer_contains": lambda v: v in system_text(body),
        "input_contains": lambda v: v in json.dumps(body.get("messages")),
        "stream": lambda v: bool(body.get("stream")) == v,
        "model": lambda v: body.get("model") == v,
        "min_input_items": lambda v: len(messages(body)) >= v,
        "forced_tool": lambda v: forced_tool(body) == v,
    }
    return mock_common.check_predicates(checks, match)


# ------------------------------------------------------------------------------------------------------------
# Writing a response


def parts_of(reply):
    """What the reply says, in order: reasoning, text, then tool calls (`function_call`, one; `function_calls`, a
    list). A chat completion has one message, so other Responses items (patch, exec) are refused."""
    for key in ("patch", "exec", "output"):
        if key in reply:
            raise ValueError(f"'{key}' is a Responses API reply; a chat completion takes text, reasoning and "
                             "function_call(s)")
    calls = list(reply.get("function_calls", []))
    if "function_call" in reply:
        calls.append(reply["function_call"])
    return reply.get("reasoning"), reply.get("text"), calls


def chunk(completion_id, model, created, delta, finish_reason=None):
    return {"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}


def usage_of(reply, request_body, completion_tokens):
    usage = reply.get("usage", {})
    prompt_tokens = usage.get("input_tokens", max(1, len(json.dumps(request_body)) // 4))
    completion_tokens = usage.get("output_tokens", completion_tokens)
    return {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": usage.get("cached_tokens", 0)}}


def stream_events(reply, request_body, ids):
    """The data-only SSE events (None, data) of a streamed chat completion, ending with `[DONE]`."""
    completion_id = reply.get("id") or ids.next("chatcmpl")
    model = reply.get("model") or request_body.get("model") or "mock-model"
    created = int(time.time())
    reasoning, text, calls = parts_of(reply)
    tokens = 0
    yield None, chunk(completion_id, model, created, {"role": "assistant", "content": ""})
    if reasoning:
        for piece in split(reasoning, reply.get("reasoning_chunks", 1)):
            tokens += max(1, len(piece) // 4)
            yield None, chunk(completion_id, model, created, {"reasoning_content": piece})
    if text is not None:
        for piece in mock_common.pieces_of({"text": text, "chunks": reply.get("chunks", 1), **{
                k: reply[k] for k in ("deltas", "repeat", "times") if k in reply}}):
            tokens += max(1, len(piece) // 4)
            yield None, chunk(completion_id, model, created, {"content": piece})
    for index, call in enumerate(calls):
        arguments = call.get("arguments", {})
        arguments = arguments if isinstance(arguments, str) else json.dumps(arguments)
        call_id = call.get("call_id") or ids.next("call")
        yield None, chunk(completion_id, model, created, {"tool_calls": [{
            "index": index, "id": call_id, "type": "function", "function": {"name": call["name"], "arguments": ""}}]})
        for piece in split(arguments, call.get("chunks", 1)):
            tokens += max(1, len(piece) // 4)
            yield None, chunk(completion_id, model, created, {"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    finish = reply.get("finish_reason") or ("tool_calls" if calls else "stop")
    yield None, chunk(completion_id, model, created, {}, finish)
    if (request_body.get("stream_options") or {}).get("include_usage"):
        yield None, {"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": model,
                     "choices": [], "usage": usage_of(reply, request_body, tokens)}
    yield None, "[DONE]"


def whole_completion(reply, request_body, ids):
    """The non-streamed answer: one chat.completion object saying what the chunks say."""
    completion_id = reply.get("id") or ids.next("chatcmpl")
    reasoning, text, calls = parts_of(reply)
    message = {"role": "assistant", "content": text}
    if reasoning:
        message["reasoning_content"] = reasoning
    if calls:
        message["tool_calls"] = [{"id": call.get("call_id") or ids.next("call"), "type": "function",
                                  "function": {"name": call["name"], "arguments": call.get("arguments", {})
                                               if isinstance(call.get("arguments"), str)
                                               else json.dumps(call.get("arguments", {}))}} for call in calls]
    tokens = max(1, len(json.dumps(message)) // 4)
    return {"id": completion_id, "object": "chat.completion", "created": int(time.time()),
            "model": reply.get("model") or request_body.get("model") or "mock-model",
            "choices": [{"index": 0, "message": message,
                         "finish_reason": reply.get("finish_reason") or ("tool_calls" if calls else "stop")}],
            "usage": usage_of(reply, request_body, tokens)}
