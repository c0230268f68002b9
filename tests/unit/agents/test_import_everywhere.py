"""The package imports, and drives an agent, where POSIX-only names are missing (Windows).

Each check runs in a fresh interpreter that deletes the names first, so the hiding never
leaks into other tests. Nothing is faked past that: the front doors are really imported and
the item is run by a real agent process on the portable path (threads, no ``poll(2)``).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.helpers import ROOT

PY = sys.executable

# select.poll, every POLL* name and os.posix_spawn: the names Windows lacks that broke imports
HIDE_POLL = """
import os, select
for _name in [n for n in dir(select) if n.startswith("POLL") or n == "poll"]:
    delattr(select, _name)  # (none of them exist on Windows)
for _name in ("posix_spawn", "posix_spawnp"):
    if hasattr(os, _name):
        delattr(os, _name)
assert not hasattr(select, "poll") and not hasattr(select, "POLLIN")
assert not hasattr(os, "posix_spawn")
"""

# what else Windows lacks; stdlib modules that look at them are loaded first (they check
# with hasattr), so only a read by our own modules can trip
HIDE_WINDOWS = """
import asyncio, ctypes, selectors, subprocess, threading  # noqa: F401
import os, select, signal, sys
for _mod, _names in ((signal, ("SIGKILL", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM",
                               "SIGCHLD", "SIGPIPE", "SIGXFSZ", "SIGRTMIN", "SIGRTMAX",
                               "pthread_sigmask", "sigpending", "SIG_BLOCK", "SIG_SETMASK",
                               "SIG_UNBLOCK", "setitimer", "alarm")),
                     (os, ("killpg", "getpgid", "setsid", "fork", "WNOHANG", "pidfd_open",
                           "confstr", "getuid", "geteuid", "sched_getaffinity")),
                     (select, ("epoll", "EPOLLIN", "EPOLLOUT"))):
    for _name in _names:
        if hasattr(_mod, _name):
            delattr(_mod, _name)
for _missing in ("fcntl", "resource", "termios", "pwd", "grp"):
    sys.modules[_missing] = None  # an import of it raises ImportError, as on Windows
"""


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=False)


def test_front_doors_import_and_an_item_runs_on_the_portable_path_without_poll() -> None:
    proc = run_python(HIDE_POLL + """
import os, sys
import neens_action.ci.main
import neens_action.cli.main
import neens_action.cli.app
from neens_action.agents import driver, launcher
from neens_action.agents.runner import Job

assert "neens_action.agents.worker_proc" not in sys.modules  # only for --workers
assert not driver.fast_path_available()
lines = []
agent = ("import os, sys; text = sys.stdin.read(); "
         "print('answer:', text.upper(), os.environ['ITEM'], flush=True)")
runner = driver.make_runner([sys.executable, "-c", agent], log=lines.append, keep_output=True,
                            timeout=60)
assert runner.launch is launcher.launch_portable, runner.launch
env = dict(os.environ, ITEM="it_1")
[inv] = runner.run([Job("it_1", "refund for order 42", env)])
assert inv.ok, (inv.error, inv.output)
assert inv.output.replace("\\r\\n", "\\n") == "answer: REFUND FOR ORDER 42 it_1\\n", inv.output
print("ran", inv.item_id, inv.returncode)
""")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "ran it_1 0"


def test_the_portable_path_kills_a_hanging_agent_at_its_timeout_without_poll() -> None:
    proc = run_python(HIDE_POLL + """
import os, sys
from neens_action.agents import driver
from neens_action.agents.runner import Job

agent = "import time; print('started', flush=True); time.sleep(60)"
runner = driver.make_runner([sys.executable, "-c", agent], log=lambda _: None, timeout=1.0,
                            grace=0.5, drain=1.0)
[inv] = runner.run([Job("it_slow", "", dict(os.environ))])
assert inv.timed_out and not inv.ok, inv
assert inv.duration_s < 30, inv.duration_s
print(inv.error)
""")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "timed out after 1s"


def test_no_module_of_the_packages_reads_a_posix_only_name_at_import() -> None:
    proc = run_python(HIDE_POLL + HIDE_WINDOWS + """
import importlib, pkgutil
import neens_action, neens_sandbox  # the sandbox too: the Windows job serves from it

names = sorted(m.name for pkg in (neens_action, neens_sandbox)
               for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + ".")
               if not m.name.endswith(".__main__"))  # those run a CLI
for name in names:
    importlib.import_module(name)
assert {"neens_action.agents.worker_proc", "neens_sandbox.cli"} <= set(names)
print(len(names))
""")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert int(proc.stdout.strip()) > 100
