"""What the smoke scripts (smoke_claude.py, smoke_codex.py) share: a failed expectation, a mock server in a child
process, the private network namespace the run moves into, and the command line that runs the scenarios."""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


class Failure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)


class Mock:
    """A mock server (`server`, set by the subclass) in a child process, with its script and request log in `dir`."""

    server = None

    def __init__(self, dir, script):
        self.log = os.path.join(dir, "mock.requests.ndjson")
        script_path = os.path.join(dir, "mock.script.json")
        port_file = os.path.join(dir, "mock.port")
        with open(script_path, "w") as f:
            json.dump(script, f, indent=1)
        self.proc = subprocess.Popen([sys.executable, self.server, "--script", script_path, "--log", self.log,
                                      "--port-file", port_file], stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while not os.path.exists(port_file):
            check(self.proc.poll() is None, "mock exited at startup")
            check(time.monotonic() < deadline, "mock did not start")
            time.sleep(0.02)
        with open(port_file) as f:
            self.port = int(f.read())

    def records(self):
        if not os.path.exists(self.log):
            return []
        with open(self.log) as f:
            return [json.loads(line) for line in f]

    def stop(self):
        self.proc.terminate()
        self.proc.wait(5)


def in_private_netns(argv):
    """Re-runs this script under `unshare -n` (loopback only) when possible; returns its exit code or None."""
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("ip"):
        return None
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True)
    if probe.returncode != 0:
        return None
    cmd = "ip link set lo up && exec \"$@\""
    return subprocess.call(["unshare", "-n", "sh", "-c", cmd, "sh", sys.executable, *argv, "--no-netns"])


def main(description, cli, scenarios, write_fixture, scratch_root=None):
    """Runs `scenarios` (name: function(exe, scratch) -> (processes, notes)) with the `cli` agent's executable, as
    the command line asks; each in a scratch directory of its own (under `scratch_root`, default the system's);
    the exit code."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(f"--{cli}", dest="exe", help=f"path of the {cli} binary; default: scripts/agent-path {cli}")
    parser.add_argument("--only", help="comma-separated scenario names: " + ",".join(scenarios))
    parser.add_argument("--write-fixtures", metavar="DIR", help="save each scenario's NDJSON here")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directories")
    parser.add_argument("--no-netns", action="store_true", help="do not isolate the network with unshare -n")
    args = parser.parse_args()

    if not args.no_netns:
        rc = in_private_netns(sys.argv)
        if rc is not None:
            return rc
        print("note: running without a private network namespace", file=sys.stderr)

    exe = args.exe
    if not exe:
        found = subprocess.run([os.path.join(REPO, "scripts", "agent-path"), cli], capture_output=True, text=True)
        if found.returncode != 0:
            print(found.stderr.strip() or f"{cli} not found", file=sys.stderr)
            return 2
        exe = found.stdout.strip()
    version = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"{cli}: {exe} ({version})")

    names = args.only.split(",") if args.only else list(scenarios)
    failed = []
    for name in names:
        scratch = tempfile.mkdtemp(prefix=f"smoke-{cli}-{name}-", dir=scratch_root)
        t0 = time.monotonic()
        keep = args.keep
        try:
            processes, notes = scenarios[name](exe, scratch)
            print(f"PASS {name} ({time.monotonic() - t0:.1f}s) {json.dumps(notes)}")
            if args.write_fixtures and processes:
                write_fixture(args.write_fixtures, name, processes, scratch)
        except Exception as e:  # a scenario's failure is reported, the others still run
            failed.append(name)
            print(f"FAIL {name} ({time.monotonic() - t0:.1f}s): {e}")
            if not isinstance(e, Failure):
                traceback.print_exc()
            keep = True
            print(f"     scratch kept: {scratch}")
        if not keep:
            shutil.rmtree(scratch, ignore_errors=True)
    passed = len(names) - len(failed)
    print(f"{passed} passed, {len(failed)} failed")
    return 1 if failed else 0
