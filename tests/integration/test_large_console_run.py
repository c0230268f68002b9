"""A run of many items through the real sandbox, both ways the CLI reads it: console-only
(prompts spooled to disk, the terminal run folded into a digest as it streams) and --json
(every item kept). Both replay every prompt exactly once and count every item."""

from __future__ import annotations

import json
from collections import Counter

from tests.helpers import run_cli, start_sandbox
from tests.integration.scale_support import KEY, write_seed

ITEMS = 400
# Records "<item id>|<prompt>" and sends no trace: every item ends unscored.
AGENT = ["sh", "-c", 'printf "%s|%s\\n" "$NEENS_DATASET_ITEM_ID" "$(cat)" >> "$RECORD_FILE"']
ARGS = ["eval", "run", "--create", "--dataset", "ds_scale", "--concurrency", "8",
        "--poll-interval", "0.5"]


def expected_prompts() -> dict[str, str]:
    return {f"s_{i:03d}": f"Refund for order {i} (${i}.{i % 100:02d})?"
            for i in range(1, ITEMS + 1)}


def replayed(path) -> dict[str, str]:
    lines = path.read_text().splitlines()
    ids = Counter(line.split("|", 1)[0] for line in lines)
    assert set(ids.values()) == {1}, ids.most_common(3)  # exactly once each
    return dict(line.split("|", 1) for line in lines)


def test_console_and_json_runs_replay_and_count_every_item(tmp_path):
    sb = start_sandbox(tmp_path, seed=write_seed(tmp_path / "seed.yaml", ITEMS), api_key=KEY,
                       extra=["--grace", "0"])
    try:
        console_rec, json_rec = tmp_path / "console.rec", tmp_path / "json.rec"
        console = run_cli([*ARGS, "--version-label", "console", "--", *AGENT],
                          sb.agent_env(RECORD_FILE=str(console_rec)), timeout=300)
        as_json = run_cli([*ARGS, "--version-label", "json", "--json", "--", *AGENT],
                          sb.agent_env(RECORD_FILE=str(json_rec)), timeout=300)
    finally:
        sb.stop()
    for proc in (console, as_json):
        assert proc.returncode == 2, proc.stderr  # nothing was scored: a run error, never a pass
        assert "Traceback" not in proc.stderr and KEY not in proc.stdout + proc.stderr
        assert f"Command finished for {ITEMS}/{ITEMS} item(s) with rc=0" in proc.stderr
        assert f"  items not passing ({ITEMS} of {ITEMS}):" in proc.stderr
        assert f"    … and {ITEMS - 20} more (see --json)" in proc.stderr
        assert proc.stderr.count("    ✗ s_") == 20
    assert replayed(console_rec) == replayed(json_rec) == expected_prompts()
    first = [line.split()[1] for line in console.stderr.splitlines() if "    ✗ s_" in line]
    assert first == [f"s_{i:03d}" for i in range(1, 21)]  # the first ones, in replay order
    doc = json.loads(as_json.stdout)
    assert len(doc["run"]["items"]) == ITEMS and len(doc["items"]) == ITEMS
    assert all(item["state"] == "unscored" and item["returncode"] == 0
               for item in doc["items"])
