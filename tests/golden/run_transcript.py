#!/usr/bin/env python3
r"""Runs one transcript test against the switchboard binary (clangd lit-test style). Standard library only.

Usage: run_transcript.py <switchboard binary> <file.transcript>

A transcript is a text file, read line by line:

  # text               a comment
  # ARGS: a b c        extra arguments after `stdio` (shell-style quoting), e.g. `# ARGS: --max-line-bytes 1024`
  # EXIT: n            the expected exit code (default 0)
  > text               send `text` and a newline, verbatim (`>` alone sends an empty line)
  >| text              send `text` without a newline (e.g. an unterminated last line)
  >\ text              send `text` with escapes decoded, then a newline: \r \n \t \0 \\, \xHH = that raw byte,
                       \uXXXX = that code point in UTF-8 (JSON escapes must be written \\u…);
  >|\ text             the same without the newline
  > @LONG n            send a line of n 'x' characters
  > @LONG n template   send `template` with `@PAD@` replaced by enough 'x' to make the line exactly n bytes
  > @NEST n template   send `template` with `@NEST@` replaced by n '[' followed by n ']'
  >| @LONG …, >| @NEST …   the same without the newline
  < json               the next line the daemon must write to stdout
  (blank line)         ignored

The driver runs `<binary> --log-level off stdio [ARGS]`, writes all the input at once, closes stdin, waits for
the exit and checks: the exit code; that stdout ends with a newline and each line is valid JSON; that there are
as many lines as `<` expectations; and that each line equals its expectation (order-sensitive, as this daemon
answers in order; JSON values compared exactly, key order ignored, numbers by exact decimal value, so
1 == 1.0 == 1e0 but 0.1 != 0.10000000000000000001).

Before comparing, both sides are normalized: integer values of "ts" -> "<ts>", "pid" -> "<pid>", a "clientId" of
the form client-<hex> -> "<clientId>", a "reference" of the form ref-<hex> -> "<reference>" (also inside the
"internal error (reference ref-…)" message), serverInfo.version -> "<version>". In an expectation, the string
"<any>" matches any value, and an object with the member "<more>": true matches objects that have at least the
other listed members (extra members in the actual object are ignored).
"""

import decimal
import difflib
import json
import os
import re
import shlex
import signal
import subprocess
import tempfile
import sys

TIMEOUT_SECONDS = 60

NUMBER = (int, float, decimal.Decimal)
ANY = "<any>"
MORE = "<more>"


class TranscriptError(Exception):
    pass


ESCAPES = {"r": b"\r", "n": b"\n", "t": b"\t", "\\": b"\\", "0": b"\0"}


def decode_escapes(text, path, number):
    r"""`>\` lines: \r \n \t \0 \\ as usual, \xHH as one raw byte (may be invalid UTF-8), \uXXXX as UTF-8."""
    out = bytearray()
    position = 0
    for match in re.finditer(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|.)", text):
        out += text[position:match.start()].encode("utf-8")
        escape = match.group(1)
        if escape[0] == "x" and len(escape) == 3:
            out.append(int(escape[1:], 16))
        elif escape[0] == "u" and len(escape) == 5:
            out += chr(int(escape[1:], 16)).encode("utf-8", "surrogatepass")
        elif escape in ESCAPES:
            out += ESCAPES[escape]
        else:
            raise TranscriptError(f"{path}:{number}: unknown escape \\{escape}")
        position = match.end()
    out += text[position:].encode("utf-8")
    return bytes(out)


def parse_transcript(path):
    """Returns (stdin bytes, [(line number, expected text)], extra args, expected exit code)."""
    stdin = bytearray()
    expected = []
    args = []
    exit_code = 0
    with open(path, encoding="utf-8", newline="\n") as handle:
        lines = handle.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for number, line in enumerate(lines, start=1):
        if line.endswith("\r"):
            raise TranscriptError(f"{path}:{number}: the transcript itself has CRLF line endings; use >\\ and \\r")
        if line.strip() == "":
            continue
        if line.startswith("#"):
            directive = re.match(r"#\s*(ARGS|EXIT):(.*)$", line)
            if directive and directive.group(1) == "ARGS":
                args.extend(shlex.split(directive.group(2)))
            elif directive:
                exit_code = int(directive.group(2).strip())
            continue
        if line.startswith("<"):
            expected.append((number, line[1:].strip()))
            continue
        if line.startswith(">"):
            match = re.match(r">([|\\]*)(?: (.*))?$", line)
            if not match:
                raise TranscriptError(f"{path}:{number}: expected '> ', '>| ', '>\\ ' or '>|\\ ' prefix")
            flags, text = match.group(1), match.group(2) or ""
            generated = "\\" not in flags  # @LONG and @NEST work with '>' and '>|'
            long_match = re.match(r"@LONG (\d+)(?: (.*))?$", text) if generated else None
            nest_match = re.match(r"@NEST (\d+) (.*)$", text) if generated else None
            if long_match:
                length, template = int(long_match.group(1)), long_match.group(2)
                if template is None:
                    text = "x" * length
                else:
                    if "@PAD@" not in template:
                        raise TranscriptError(f"{path}:{number}: @LONG template without @PAD@")
                    pad = length - len(template.replace("@PAD@", "").encode("utf-8"))
                    if pad < 0:
                        raise TranscriptError(f"{path}:{number}: @LONG template is already longer than {length}")
                    text = template.replace("@PAD@", "x" * pad)
            elif nest_match:
                depth, template = int(nest_match.group(1)), nest_match.group(2)
                if "@NEST@" not in template:
                    raise TranscriptError(f"{path}:{number}: @NEST template without @NEST@")
                text = template.replace("@NEST@", "[" * depth + "]" * depth)
            stdin += decode_escapes(text, path, number) if "\\" in flags else text.encode("utf-8")
            if "|" not in flags:
                stdin += b"\n"
            continue
        raise TranscriptError(f"{path}:{number}: a line must start with '#', '>' or '<'")
    return bytes(stdin), expected, args, exit_code


def normalize(value, parent_key=None, in_server_info=False):
    if isinstance(value, dict):
        out = {}
        for key, member in value.items():
            if key == "ts" and isinstance(member, int) and not isinstance(member, bool):
                out[key] = "<ts>"
            elif key == "pid" and isinstance(member, int) and not isinstance(member, bool):
                out[key] = "<pid>"
            elif key == "clientId" and isinstance(member, str) and re.fullmatch(r"client-[0-9a-f]+", member):
                out[key] = "<clientId>"
            elif key == "reference" and isinstance(member, str) and re.fullmatch(r"ref-[0-9a-f]+", member):
                out[key] = "<reference>"
            elif key == "version" and in_server_info and isinstance(member, str):
                out[key] = "<version>"
            elif key == "message" and isinstance(member, str):
                out[key] = re.sub(r"\(reference ref-[0-9a-f]+\)", "(reference <reference>)", member)
            else:
                out[key] = normalize(member, key, key == "serverInfo")
        return out
    if isinstance(value, list):
        return [normalize(member, parent_key) for member in value]
    return value


def json_equal(a, b):
    """Exact JSON equality: no bool/number confusion, ints and floats compared by value."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, NUMBER) and isinstance(b, NUMBER):
        return a == b  # exact: floats are parsed as Decimal, so 0.1000000000000000001 != 0.1
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    return a == b


def matches(expected, actual, where="$"):
    """Returns None if `actual` matches `expected`, else a description of the first difference."""
    if expected == ANY:
        return None
    if isinstance(expected, dict) and isinstance(actual, dict):
        open_ended = expected.get(MORE) is True
        keys = [k for k in expected if k != MORE]
        for key in keys:
            if key not in actual:
                return f"{where}: missing member {dumps(key)}"
            problem = matches(expected[key], actual[key], f"{where}.{key}")
            if problem:
                return problem
        if not open_ended:
            extra = sorted(set(actual) - set(keys))
            if extra:
                return f"{where}: unexpected member(s) {', '.join(json.dumps(k) for k in extra)}"
        return None
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return f"{where}: expected {len(expected)} elements, got {len(actual)}"
        for index, (e, a) in enumerate(zip(expected, actual)):
            problem = matches(e, a, f"{where}[{index}]")
            if problem:
                return problem
        return None
    if json_equal(expected, actual):
        return None
    return f"{where}: expected {dumps(expected)}, got {dumps(actual)}"


def loads(text):
    # Decimal keeps every digit of a fraction or an exponent form, so an id the daemon rounded is caught.
    return json.loads(text, parse_float=decimal.Decimal)


def dumps(value, **options):
    """json.dumps that prints Decimal numbers as numbers, digit for digit."""

    def mark(member):
        if isinstance(member, decimal.Decimal):
            return f"\0DECIMAL:{member}\0"
        if isinstance(member, dict):
            return {key: mark(item) for key, item in member.items()}
        if isinstance(member, list):
            return [mark(item) for item in member]
        return member

    text = json.dumps(mark(value), ensure_ascii=False, **options)
    return re.sub(r'"\\u0000DECIMAL:([^"\\]*)\\u0000"', r"\1", text)


def canonical(value):
    return dumps(value, sort_keys=True)


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    binary, path = argv[1], argv[2]
    try:
        stdin, expected, args, expected_exit = parse_transcript(path)
        expected_values = []
        for number, text in expected:
            try:
                expected_values.append((number, normalize(loads(text))))
            except json.JSONDecodeError as error:
                raise TranscriptError(f"{path}:{number}: expectation is not valid JSON: {error}")
    except (OSError, TranscriptError, ValueError) as error:
        print(f"FAIL: bad transcript: {error}")
        return 1

    command = [binary, "--log-level", "off", "stdio", *args]
    # Each run gets a data directory of its own: transcripts start from an empty store (seq 1) and never touch
    # the user's data.
    data_dir = tempfile.TemporaryDirectory(prefix="switchboard-transcript-")
    # Nor does the user's config file apply: an empty config home of its own.
    environment = dict(os.environ, SWITCHBOARD_DATA_DIR=os.path.join(data_dir.name, "data"),
                       XDG_CONFIG_HOME=os.path.join(data_dir.name, "config"))
    environment.pop("SWITCHBOARD_CONFIG", None)
    try:
        process = subprocess.run(command, input=stdin, capture_output=True, timeout=TIMEOUT_SECONDS, env=environment)
    except subprocess.TimeoutExpired:
        print(f"FAIL: {shlex.join(command)} did not exit within {TIMEOUT_SECONDS} s after stdin was closed")
        return 1
    except OSError as error:
        print(f"FAIL: cannot run {shlex.join(command)}: {error}")
        return 1

    failures = []
    if process.returncode != expected_exit:
        how = f"exit code {process.returncode}"
        if process.returncode < 0:
            try:
                how = f"killed by {signal.Signals(-process.returncode).name}"
            except ValueError:
                pass
        failures.append(f"{how}, expected exit code {expected_exit}")
    stdout = process.stdout
    if stdout and not stdout.endswith(b"\n"):
        failures.append("stdout does not end with a newline")
    raw_lines = stdout.split(b"\n")
    if raw_lines and raw_lines[-1] == b"":
        raw_lines.pop()

    actual_values = []  # (raw text, normalized value or None)
    for index, raw in enumerate(raw_lines, start=1):
        text = raw.decode("utf-8", "backslashreplace")
        try:
            value = loads(raw.decode("utf-8"))
            actual_values.append((text, normalize(value)))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            failures.append(f"stdout line {index} is not valid UTF-8 JSON ({error}): {text[:200]}")
            actual_values.append((text, None))

    if len(actual_values) != len(expected_values):
        failures.append(f"{len(actual_values)} stdout line(s), expected {len(expected_values)}")
    for index in range(min(len(actual_values), len(expected_values))):
        number, want = expected_values[index]
        text, got = actual_values[index]
        if got is None:
            continue
        problem = matches(want, got)
        if problem:
            failures.append(f"line {index + 1} (transcript line {number}): {problem}")

    if not failures:
        print(f"PASS: {path}: {len(expected_values)} line(s) matched")
        return 0

    print(f"FAIL: {path}")
    print(f"command: {shlex.join(command)}")
    for failure in failures:
        print(f"  - {failure}")
    want_lines = [canonical(value) for _, value in expected_values]
    got_lines = [canonical(value) if value is not None else text for text, value in actual_values]
    print("diff (normalized, keys sorted; - expected, + actual):")
    for line in difflib.unified_diff(want_lines, got_lines, "expected", "actual", lineterm="", n=2):
        print(f"  {line}")
    if process.stderr:
        print("stderr:")
        for line in process.stderr.decode("utf-8", "backslashreplace").splitlines()[-40:]:
            print(f"  {line}")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
