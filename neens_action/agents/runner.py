"""Agent processes: one invocation of the user's command per job.

Each invocation runs in its own session / process group (started by the launcher that
:func:`neens_action.agents.driver.make_runner` chose; on Windows, or with
``NEENS_LAUNCHER=portable``, driven by :mod:`~neens_action.agents.portable`), gets the
prompt on stdin (then stdin is closed) and its environment from the job. stdout and stderr are
captured together into a tail buffer capped at ``output_cap`` bytes; nothing is echoed.
An exit status that cannot be read fails the item with that reason. On the per-item
timeout the whole group gets SIGTERM, then SIGKILL after a short grace; output is drained
for at most ``drain`` seconds (a grandchild that escaped the group cannot hang us). When the
leader exits, anything left in its group is killed too: an item's processes never outlive it.

``Runner.run`` drives up to ``concurrency`` invocations at once from worker threads (the
calling thread only waits, so a signal handler raising there can never interrupt a
half-finished launch), logs one line per item and a progress line at most every few
seconds, and returns the :class:`~neens_action.outcome.Invocation` records in job order.
Output is kept only for invocations that did not succeed. ``kill_all`` (signals) stops
launching and kills every live group.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from neens_action.agents import poll_path, portable
from neens_action.agents.launcher import Child, Launch
from neens_action.agents.proc import OK_TAIL, fmt_secs, stop_signals
from neens_action.outcome import Invocation

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


class Runner:
    """Runs ``command`` once per job. See the module docstring."""

    starts_own_processes = False  # True: a subclass that needs no ``launch`` (workers)

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
        launch: Launch | None = None,
    ) -> None:
        if not command:
            raise ValueError("empty command")
        if launch is None and not self.starts_own_processes:
            raise TypeError("a Runner needs its launch: build it with "
                            "neens_action.agents.driver.make_runner")
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
        # starts one agent process (chosen once, by agents.driver.make_runner)
        self.launch = launch
        self._lock = threading.Lock()
        self._resolved: dict[str, Sequence[str]] = {}  # PATH -> argv with a resolved program
        self._live: dict[int, Child] = {}
        self._stopping = False
        self._term, self._kill = stop_signals()  # (None, None) on Windows: the tree is killed

    # -- public --------------------------------------------------------------------------------

    @property
    def stopping(self) -> bool:
        return self._stopping

    def kill_all(self) -> None:
        """Stop launching and SIGKILL every live process group (the interrupt path)."""
        with self._lock:
            self._stopping = True
            live = list(self._live.values())
        for child in live:
            child.signal_group(self._kill)

    def run(
        self,
        jobs: Iterable[Job],
        on_result: Callable[[Job, Invocation], None] | None = None,
        *,
        keep_ok: bool = True,
        record: Callable[[int, Invocation], None] | None = None,
    ) -> list[Invocation]:
        """Run every job; returns one Invocation per job, in job order (``keep_ok=False``:
        only those that did not succeed, so 10,000 good items keep nothing). ``record``
        (thread-safe) is handed each job's index and Invocation as it ends (a spill)."""
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
                if record is not None:
                    record(i, inv)
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
        try:  # started inside: an interrupt between two starts still stops the ones started
            for t in threads:
                t.start()
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
                if t.ident is not None:  # started (a thread never started cannot be joined)
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
                if record is not None:
                    record(i, out[-1])
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
        start = self.clock()
        if self._stopping:
            return self._invocation(job, error="not run (interrupted)")
        # Launched outside the lock (launches run in parallel); a process that starts while
        # kill_all runs is killed right after it registers, so none escapes the interrupt.
        try:
            env = job.env() if callable(job.env) else job.env
            child = self.launch(self._argv(env), env)
        except (OSError, ValueError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc)
            name = self.command if isinstance(self.command, str) else self.command[0]
            return self._invocation(
                job, error=f"failed to launch command: {reason}: {str(name)[:200]}",
                duration_s=round(self.clock() - start, 3),
            )
        with self._lock:
            self._live[child.pid] = child
            late = self._stopping
        if late:
            child.signal_group(self._kill)
        try:
            # threads where poll(2) is missing (or NEENS_LAUNCHER=portable), else one poll loop
            drive = portable.communicate if child.portable else poll_path.communicate
            timed_out, tail = drive(
                child, job.input, timeout=self.timeout, grace=self.grace, drain=self.drain,
                output_cap=self.output_cap, clock=self.clock, stopping=lambda: self._stopping,
                term=self._term, kill=self._kill)
        finally:
            with self._lock:
                self._live.pop(child.pid, None)
        duration = round(self.clock() - start, 3)
        rc = child.returncode
        error = None
        if timed_out:
            error = f"timed out after {self.timeout:g}s"
        elif self._stopping and rc is not None and rc < 0:
            error = "killed (interrupted)"
        elif child.status_error:  # never taken for a success: the item fails, saying why
            error = child.status_error
        elif rc is None:
            error = f"still running {self.drain:g}s after SIGKILL (exit status not read)"
        inv = self._invocation(job, returncode=rc, duration_s=duration, timed_out=timed_out,
                               error=error)
        inv.output = tail.text() if self.keep_output or not inv.ok else tail.text()[-OK_TAIL:]
        return inv

    def _argv(self, env: Mapping[str, str]) -> Sequence[str]:
        """The command with its program resolved once per PATH (not once per item: a PATH
        search costs a stat, or a failed exec in the child, per directory)."""
        if isinstance(self.command, str):
            return _shell(self.command)
        if os.sep in self.command[0]:
            return self.command
        path = env.get("PATH", os.defpath)
        cached = self._resolved.get(path)
        if cached is None:
            found = shutil.which(self.command[0], path=path)
            cached = [os.path.abspath(found), *self.command[1:]] if found else self.command
            self._resolved[path] = cached
        return cached


def _shell(command: str) -> list[str]:
    """A shell command line as argv (what ``Popen(shell=True)`` runs)."""
    if _POSIX:
        return ["/bin/sh", "-c", command]
    return [os.environ.get("COMSPEC", "cmd.exe"), "/c", command]  # pragma: no cover
