"""What the browser tests on the test daemon (`switchboard_test_daemon`, whose `controls` agent needs no CLI and no
model) share: their prerequisites, a test case class that starts the daemon and a headless Chromium once for its
scenarios and stops them afterwards, with test_console.py's page helpers, and their command line.

A test file subclasses DaemonConsoleCase, says what its daemon and browser need in the class attributes, and ends
with `sys.exit(run(TheTest, __doc__))`."""

import argparse
import os
import shutil
import sys
import tempfile
import unittest

import test_console  # the daemon and browser helpers
from test_console import CHROMEDRIVER, CHROMIUM, SKIP, Daemon, new_browser

ARGS = None  # set by run()


def missing_prerequisites():
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not os.path.exists(p)]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("python3-selenium")
    return missing


class DaemonConsoleCase(unittest.TestCase):
    scratch_prefix = "switchboard-browser-"  # the scratch directory's name starts with it
    daemon_env = {}      # beyond PATH, HOME and XDG_CONFIG_HOME (a fresh home in the scratch directory)
    daemon_args = []     # beyond what Daemon passes itself
    browser_flags = []   # Chromium's, beyond new_browser's

    @classmethod
    def setUpClass(cls):
        cls.scratch = tempfile.mkdtemp(prefix=cls.scratch_prefix)
        cls.shots = os.path.abspath(ARGS.screenshots)
        os.makedirs(cls.shots, exist_ok=True)
        home = os.path.join(cls.scratch, "home")
        os.makedirs(home)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home,
               "XDG_CONFIG_HOME": os.path.join(home, ".config"), **cls.daemon_env}
        cls.daemon = Daemon(cls.scratch, env, binary=os.path.abspath(ARGS.binary), extra_args=list(cls.daemon_args))
        cls.browser = new_browser(list(cls.browser_flags))
        cls.browser.set_script_timeout(30)

    @classmethod
    def tearDownClass(cls):
        cls.browser.quit()
        cls.daemon.stop()
        if not ARGS.keep:
            shutil.rmtree(cls.scratch, ignore_errors=True)

    # ---- helpers (the page's own elements, as a person sees them) --------------------------------------------

    js = test_console.ConsoleTest.js
    wait = test_console.ConsoleTest.wait
    page_log = test_console.ConsoleTest.page_log
    shot = test_console.ConsoleTest.shot
    open_console = test_console.ConsoleTest.open_console
    wait_live = test_console.ConsoleTest.wait_live
    state_badge = test_console.ConsoleTest.state_badge
    type_prompt = test_console.ConsoleTest.type_prompt
    assistant_texts = test_console.ConsoleTest.assistant_texts
    wait_text = test_console.ConsoleTest.wait_text
    wait_idle = test_console.ConsoleTest.wait_idle
    card = test_console.ConsoleTest.card

    def work_dir(self, name):
        path = os.path.join(self.scratch, "work-" + name)
        os.makedirs(path, exist_ok=True)
        return path

    def create_session(self, title, agent="controls", cwd=None, **extra):
        params = {"agent": agent, "cwd": cwd or self.work_dir(title.replace(" ", "-")), "title": title, **extra}
        return self.daemon.call("session.create", params)["session"]["sessionId"]


def run(test_class, description):
    """Parses the command line, skips (77) without the prerequisites, runs test_class's scenarios; the exit code."""
    global ARGS
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", required=True, help="the test daemon (switchboard_test_daemon)")
    parser.add_argument("--screenshots", default="browser-screenshots", help="where screenshots go")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory")
    parser.add_argument("-k", dest="patterns", action="append", help="only tests matching this substring")
    ARGS, rest = parser.parse_known_args()
    test_console.ARGS = ARGS  # the shared helpers read it
    missing = missing_prerequisites()
    if missing:
        print("browser tests: missing " + ", ".join(missing) + " (scripts/setup --test)", file=sys.stderr)
        return 1 if os.environ.get("CI") else SKIP
    argv = [sys.argv[0], "-v", *rest] + [x for p in (ARGS.patterns or []) for x in ("-k", p)]
    program = unittest.main(module=sys.modules[test_class.__module__], argv=argv, exit=False)
    return 0 if program.result.wasSuccessful() else 1
