"""Agent processes: one invocation of the user's command per job (spec 6.3, 6.4).

Each invocation runs in its own session / process group, gets the prompt on stdin (then
stdin is closed) and its environment from the job. stdout and stderr are captured together
into a tail buffer capped at ``output_cap`` bytes; nothing is echoed. On the per-item
timeout the whole group gets SIGTERM, then SIGKILL after a short grace; output is drained
for at most ``drain`` seconds (a grandchild that escaped the group cannot hang us). When the
leader exits, anything left in its group is killed too: an item's processes never outlive it.

``Runner.run`` drives up to ``concurrency`` invocations at once from worker threads (the
calling thread only waits, so a signal handler raising there can never interrupt a
half-finished launch), logs one line per item and a progress line at most every few
seconds, and returns the :class:`~neens_action.outcome.Invocation` records in job order.
Captured output is kept only for invocations that did not succeed. ``kill_all`` (the signal
path) stops launching and kills every live group.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from neens_action.outcome import Invocation
from neens_action.proc_util import OutputTail, feed, fmt_secs
from neens_action.proc_util import pidfd as open_pidfd

DEFAULT_OUTPUT_CAP = 64 * 1024
_POSIX = os.name == "posix"


@dataclass(slots=True)  # one per item: 10,000 items must stay cheap
class Job:
    """One invocation to run: ``key`` is the item id, ``env`` the whole environment.

    ``env`` may also be a zero-argument callable returning the environment: it is called
    just before launch, so a long job list does not hold one environment copy per item.
    """

    key: str
    input: str
    env: Mapping[str, str] | Callable[[], Mapping[str, str]]
    meta: dict[str, Any] = field(default_factory=dict)  # arm, model, rep, run_id (sweeps)


_SUCCEEDED = object()  # a result slot of a successful invocation that is not kept
_Selector = getattr(selectors, "PollSelector", selectors.SelectSelector)
# Each invocation leads its own session / process group, so a kill reaches grandchildren.
# (Popen, not os.posix_spawn: Popen releases the GIL while it launches, so the workers'
# launches overlap; posix_spawn measured slower with 8 workers.)
_SESSION: dict[str, Any] = (
    {"start_new_session": True} if _POSIX
    else {"creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)})


class Runner:
    """Runs ``command`` once per job. See the module docstring."""

    def __init__(
        self,
        command: Sequence[str] | str,
        *,
        timeout: float | None = None,
        concurrency: int = 1,
        output_cap: int = DEFAULT_OUTPUT_CAP,
        log: Callable[[str], None] | None = None,
        grace: float = 2.0,
        drain: float = 5.0,
        progress_every: float = 5.0,
        keep_output: bool = False,
        clock: Callable[[], float] = time.monotonic,
        log_every: float = 0.0,
    ) -> None:
        if not command:
            raise ValueError("empty command")
        self.command = command
        self.timeout = timeout
        self.concurrency = max(1, int(concurrency))
        self.output_cap = max(1024, int(output_cap))
        self.log = log or (lambda line: print(line, file=sys.stderr, flush=True))
        self.grace = grace
        self.drain = drain
        self.progress_every = progress_every
        self.keep_output = keep_output  # keep output of successful invocations too
        self.clock = clock
        # > 0: per-item lines are written together at most this often (one write, not one
        # per item: each costs the worker a GIL round trip and the log reader a wake-up)
        self.log_every = log_every
        self._lock = threading.Lock()
        self._resolved: dict[str, Sequence[str]] = {}  # PATH -> argv with a resolved program
        self._live: dict[int, subprocess.Popen] = {}
        self._stopping = False

    # -- public --------------------------------------------------------------------------------

    @property
    def stopping(self) -> bool:
        return self._stopping

    def kill_all(self) -> None:
        """Stop launching and SIGKILL every live process group (the interrupt path)."""
        with self._lock:
            self._stopping = True
            live = list(self._live.values())
        for proc in live:
            self._signal_group(proc, signal.SIGKILL if _POSIX else None)

    def run(
        self,
        jobs: Iterable[Job],
        on_result: Callable[[Job, Invocation], None] | None = None,
        *,
        keep_ok: bool = True,
    ) -> list[Invocation]:
        """Run every job; returns one Invocation per job, in job order (``keep_ok=False``:
        only those that did not succeed, so 10,000 good items keep nothing)."""
        jobs = jobs if isinstance(jobs, Sequence) else list(jobs)
        total = len(jobs)
        results: list[Invocation | object | None] = [None] * total
        if not total:
            return []
        state = {"next": 0, "done": 0, "failed": 0, "last_progress": self.clock()}
        started = self.clock()
        width = len(str(total))
        callback_lock = threading.Lock()
        pending: list[str] = []  # lines not written yet (log_every > 0)
        flushed = [started]

        def emit(line: str) -> None:  # under callback_lock
            if self.log_every <= 0:
                self.log(line)
                return
            pending.append(line)
            flush(due=True)

        def flush(*, due: bool = False) -> None:  # under callback_lock
            """Write the pending lines (``due``: only once ``log_every`` has passed)."""
            if not pending or (due and self.clock() - flushed[0] < self.log_every):
                return
            self.log("\n".join(pending))
            pending.clear()
            flushed[0] = self.clock()

        def take() -> int | None:
            with self._lock:
                if self._stopping or state["next"] >= total:
                    return None
                i = state["next"]
                state["next"] += 1
                return i

        def worker() -> None:
            while True:
                i = take()
                if i is None:
                    return
                job = jobs[i]
                inv = self.run_one(job)
                results[i] = inv if keep_ok or not inv.ok else _SUCCEEDED
                with callback_lock:
                    state["done"] += 1
                    if not inv.ok:
                        state["failed"] += 1
                    status = "ok" if inv.ok else (inv.error or f"rc={inv.returncode}")
                    emit(f"item {i + 1:>{width}}/{total} [{job.key}] {status} "
                         f"({inv.duration_s:.1f}s)")
                    now = self.clock()
                    if (state["done"] < total
                            and now - state["last_progress"] >= self.progress_every):
                        state["last_progress"] = now
                        done = state["done"]
                        eta = (now - started) / done * (total - done)
                        emit(f"items {done}/{total} done, {state['failed']} failed, "
                             f"eta {fmt_secs(eta)}")
                    if on_result is not None:
                        on_result(job, inv)

        threads = [threading.Thread(target=worker, name=f"neens-agent-{n}", daemon=True)
                   for n in range(min(self.concurrency, total))]
        for t in threads:
            t.start()
        try:
            for t in threads:
                while t.is_alive():
                    t.join(0.2)
                    if pending:  # no line waits longer than about log_every + 0.2 s
                        with callback_lock:
                            flush(due=True)
        except BaseException:
            # An interrupt reached the waiting thread: kill every agent, let workers finish.
            self.kill_all()
            deadline = time.monotonic() + self.drain + self.grace + 5
            for t in threads:
                t.join(max(0.0, deadline - time.monotonic()))
            with callback_lock:
                flush()
            raise
        with callback_lock:
            flush()
        out: list[Invocation] = []
        for i, res in enumerate(results):
            if isinstance(res, Invocation):
                out.append(res)
            elif res is None:
                out.append(self._invocation(jobs[i], error="not run (interrupted)"))
        return out

    # -- one invocation -------------------------------------------------------------------------

    def _invocation(self, job: Job, **kw: Any) -> Invocation:
        meta = job.meta
        return Invocation(
            item_id=job.key, input=job.input,
            arm=meta.get("arm"), model=meta.get("model"), rep=meta.get("rep"),
            run_id=meta.get("run_id"), **kw,
        )

    def run_one(self, job: Job) -> Invocation:
        """Run the command once for ``job`` (blocking) and return its record."""
        shell = isinstance(self.command, str)
        start = self.clock()
        if self._stopping:
            return self._invocation(job, error="not run (interrupted)")
        # Launched outside the lock (launches run in parallel); a process that starts while
        # kill_all runs is killed right after it registers, so none escapes the interrupt.
        try:
            env = job.env() if callable(job.env) else job.env
            proc = subprocess.Popen(
                self._argv(env), shell=shell, env=dict(env),
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                close_fds=True, **_SESSION,
            )
        except (OSError, ValueError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc)
            name = self.command if shell else self.command[0]
            return self._invocation(
                job, error=f"failed to launch command: {reason}: {str(name)[:200]}",
                duration_s=round(self.clock() - start, 3),
            )
        with self._lock:
            self._live[proc.pid] = proc
            late = self._stopping
        if late:
            self._signal_group(proc, signal.SIGKILL if _POSIX else None)
        try:
            rc, timed_out, tail = self._communicate(proc, job.input)
        finally:
            with self._lock:
                self._live.pop(proc.pid, None)
        duration = round(self.clock() - start, 3)
        error = None
        if timed_out:
            error = f"timed out after {self.timeout:g}s"
        elif self._stopping and rc is not None and rc < 0:
            error = "killed (interrupted)"
        inv = self._invocation(job, returncode=rc, duration_s=duration, timed_out=timed_out,
                               error=error)
        if self.keep_output or not inv.ok:
            inv.output = tail.text()
        return inv

    def _argv(self, env: Mapping[str, str]) -> Sequence[str] | str:
        """The command with its program resolved once per PATH (not once per item: a PATH
        search costs a stat, or a failed exec in the child, per directory)."""
        if isinstance(self.command, str) or os.sep in self.command[0]:
            return self.command
        path = env.get("PATH", os.defpath)
        cached = self._resolved.get(path)
        if cached is None:
            found = shutil.which(self.command[0], path=path)
            cached = [os.path.abspath(found), *self.command[1:]] if found else self.command
            self._resolved[path] = cached
        return cached

    def _signal_group(self, proc: subprocess.Popen, sig: int | None) -> None:
        try:
            if _POSIX and sig is not None:
                os.killpg(proc.pid, sig)
            else:  # pragma: no cover - Windows
                proc.kill()
        except (ProcessLookupError, PermissionError, OSError):
            pass

    def _communicate(self, proc: subprocess.Popen,
                     text: str) -> tuple[int | None, bool, OutputTail]:
        """Feed stdin, collect the output tail, wait for the exit (or the deadline).

        One selector waits on the output, on stdin while input remains, and on a pidfd of
        the process (Linux), so an exit is seen at once without polling; the input is
        written before the first wait when it fits the pipe (the common case).
        """
        tail = OutputTail(self.output_cap)
        data = (text or "").encode("utf-8", errors="replace")
        sel = _Selector()  # poll(2): no extra fd per item, unlike epoll
        stdout = proc.stdout
        stdin = proc.stdin
        assert stdout is not None and stdin is not None
        os.set_blocking(stdout.fileno(), False)
        sel.register(stdout, selectors.EVENT_READ)
        offset = 0
        if data:
            os.set_blocking(stdin.fileno(), False)
            offset = feed(stdin, data, 0)
        if offset >= len(data):
            with contextlib.suppress(OSError):
                stdin.close()
        else:
            sel.register(stdin, selectors.EVENT_WRITE)
        pidfd = open_pidfd(proc.pid)
        if pidfd is not None:
            sel.register(pidfd, selectors.EVENT_READ)
        now = self.clock()
        deadline = now + self.timeout if self.timeout else None
        timed_out = False
        term_at: float | None = None  # when SIGTERM was sent
        drain_until: float | None = None  # stop reading by then (after exit or kill)
        eof = False
        try:
            while True:
                now = self.clock()
                rc = proc.poll()
                if self._stopping and rc is None:
                    self._signal_group(proc, signal.SIGKILL)
                if deadline is not None and not timed_out and rc is None and now >= deadline:
                    timed_out = True
                    term_at = now
                    self._signal_group(proc, signal.SIGTERM)
                if term_at is not None and rc is None and now - term_at >= self.grace:
                    self._signal_group(proc, signal.SIGKILL)
                    term_at = None
                if rc is not None:
                    if eof:
                        break
                    if drain_until is None:
                        drain_until = now + self.drain
                    elif now >= drain_until:
                        break
                wait = 0.1 if pidfd is not None or not eof else 0.005
                if deadline is not None and not timed_out:
                    wait = max(0.0, min(wait, deadline - now))
                if drain_until is not None:
                    wait = max(0.0, min(wait, drain_until - now))
                if not sel.get_map():  # output closed, input written: wait for the exit
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        proc.wait(wait)
                    continue
                for key, _ in sel.select(wait):
                    if key.fileobj is stdout:
                        try:
                            chunk = os.read(stdout.fileno(), 65536)
                        except BlockingIOError:
                            continue
                        except OSError:
                            chunk = b""
                        if chunk:
                            tail.add(chunk)
                        else:
                            eof = True
                            sel.unregister(stdout)
                    elif key.fileobj is stdin:
                        offset = feed(stdin, data, offset)
                        if offset >= len(data):
                            sel.unregister(stdin)
                            with contextlib.suppress(OSError):
                                stdin.close()
                    else:  # the pidfd: the process exited
                        sel.unregister(key.fileobj)
        finally:
            sel.close()
            if pidfd is not None:
                with contextlib.suppress(OSError):
                    os.close(pidfd)
            with contextlib.suppress(OSError):
                stdin.close()
            with contextlib.suppress(OSError):
                stdout.close()
            # Nothing of this item may outlive it (leader exited, or timed out/killed).
            self._signal_group(proc, signal.SIGKILL)
            if proc.poll() is None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(self.drain)
        return proc.returncode, timed_out, tail
