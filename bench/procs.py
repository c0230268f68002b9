"""Peak memory of a process tree, sampled from /proc (Linux)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _ppid_map() -> dict[int, int]:
    out = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry.name}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        out[int(entry.name)] = int(fields[1])
    return out


def _rss(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
    except (OSError, IndexError, ValueError):
        return 0


def _hwm(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


class TreeSampler(threading.Thread):
    """Samples the RSS of ``pid`` (peak via VmHWM) and, with ``tree``, of its whole tree
    (sum of RSS). The tree costs a scan of /proc per sample (a few ms of CPU, which slows
    what is being timed on a small machine); without it a sample is one file read."""

    def __init__(self, pid: int, interval: float = 0.05, *, tree: bool = True) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.interval = interval
        self.tree = tree
        self.peak_root = 0
        self.peak_tree = 0
        self.max_procs = 0
        self._stop_event = threading.Event()

    def sample(self) -> None:
        if not self.tree:
            self.peak_root = max(self.peak_root, _hwm(self.pid))
            return
        parents = _ppid_map()
        tree = {self.pid}
        changed = True
        while changed:
            changed = False
            for pid, ppid in parents.items():
                if ppid in tree and pid not in tree:
                    tree.add(pid)
                    changed = True
        self.peak_root = max(self.peak_root, _hwm(self.pid), _rss(self.pid))
        self.peak_tree = max(self.peak_tree, sum(_rss(p) for p in tree))
        self.max_procs = max(self.max_procs, len(tree))

    def run(self) -> None:
        while not self._stop_event.is_set():
            self.sample()
            self._stop_event.wait(self.interval)

    def stop(self) -> None:
        self._stop_event.set()
        self.join(5)
