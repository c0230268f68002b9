"""Worker mode (``--workers N``): N long-lived agent processes instead of one per item.

:class:`WorkerRunner` is a :class:`~neens_action.agents.runner.Runner` whose ``run_one``
hands the item to the worker process of the calling thread (the Runner runs N threads, so
there are at most N workers) over the line protocol of
:mod:`~neens_action.agents.worker_protocol`, starting it first when the thread has none
(the first item, or the one after a worker was lost). Isolation is the per-item mode's:

- the ``timeout`` counts from when the item is handed over (for a new worker, its start-up
  is part of its first item); a worker past it gets SIGTERM then SIGKILL (whole group) and
  the item fails as timed out; the next item gets a new worker;
- a worker that exits, or writes a line that breaks the protocol, fails the item in hand
  with a line naming it, and is replaced;
- ``kill_all`` (the signal path) kills every worker's group; items not handed out are
  ``not run (interrupted)``;
- an item's output tail is what the worker wrote to stderr (and outside the protocol to
  stdout) while it had the item; for a new worker, its start-up output too.

At the end every worker's stdin is closed (a worker exits at the end of its input) and,
after ``grace`` seconds, its group is killed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from neens_action.agents.runner import Job, Runner
from neens_action.agents.worker_proc import Exchange, WorkerProc
from neens_action.agents.worker_protocol import item_message, worker_env
from neens_action.outcome import Invocation

NOT_A_WORKER = ("it never answered an item: does the command speak the worker protocol? "
                "(docs/worker-protocol.md; in Python: neens_action.agent.serve)")


class WorkerRunner(Runner):
    """Runs ``command`` as ``workers`` long-lived processes. See the module docstring."""

    starts_own_processes = True  # each worker is a WorkerProc, not a launched Child

    def __init__(self, command: Sequence[str] | str, *, workers: int,
                 **kwargs: Any) -> None:
        kwargs.pop("concurrency", None)
        super().__init__(command, concurrency=workers, **kwargs)
        self._workers: dict[int, WorkerProc] = {}  # thread ident -> its worker
        self.started = 0  # worker processes started (the first N, then replacements)

    def run(self, jobs: Iterable[Job],
            on_result: Callable[[Job, Invocation], None] | None = None, *,
            keep_ok: bool = True,
            record: Callable[[int, Invocation], None] | None = None) -> list[Invocation]:
        try:
            return super().run(jobs, on_result, keep_ok=keep_ok, record=record)
        finally:
            self.stop_workers()

    def kill_all(self) -> None:
        super().kill_all()
        with self._lock:
            procs = list(self._workers.values())
        for proc in procs:
            proc.signal_group(self._kill)

    def stop_workers(self) -> None:
        """The normal end: close every worker's stdin, give them ``grace`` seconds, kill."""
        with self._lock:
            procs = list(self._workers.values())
            self._workers.clear()
        deadline = time.monotonic() + self.grace
        for proc in procs:
            if self._stopping:
                proc.signal_group(self._kill)
            else:
                proc.close_input()
        for proc in procs:
            proc.stop(grace=max(0.0, deadline - time.monotonic()))

    # -- one item --------------------------------------------------------------------------------

    def run_one(self, job: Job) -> Invocation:
        start = self.clock()
        if self._stopping:
            return self._invocation(job, error="not run (interrupted)")
        env = job.env() if callable(job.env) else job.env
        me = threading.get_ident()
        proc = self._workers.get(me)
        if proc is None:
            try:
                proc = self._start(env)
            except (OSError, ValueError) as exc:
                reason = getattr(exc, "strerror", None) or str(exc)
                name = self.command if isinstance(self.command, str) else self.command[0]
                return self._invocation(
                    job, error=f"failed to launch command: {reason}: {str(name)[:200]}",
                    duration_s=round(self.clock() - start, 3))
            with self._lock:
                self._workers[me] = proc
                late = self._stopping
            if late:
                proc.signal_group(self._kill)
        deadline = start + self.timeout if self.timeout else None
        ex = proc.exchange(item_message(job.key, job.input, env), job.key, deadline=deadline,
                           clock=self.clock, stopping=lambda: self._stopping)
        if ex.reply is None:  # the worker is lost: the next item gets a new one
            with self._lock:
                self._workers.pop(me, None)
            proc.stop(grace=0.0 if ex.stopped or ex.exited else self.grace,
                      term=not (ex.stopped or ex.exited))
        inv = self._invocation(job, duration_s=round(self.clock() - start, 3),
                               **self._verdict(ex, proc, job.key))
        if ex.reply is None or not inv.ok or self.keep_output:
            output = proc.tail.text()
            if ex.reply is not None and ex.reply.output and self.keep_output:
                output = (output + ex.reply.output)[-self.output_cap:]
            inv.output = output
        return inv

    def _start(self, env: dict[str, str] | Any) -> WorkerProc:
        wenv = worker_env(env)
        proc = WorkerProc(self._argv(wenv), wenv, output_cap=self.output_cap)
        self.started += 1
        return proc

    def _verdict(self, ex: Exchange, proc: WorkerProc, item_id: str) -> dict[str, Any]:
        """The Invocation fields for how the exchange ended."""
        if ex.reply is not None:
            if ex.reply.ok:
                return {"returncode": 0}
            why = " ".join(ex.reply.error.split())[:500] or "no reason given"
            return {"returncode": 1, "error": f"agent error: {why}"}
        rc = proc.returncode
        if ex.stopped or self._stopping:  # killed by kill_all, whatever was seen first
            return {"returncode": rc, "error": "killed (interrupted)"}
        if ex.timed_out:
            return {"returncode": rc, "timed_out": True,
                    "error": f"timed out after {self.timeout:g}s"}
        if ex.protocol:
            return {"returncode": rc,
                    "error": f"worker broke the protocol on item {item_id}: {ex.protocol}"}
        said = f"rc={rc}" if rc is not None else "closed its stdout"
        error = f"worker exited ({said}) before answering item {item_id}"
        if not proc.spoke and (rc == 0 or proc.stray):  # a one-shot agent, most likely
            error += f": {NOT_A_WORKER}"
        return {"returncode": rc, "error": error}
