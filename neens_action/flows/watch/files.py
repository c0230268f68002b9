"""The polling file watcher behind ``neens eval watch`` (docs/cli.md).

Stdlib only, and deliberately so: a ``stat()`` scan of the watched tree every 0.5 s behaves the
same on every platform, inside containers, on bind mounts and network file systems, where
inotify/FSEvents based watchers miss events. The tree of a project being edited by hand is
small (the scan stops at 50 000 files: :data:`MAX_FILES`).

Pieces, each usable (and tested) on its own:

* :class:`Filters`: ``--include`` / ``--exclude`` globs, matched against the root-relative path
  or the base name;
* :func:`scan_tree`: one pass over the roots -> ``{path: (mtime_ns, size)}``, skipping the
  always-skipped directories;
* :func:`changed_paths`: what differs between two scans (added, removed, modified);
* :class:`TreeWatcher`: keeps the last scan, waits for a change and debounces it;
* :class:`AgentWriteFilter`: ignores during-run changes of paths the agent itself writes.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

# Directories never descended into, wherever they appear in the tree.
SKIP_DIRS: frozenset[str] = frozenset(
    {
        ".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", "dist", "build",
        ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox", ".next",
    }
)
POLL_INTERVAL_S = 0.5
MAX_DEBOUNCE_ROUNDS = 10
MAX_FILES = 50_000

Stamp = tuple[int, int]  # (mtime_ns, size)
Snapshot = dict[str, Stamp]


@dataclass(frozen=True)
class Filters:
    """``--include`` / ``--exclude`` globs. A glob matches the root-relative path (``/``
    separators) or the base name. With includes, a file must match one; an exclude always wins.
    """

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    @staticmethod
    def _match(rel: str, globs: Iterable[str]) -> bool:
        base = rel.rsplit("/", 1)[-1]
        return any(fnmatch.fnmatchcase(rel, g) or fnmatch.fnmatchcase(base, g) for g in globs)

    def accepts(self, rel: str) -> bool:
        if self.exclude and self._match(rel, self.exclude):
            return False
        return not self.include or self._match(rel, self.include)

    def prunes_dir(self, rel: str) -> bool:
        """A directory named by an exclude glob is not descended into."""
        return bool(self.exclude) and self._match(rel, self.exclude)


@dataclass
class Scan:
    files: Snapshot = field(default_factory=dict)
    capped: bool = False  # stopped at the file cap: the rest of the tree is not watched


def _stamp(path: str) -> Stamp | None:
    try:
        st = os.stat(path)
    except OSError:  # vanished mid-scan, broken symlink, no permission
        return None
    return (st.st_mtime_ns, st.st_size)


def _key(root: str, rel: str) -> str:
    return os.path.normpath(os.path.join(root, rel)) if rel else os.path.normpath(root)


def scan_tree(roots: Sequence[str], filters: Filters, *, cap: int = MAX_FILES) -> Scan:
    """One pass over ``roots``. Keys are ``root/relative`` paths as the user spelled the root
    (``--path .`` gives ``src/app.py``), so they read well in the log and stay unique.
    """
    out = Scan()
    for root in roots:
        if os.path.isfile(root):
            if filters.accepts(os.path.basename(root)):
                stamp = _stamp(root)
                if stamp is not None:
                    out.files[_key(root, "")] = stamp
            continue
        for dirpath, dirnames, filenames in os.walk(root):
            reldir = os.path.relpath(dirpath, root)
            reldir = "" if reldir == "." else reldir.replace(os.sep, "/")
            keep = []
            for d in sorted(dirnames):
                rel = f"{reldir}/{d}" if reldir else d
                if d in SKIP_DIRS or filters.prunes_dir(rel):
                    continue
                keep.append(d)
            dirnames[:] = keep  # os.walk descends only into these
            for name in sorted(filenames):
                rel = f"{reldir}/{name}" if reldir else name
                if not filters.accepts(rel):
                    continue
                stamp = _stamp(os.path.join(dirpath, name))
                if stamp is None:
                    continue
                if len(out.files) >= cap:
                    out.capped = True
                    return out
                out.files[_key(root, rel)] = stamp
    return out


def changed_paths(old: Snapshot, new: Snapshot) -> list[str]:
    """Paths added, removed or modified between two scans, sorted."""
    changed = set(old.keys() ^ new.keys())
    changed.update(p for p, stamp in new.items() if p in old and old[p] != stamp)
    return sorted(changed)


class TreeWatcher:
    """Keeps the last scan of the tree; reports and debounces changes against it.

    ``sleep`` is the only way it waits (pass ``world.clock.sleep``), ``scan`` is injectable so
    the debounce logic is testable without a file system.
    """

    def __init__(
        self,
        roots: Sequence[str],
        filters: Filters,
        *,
        sleep: Callable[[float], None],
        debounce: float = 1.0,
        interval: float = POLL_INTERVAL_S,
        max_rounds: int = MAX_DEBOUNCE_ROUNDS,
        scan: Callable[[Sequence[str], Filters], Scan] = scan_tree,
    ) -> None:
        self.roots = list(roots)
        self.filters = filters
        self.debounce = debounce
        self.interval = interval
        self.max_rounds = max_rounds
        self._sleep = sleep
        self._scan = scan
        first = scan(self.roots, filters)
        self.snapshot: Snapshot = first.files
        self.capped = first.capped

    @property
    def file_count(self) -> int:
        return len(self.snapshot)

    def poll(self) -> list[str]:
        """Rescan; return what changed since the previous scan (and remember the new one)."""
        scan = self._scan(self.roots, self.filters)
        changed = changed_paths(self.snapshot, scan.files)
        self.snapshot, self.capped = scan.files, scan.capped
        return changed

    def settle(self, changed: Iterable[str]) -> list[str]:
        """Debounce: wait until ``debounce`` seconds pass with no further change (at most
        ``max_rounds`` waits, so a file rewritten non-stop cannot hold the loop forever).
        Returns every path that changed, sorted.
        """
        seen = set(changed)
        if self.debounce <= 0:
            return sorted(seen)
        for _ in range(self.max_rounds):
            self._sleep(self.debounce)
            more = self.poll()
            if not more:
                break
            seen.update(more)
        return sorted(seen)

    def wait_for_change(self) -> list[str]:
        """Block (polling every ``interval`` s) until something changes; return it debounced.
        Interrupted only by a signal (KeyboardInterrupt), which the caller handles.
        """
        while True:
            self._sleep(self.interval)
            changed = self.poll()
            if changed:
                return self.settle(changed)


class AgentWriteFilter:
    """A path that changed during two consecutive iterations is the agent's own output (a
    cache, a log, a results file): from then on its during-run changes are ignored, so the
    watcher does not re-run forever. A save made while no iteration runs still triggers.
    """

    def __init__(self) -> None:
        self._previous: set[str] = set()
        self.agent_written: set[str] = set()

    def during_run(self, changed: Iterable[str]) -> tuple[list[str], list[str]]:
        """Split one iteration's during-run changes into (kept, ignored as agent-written)."""
        now = set(changed)
        self.agent_written |= now & self._previous
        self._previous = now
        kept = sorted(p for p in now if p not in self.agent_written)
        ignored = sorted(p for p in now if p in self.agent_written)
        return kept, ignored
