"""The sharding flags of ``neens eval run`` (docs/sharding.md), checked before any request.

``--only-create`` (step ``create``), ``--shard I/N`` / ``--no-start`` (step ``shard``) and
``--finish`` (step ``finish``); :func:`step_of` says which job a settings object selects, and
:func:`resume_command` is the command line that continues a run (a shard re-run, the finish).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from typing import Protocol

from neens_action.settings.names import Ref, SettingError

MAX_SHARDS = 1000


class ShardFlags(Protocol):
    """The part of ``EvalRunSettings`` the sharding checks read and set."""

    run_id: str | None
    command: list[str]
    shard: str | None
    no_start: bool
    finish: bool
    only_create: bool
    shard_index: int
    shard_total: int

    @property
    def creates_run(self) -> bool: ...
_SHARD = re.compile(r"^\s*(\d{1,4})\s*/\s*(\d{1,4})\s*$")


def parse_shard(text: str | None) -> tuple[int, int]:
    """``"2/4"`` -> ``(2, 4)``; raises SettingError unless ``1 <= I <= N <= 1000``."""
    match = _SHARD.match(text or "")
    if not match:
        raise SettingError("shard", f"must be I/N (this job's share, 1-based), e.g. 2/4; got "
                                    f"{str(text)[:40]!r}")
    index, total = int(match.group(1)), int(match.group(2))
    if total < 1 or total > MAX_SHARDS:
        raise SettingError("shard", f"{index}/{total}: N must be between 1 and {MAX_SHARDS}")
    if index < 1 or index > total:
        raise SettingError("shard", f"{index}/{total}: I must be between 1 and {total} "
                                    "(shards are numbered from 1)")
    return index, total


def check_flags(settings: ShardFlags) -> None:
    """Usage checks for --shard / --no-start / --finish / --only-create (before any request).

    Sets ``settings.shard_index`` / ``shard_total`` from ``--shard`` and turns on
    ``no_start`` when a shard is given.
    """
    shard = getattr(settings, "shard", None)
    finish = bool(getattr(settings, "finish", False))
    only_create = bool(getattr(settings, "only_create", False))
    if shard is not None:
        settings.shard_index, settings.shard_total = parse_shard(shard)
        settings.no_start = True
    no_start = bool(getattr(settings, "no_start", False))
    if finish:
        other = ("shard" if shard is not None else "no_start" if no_start
                 else "only_create" if only_create else None)
        if other:
            raise SettingError("finish", ["cannot be combined with ", Ref(other),
                                          ": shard jobs replay, one final job finishes"])
        if not settings.run_id:
            raise SettingError("finish", ["needs ", Ref("run_id"),
                                          " ID (the run the shard jobs replayed)"])
        if settings.command:
            raise SettingError("finish", "runs no agent: drop the command after '--'")
        return
    if only_create:
        if no_start:
            raise SettingError("only_create", [
                "cannot be combined with ", Ref("shard" if shard is not None else "no_start"),
                ": create the run in one job, replay it with ", Ref("run_id"), " ID ",
                Ref("shard"), " I/N in others"])
        if settings.run_id:
            raise SettingError("only_create", ["creates a run: it cannot be combined with ",
                                               Ref("run_id")])
        if not settings.creates_run:
            raise SettingError("only_create", [
                "needs ", Ref("create"), " ", Ref("dataset"), " ID ", Ref("version_label"),
                " LABEL (or ", Ref("gates"), ")"])
        if settings.command:
            raise SettingError("only_create", "runs no agent: drop the command after '--'")
        return
    if shard is not None and not settings.run_id:
        raise SettingError("shard", ["needs ", Ref("run_id"), " ID: create the run once with ",
                                     Ref("create"), " ", Ref("only_create"),
                                     ", then give its id to every shard job"])


def needs_command(settings: ShardFlags) -> bool:
    """False for --finish and --only-create (they run no agent)."""
    return not (getattr(settings, "finish", False) or getattr(settings, "only_create", False))


def resume_command(run_id: str, *, shard: tuple[int, int] | None = None,
                   command: Sequence[str] | str | None = None) -> str:
    """The command that continues a run: a shard re-run, or the finish."""
    if command is None:
        return f"neens eval run --run-id {shlex.quote(run_id)} --finish"
    cmd = command if isinstance(command, str) else shlex.join(command)
    where = f"--shard {shard[0]}/{shard[1]}" if shard and shard[1] > 1 else "--no-start"
    return f"neens eval run --run-id {shlex.quote(run_id)} {where} -- {cmd}"


def step_of(settings: ShardFlags) -> str | None:
    """``create`` | ``shard`` | ``finish`` | None (a plain ``eval run``)."""
    if settings.finish:
        return "finish"
    if settings.only_create:
        return "create"
    if settings.no_start or settings.shard is not None:
        return "shard"
    return None
