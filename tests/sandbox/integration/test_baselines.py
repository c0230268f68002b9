"""Baselines: branch resolution and pinning, regressions, run:/prod windows, gates-only."""

from __future__ import annotations

from tests.sandbox.integration.support import create, eval_run

DS = {"dataset_id": "ds_refunds"}
MAIN = {"kind": "branch", "value": "main"}


def test_branch_baseline_regressions_and_failing_runs_never_become_baselines(sandbox):
    first = eval_run(sandbox, {**DS, "branch": "main", "baseline": MAIN,
                               "gate": {"max_regressions": 0}})
    assert first["baselineResolution"]["resolvedRunId"] is None  # nothing on main yet
    assert first["baseline"] == {"kind": "prod_window", "range": "7d"}
    assert "fell back" not in first["baselineResolution"]["detail"]
    assert first["status"] == "completed"

    cand = eval_run(sandbox, {**DS, "branch": "feature", "baseline": MAIN,
                              "gate": {"max_regressions": 0}}, mode="bad")
    assert cand["baseline"] == {"kind": "preprod_run", "runId": first["id"],
                                "value": first["id"]}
    assert cand["baselineResolution"]["requested"] == "branch:main"
    assert cand["baselineResolution"]["resolvedRunId"] == first["id"]
    assert cand["status"] == "completed_with_regressions"
    assert cand["aggregate"]["regressions"] == 3 and cand["aggregate"]["baselineCompared"]
    cmp = sandbox.get(f"/preprod-evals/{cand['id']}/comparison").json()
    assert sorted(r["itemId"] for r in cmp["regressions"]) == ["it_2", "it_3", "it_5"]
    assert cmp["newPasses"] == []
    assert cmp["baseline"]["compared"] is True
    assert cmp["baseline"]["matchedItems"] == cmp["baseline"]["totalItems"] == 6
    assert cmp["matrix"]["passFail"] == 3 and cmp["matrix"]["passPass"] == 3
    assert set(cmp["deltas"]) == {"cost", "latencyMs", "steps"}
    assert cmp["deltas"]["steps"]["delta"] == 0
    assert cmp["traits"]["baseline"]["n"] == 6 and cmp["traits"]["candidate"]["n"] == 6
    gate = sandbox.get(f"/preprod-evals/{cand['id']}/gate").json()
    assert gate["passed"] is False and gate["regressions"] == 3
    assert "regressions 3 > 0" in gate["reasons"]
    assert gate["baseline"]["resolution"]["resolvedRunId"] == first["id"]

    # a failing run on main must never become the branch baseline
    bad_main = eval_run(sandbox, {**DS, "branch": "main", "baseline": MAIN,
                                  "gate": {"max_regressions": 0}}, mode="bad")
    assert sandbox.get(f"/preprod-evals/{bad_main['id']}/gate").json()["passed"] is False
    later = create(sandbox, {**DS, "version_label": "v3", "branch": "feature",
                             "baseline": MAIN})
    assert later["baseline"]["runId"] == first["id"]

    # new passes: the good agent against the failing run as an explicit baseline
    fixed = eval_run(sandbox, {**DS, "baseline": {"kind": "preprod_run",
                                                  "value": bad_main["id"]}})
    assert fixed["baselineResolution"]["requested"] == f"run:{bad_main['id']}"
    cmp = sandbox.get(f"/preprod-evals/{fixed['id']}/comparison").json()
    assert sorted(r["itemId"] for r in cmp["newPasses"]) == ["it_2", "it_3", "it_5"]
    assert cmp["regressions"] == [] and fixed["status"] == "completed"
    # E8 override with the CLI spelling, not pinned
    over = sandbox.get(f"/preprod-evals/{fixed['id']}/comparison",
                       params={"baseline": f"run:{first['id']}"}).json()
    assert over["newPasses"] == [] and over["baseline"]["runId"] == first["id"]
    assert sandbox.get(f"/preprod-evals/{fixed['id']}/comparison",
                       params={"baseline": "nonsense"}).status_code == 422


def test_prod_windows_match_by_prompt_text(sandbox):
    run = eval_run(sandbox, DS)  # no baseline sent: the 7-day production window
    assert run["baseline"] == {"kind": "prod_window", "range": "7d"}
    assert run["baselineResolution"] is None
    cmp = sandbox.get(f"/preprod-evals/{run['id']}/comparison").json()
    assert cmp["baseline"]["matchedItems"] == 2  # it_1 (2d) and it_6 (3d)
    assert cmp["baseline"]["compared"] is True
    assert cmp["traits"]["baseline"]["n"] == 2
    assert cmp["deltas"]["latencyMs"]["before"] == 725.0
    wide = eval_run(sandbox, {**DS, "baseline": {"kind": "prod_window", "range": "30d"}})
    cmp = sandbox.get(f"/preprod-evals/{wide['id']}/comparison").json()
    assert cmp["baseline"]["matchedItems"] == 3
    # it_2 failed in production (20d ago) and passes now
    assert [p["itemId"] for p in cmp["newPasses"]] == ["it_2"]
    narrow = create(sandbox, {**DS, "version_label": "n",
                              "baseline": {"kind": "prod_window", "range": "1h"}})
    cmp = sandbox.get(f"/preprod-evals/{narrow['id']}/comparison").json()
    assert cmp["baseline"]["compared"] is False and cmp["baseline"]["matchedItems"] == 0
    run_view = sandbox.get(f"/preprod-evals/{narrow['id']}").json()
    assert run_view["aggregate"]["baselineCompared"] is False


def test_nothing_matched_gives_null_regressions_on_the_gate(sandbox):
    run = eval_run(sandbox, {**DS, "baseline": {"kind": "prod_window", "range": "1h"},
                             "gate": {"max_regressions": 0}})
    gate = sandbox.get(f"/preprod-evals/{run['id']}/gate").json()
    assert gate["regressions"] is None and gate["passed"] is True
    assert "regressions: not compared (no baseline)" in gate["reasons"]
    assert gate["baseline"]["compared"] is False


def test_gates_only_run_has_no_baseline(sandbox):
    run = create(sandbox, {"version_label": "abc123", "gates": "active",
                           "baseline": {"kind": "branch", "value": "main"}})
    assert run["datasetId"] is None and run["baseline"] is None
    assert run["baselineResolution"] is None
    cmp = sandbox.get(f"/preprod-evals/{run['id']}/comparison").json()
    assert cmp["baseline"]["compared"] is None
    assert run["aggregate"]["baselineCompared"] is None


def test_older_dataset_version_is_a_separate_branch_cohort(sandbox):
    eval_run(sandbox, {**DS, "branch": "main"})
    old = create(sandbox, {**DS, "version_label": "o", "dataset_version_id": "dsv_refunds_1",
                           "baseline": MAIN})
    assert old["datasetVersionId"] == "dsv_refunds_1" and old["total"] == 2
    assert old["baselineResolution"]["resolvedRunId"] is None  # other version: no baseline
