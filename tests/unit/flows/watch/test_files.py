"""The polling watcher: filters, skipped dirs, scans, debounce, agent-written paths."""

from __future__ import annotations

import os
from pathlib import Path

from neens_action.flows.watch.files import (
    SKIP_DIRS,
    AgentWriteFilter,
    Filters,
    Scan,
    TreeWatcher,
    changed_paths,
    scan_tree,
)


def write(path: Path, text: str = "x") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def bump(path: Path, text: str) -> None:
    """Rewrite with a different size AND a later mtime (coarse-mtime file systems)."""
    st = path.stat()
    path.write_text(text)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_filters_match_relative_path_or_base_name():
    f = Filters(include=("*.py", "prompts/*"), exclude=("secret*",))
    assert f.accepts("app.py")
    assert f.accepts("pkg/deep/mod.py")  # base name matches *.py
    assert f.accepts("prompts/refund.txt")  # relative path matches prompts/*
    assert not f.accepts("notes.txt")
    assert not f.accepts("pkg/secret_key.py")  # exclude wins over include
    assert Filters().accepts("anything/at/all.bin")


def test_filters_prune_excluded_directories():
    f = Filters(exclude=("data",))
    assert f.prunes_dir("data")
    assert f.prunes_dir("sub/data")  # base name
    assert not f.prunes_dir("src")
    assert not Filters().prunes_dir("data")


def test_scan_skips_always_skipped_dirs(tmp_path):
    write(tmp_path / "src" / "app.py")
    for d in SKIP_DIRS:
        write(tmp_path / d / "inside.py")
        write(tmp_path / "src" / d / "nested.py")
    scan = scan_tree([str(tmp_path)], Filters())
    rel = sorted(os.path.relpath(p, tmp_path) for p in scan.files)
    assert rel == ["src/app.py"]
    assert not scan.capped


def test_scan_keys_keep_the_root_as_spelled(tmp_path, monkeypatch):
    write(tmp_path / "src" / "app.py")
    write(tmp_path / "README.md")
    monkeypatch.chdir(tmp_path)
    assert sorted(scan_tree(["."], Filters()).files) == ["README.md", "src/app.py"]
    assert sorted(scan_tree(["src"], Filters()).files) == ["src/app.py"]
    # two overlapping roots do not count a file twice
    assert sorted(scan_tree([".", "src"], Filters()).files) == ["README.md", "src/app.py"]
    # a single file as a root
    assert list(scan_tree(["README.md"], Filters()).files) == ["README.md"]


def test_scan_applies_include_and_exclude(tmp_path, monkeypatch):
    write(tmp_path / "a.py")
    write(tmp_path / "b.txt")
    write(tmp_path / "prompts" / "p1.txt")
    write(tmp_path / "data" / "big.py")
    monkeypatch.chdir(tmp_path)
    files = scan_tree(["."], Filters(include=("*.py", "prompts/*"), exclude=("data",))).files
    assert sorted(files) == ["a.py", "prompts/p1.txt"]


def test_scan_stops_at_the_cap(tmp_path):
    for i in range(7):
        write(tmp_path / f"f{i}.txt")
    scan = scan_tree([str(tmp_path)], Filters(), cap=5)
    assert len(scan.files) == 5
    assert scan.capped


def test_changed_paths_sees_added_removed_modified(tmp_path):
    a, b = write(tmp_path / "a.txt", "1"), write(tmp_path / "b.txt", "1")
    before = scan_tree([str(tmp_path)], Filters()).files
    bump(a, "22")
    b.unlink()
    write(tmp_path / "c.txt")
    after = scan_tree([str(tmp_path)], Filters()).files
    names = [os.path.basename(p) for p in changed_paths(before, after)]
    assert names == ["a.txt", "b.txt", "c.txt"]
    assert changed_paths(after, after) == []


class FakeTree:
    """A scan function whose results are scripted; counts sleeps instead of sleeping."""

    def __init__(self, snapshots: list[dict[str, tuple[int, int]]]) -> None:
        self.snapshots = snapshots
        self.sleeps: list[float] = []

    def scan(self, roots, filters) -> Scan:
        files = self.snapshots.pop(0) if len(self.snapshots) > 1 else self.snapshots[0]
        return Scan(files=dict(files))

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)


def test_settle_waits_for_quiet_and_collects_every_change():
    tree = FakeTree([
        {"a": (1, 1)},  # initial scan
        {"a": (2, 1)},  # debounce round 1: a changed again
        {"a": (2, 1), "b": (1, 1)},  # round 2: b appeared
        {"a": (2, 1), "b": (1, 1)},  # round 3: quiet
    ])
    w = TreeWatcher(["."], Filters(), sleep=tree.sleep, debounce=1.0, scan=tree.scan)
    assert w.settle(["a"]) == ["a", "b"]
    assert tree.sleeps == [1.0, 1.0, 1.0]


def test_settle_gives_up_after_max_rounds():
    snaps = [{"a": (i, 1)} for i in range(30)]
    tree = FakeTree(snaps)
    w = TreeWatcher(["."], Filters(), sleep=tree.sleep, debounce=0.25, scan=tree.scan)
    assert w.settle(["a"]) == ["a"]
    assert tree.sleeps == [0.25] * 10


def test_settle_with_zero_debounce_does_not_wait():
    tree = FakeTree([{"a": (1, 1)}])
    w = TreeWatcher(["."], Filters(), sleep=tree.sleep, debounce=0, scan=tree.scan)
    assert w.settle(["x"]) == ["x"]
    assert tree.sleeps == []


def test_wait_for_change_polls_every_interval_then_debounces():
    tree = FakeTree([
        {"a": (1, 1)},  # initial
        {"a": (1, 1)},  # poll 1: nothing
        {"a": (1, 1)},  # poll 2: nothing
        {"a": (1, 2)},  # poll 3: changed
        {"a": (1, 2)},  # debounce: quiet
    ])
    w = TreeWatcher(["."], Filters(), sleep=tree.sleep, debounce=1.0, scan=tree.scan)
    assert w.wait_for_change() == ["a"]
    assert tree.sleeps == [0.5, 0.5, 0.5, 1.0]


def test_watcher_on_a_real_tree(tmp_path):
    write(tmp_path / "app.py", "v1")
    sleeps: list[float] = []
    w = TreeWatcher([str(tmp_path)], Filters(), sleep=sleeps.append, debounce=0.1)
    assert w.file_count == 1
    assert w.poll() == []
    bump(tmp_path / "app.py", "v22")
    write(tmp_path / ".git" / "index", "ignored")
    assert [os.path.basename(p) for p in w.poll()] == ["app.py"]
    assert w.poll() == []


def test_agent_written_paths_are_ignored_after_two_consecutive_iterations():
    f = AgentWriteFilter()
    # iteration 1: the agent writes out.log, the user saves app.py
    assert f.during_run(["app.py", "out.log"]) == (["app.py", "out.log"], [])
    # iteration 2: out.log again -> the agent's; app.py was not touched
    assert f.during_run(["out.log"]) == ([], ["out.log"])
    # from then on, out.log never triggers a follow-up by itself
    assert f.during_run(["out.log", "other.py"]) == (["other.py"], ["out.log"])
    assert f.agent_written == {"out.log"}


def test_agent_write_filter_needs_consecutive_iterations():
    f = AgentWriteFilter()
    assert f.during_run(["app.py"]) == (["app.py"], [])
    assert f.during_run([]) == ([], [])
    assert f.during_run(["app.py"]) == (["app.py"], [])  # not consecutive: still the user's
    assert f.agent_written == set()
