#!/usr/bin/env python3
"""A tiny MCP server over stdio (newline-delimited JSON-RPC 2.0), for tests that hand MCP servers to real agents.

It offers one tool, named by --tool (default `sb_echo`), that answers with its `text` argument prefixed by
--reply-prefix. With --pid-file it appends its process id to that file at start, so a test can check that the
process is gone once its session is (an orphaned MCP server is the failure this catches). With --env-file it
writes its environment there as JSON, so a test can check what reached it. Standard library only."""

import argparse
import json
import os
import sys


def reply(request_id, result):
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def error(request_id, code, message):
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def answer(message, args):
    method = message.get("method")
    request_id = message.get("id")
    params = message.get("params") or {}
    if method == "initialize":
        return reply(request_id, {
            # The client's version is taken as offered: every version so far has the few messages used here.
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "switchboard-test-mcp", "version": "1.0.0"},
        })
    if method == "ping":
        return reply(request_id, {})
    if method == "tools/list":
        return reply(request_id, {"tools": [{
            "name": args.tool,
            "description": "Echoes its text argument back (a test tool of switchboard).",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        }]})
    if method == "tools/call":
        if params.get("name") != args.tool:
            return error(request_id, -32602, f"unknown tool {params.get('name')!r}")
        text = (params.get("arguments") or {}).get("text", "")
        return reply(request_id, {"content": [{"type": "text", "text": args.reply_prefix + text}], "isError": False})
    if method in ("resources/list", "prompts/list", "resources/templates/list"):
        return error(request_id, -32601, f"{method} is not offered")
    if request_id is None:
        return None  # a notification (notifications/initialized, cancelled, ...): nothing to answer
    return error(request_id, -32601, f"unknown method {method!r}")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tool", default="sb_echo")
    parser.add_argument("--reply-prefix", default="echo: ")
    parser.add_argument("--pid-file")
    parser.add_argument("--env-file")
    args = parser.parse_args()
    if args.pid_file:
        with open(args.pid_file, "a", encoding="utf-8") as f:
            f.write(f"{os.getpid()}\n")
    if args.env_file:
        with open(args.env_file, "w", encoding="utf-8") as f:
            json.dump(dict(os.environ), f)
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            out = error(None, -32700, "not JSON")
        else:
            out = answer(message, args)
        if out is not None:
            sys.stdout.write(json.dumps(out) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
