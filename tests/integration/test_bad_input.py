"""The bad-input corpus (issue 10): flags, environment, policy files and malformed server
answers. Every case runs the real CLI as a process and must exit 2 with a stderr that is
exactly ONE line, ``neens: error: <what to fix>``: no traceback, no progress or warning
lines, and never the API key.

Malformed answers come from a fake of a *broken* Neens (tests/integration/broken_neens.py):
non-JSON 2xx bodies, HTML error pages, truncated JSON, wrong JSON types, dropped connections.
Cases here fail before any agent runs; later-stage breakage is in test_bad_input_late.py.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.helpers import run_cli
from tests.integration.broken_neens import DROP, RUN_ID, BrokenNeens, Raw

KEY = "nk_live_badinput_5ecret_0123456789"
NGINX_502 = ("<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>"
             "502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n"
             "</html>\r\n" + "<!-- padding -->\r\n" * 40)
LOGIN_PAGE = ("<!DOCTYPE html><html><head><title>Sign in</title><script>var x = 1;</script>"
              "</head><body><form>Sign in to continue</form></body></html>")
POST_RUNS = ("POST", "/preprod-evals")
GET_RUN = ("GET", f"/preprod-evals/{RUN_ID}")
GET_ITEMS = ("GET", f"/preprod-evals/{RUN_ID}/items")
CREATE = ["eval", "run", "--create", "--dataset", "ds_1", "--version-label", "v1"]
ATTACH = ["eval", "run", "--run-id", RUN_ID]
ATTACH_L = [*ATTACH, "--version-label", "v1"]
AGENT = ["--", "true"]


@dataclass
class Case:
    id: str
    args: list[str]
    expect: str  # a fragment of the one error line
    env: dict[str, str | None] = field(default_factory=dict)  # None removes the variable
    routes: dict[tuple[str, str], Raw] = field(default_factory=dict)
    files: dict[str, bytes | None] = field(default_factory=dict)  # None => a directory


DRIP_RUN = f'{{"id": "{RUN_ID}", "status": "completed", "versionLabel": "v1"}}'
DEEP = '{"id": "ppr_1", "x": ' + "[" * 200_000 + "]" * 200_000 + "}"


def endless_items() -> Iterator[bytes]:
    """An item list that never ends (the client must stop reading at its cap)."""
    yield b'{"items": ['
    row = b'{"item_id": "it_1", "input": "q"},' * 100
    while True:
        yield row


def html(status: int, page: str = LOGIN_PAGE) -> Raw:
    return Raw(status, page, content_type="text/html; charset=utf-8")


CASES = [
    # -- flags ---------------------------------------------------------------------------------
    Case("no-target", ["eval", "run", *AGENT], "nothing to run"),
    Case("no-command", ATTACH, "no agent command"),
    Case("create-no-dataset", ["eval", "run", "--create", "--version-label", "v", *AGENT],
         "--create needs --dataset"),
    Case("create-no-label", ["eval", "run", "--create", "--dataset", "d", *AGENT],
         "--version-label"),
    Case("run-id-and-create", [*ATTACH, "--create", "--dataset", "d", "--version-label", "v",
                               *AGENT], "cannot be combined with --create"),
    Case("run-id-and-gates", [*ATTACH, "--gates", "active", *AGENT], "--gates"),
    Case("concurrency-zero", [*ATTACH, "--concurrency", "0", *AGENT], "--concurrency"),
    Case("concurrency-text", [*ATTACH, "--concurrency", "abc", *AGENT], "--concurrency"),
    Case("timeout-negative", [*ATTACH, "--timeout", "-1", *AGENT], "--timeout"),
    Case("timeout-nan", [*ATTACH, "--timeout", "nan", *AGENT], "--timeout"),
    Case("poll-interval-zero", [*ATTACH, "--poll-interval", "0", *AGENT], "--poll-interval"),
    Case("poll-timeout-negative", [*ATTACH, "--poll-timeout", "-5", *AGENT], "--poll-timeout"),
    Case("min-pass-rate-range", [*CREATE, "--min-pass-rate", "1.5", *AGENT], "--min-pass-rate"),
    Case("max-regressions-negative", [*CREATE, "--max-regressions", "-1", *AGENT],
         "--max-regressions"),
    Case("baseline-unknown", [*CREATE, "--baseline", "yesterday", *AGENT], "--baseline"),
    Case("baseline-empty-branch", [*CREATE, "--baseline", "branch:", *AGENT], "branch"),
    Case("gates-mixed", ["eval", "run", "--gates", "active,g1", "--version-label", "v", *AGENT],
         "--gates"),
    Case("gates-bad-id", ["eval", "run", "--gates", "bad id!", "--version-label", "v", *AGENT],
         "--gates"),
    Case("git-sha-not-hex", [*CREATE, "--git-sha", "xyz", *AGENT], "--git-sha"),
    Case("pr-number-zero", [*CREATE, "--pr-number", "0", *AGENT], "--pr-number"),
    Case("pr-url-scheme", [*CREATE, "--pr-url", "ftp://x/1", *AGENT], "--pr-url"),
    Case("base-url-scheme", [*ATTACH, "--base-url", "ftp://neens.example", *AGENT],
         "--base-url"),
    Case("base-url-credentials", [*ATTACH, "--base-url", "http://u:p@127.0.0.1:9", *AGENT],
         "credentials"),
    Case("unknown-flag", [*ATTACH, "--bogus", *AGENT], "--bogus"),
    Case("run-id-empty", ["eval", "run", "--run-id", "", *AGENT], "--run-id"),
    Case("label-blank", ["eval", "run", "--create", "--dataset", "d", "--version-label", "  ",
                         *AGENT], "--version-label"),
    Case("min-avg-score-range", [*ATTACH, "--min-avg-score", "2", *AGENT], "--min-avg-score"),
    Case("max-abs-failures-negative", [*ATTACH, "--max-abs-failures", "-1", *AGENT],
         "--max-abs-failures"),
    Case("repo-control-char", [*CREATE, "--repo", "acme/\x01x", *AGENT], "--repo"),
    Case("shard-out-of-range", [*ATTACH, "--shard", "5/4", *AGENT], "--shard"),
    Case("shard-not-a-fraction", [*ATTACH, "--shard", "half", *AGENT], "--shard"),
    Case("shard-without-run-id", ["eval", "run", "--shard", "1/2", *AGENT], "--run-id"),
    Case("finish-without-run-id", ["eval", "run", "--finish"], "--finish needs --run-id"),
    Case("finish-with-command", [*ATTACH, "--finish", *AGENT], "drop the command"),
    Case("finish-and-shard", [*ATTACH, "--finish", "--shard", "1/2"], "cannot be combined"),
    Case("only-create-without-create", ["eval", "run", "--only-create"], "--only-create"),
    Case("only-create-with-command", [*CREATE, "--only-create", *AGENT], "drop the command"),
    Case("unknown-subcommand", ["eval", "runn"], "runn"),
    # -- environment -----------------------------------------------------------------------------
    Case("env-no-base-url", [*ATTACH, *AGENT], "no Neens base URL",
         env={"NEENS_BASE_URL": None}),
    Case("env-base-url-garbage", [*ATTACH, *AGENT], "--base-url",
         env={"NEENS_BASE_URL": "neens.example.com"}),
    Case("env-base-url-credentials", [*ATTACH, *AGENT], "credentials",
         env={"NEENS_BASE_URL": "https://user:pw@neens.example.com"}),
    Case("env-gates-mixed", ["eval", "run", "--version-label", "v", *AGENT], "--gates",
         env={"NEENS_GATES": "active,gate-1"}),
    Case("env-policy-missing", [*ATTACH, *AGENT], "file not found",
         env={"NEENS_GATE_POLICY": "/nonexistent/neens-gate.json"}),
    Case("env-repo-control-char", [*CREATE, *AGENT], "NEENS_REPO",
         env={"NEENS_REPO": "acme/\x07bell"}),
    # -- policy files ----------------------------------------------------------------------------
    Case("policy-bad-json", [*ATTACH, "--gate-policy", "{p}/p.json", *AGENT], "not valid JSON",
         files={"p.json": b'{"rules": [ {"max_regressions": 0,'}),
    Case("policy-bad-yaml", [*ATTACH, "--gate-policy", "{p}/p.yaml", *AGENT], "not valid YAML",
         files={"p.yaml": b"rules: [1, 2\n  gate: {"}),
    Case("policy-empty", [*ATTACH, "--gate-policy", "{p}/p.json", *AGENT], "empty",
         files={"p.json": b"  \n"}),
    Case("policy-directory", [*ATTACH, "--gate-policy", "{p}/dir", *AGENT], "directory",
         files={"dir": None}),
    Case("policy-not-utf8", [*ATTACH, "--gate-policy", "{p}/p.json", *AGENT], "UTF-8",
         files={"p.json": b'{"rules": [{"metric": "\xff\xfe"}]}'}),
    Case("policy-unknown-rule", [*ATTACH, "--gate-policy", "{p}/p.json", *AGENT], "gate policy",
         files={"p.json": b'{"rules": [{"bogus_rule": 1, "severity": "block"}]}'}),
    Case("policy-wrong-type", [*ATTACH, "--gate-policy", "{p}/p.json", *AGENT], "gate policy",
         files={"p.json": b'{"rules": [{"min_pass_rate": "high"}]}'}),
    Case("policy-top-level-list", [*ATTACH, "--gate-policy", "{p}/p.json", *AGENT],
         "gate policy", files={"p.json": b"[1, 2, 3]"}),
    Case("policy-bad-severity", [*ATTACH, "--gate-policy", "{p}/p.json", *AGENT], "severity",
         files={"p.json": b'{"rules": [{"max_regressions": 0, "severity": "maybe"}]}'}),
    # -- malformed server answers ------------------------------------------------------------------
    Case("create-html-200", [*CREATE, *AGENT], "non-JSON", routes={POST_RUNS: html(200)}),
    Case("create-text-200", [*CREATE, *AGENT], "non-JSON",
         routes={POST_RUNS: Raw(200, "OK", content_type="text/plain")}),
    Case("create-truncated-json", [*CREATE, *AGENT], "non-JSON",
         routes={POST_RUNS: Raw(200, '{"id": "ppr_1", "sta')}),
    Case("create-not-utf8", [*CREATE, *AGENT], "non-JSON",
         routes={POST_RUNS: Raw(200, b'{"id": "\xff\xfe"}')}),
    Case("create-json-list", [*CREATE, *AGENT], "POST /preprod-evals",
         routes={POST_RUNS: Raw(200, [1, 2])}),
    Case("create-no-id", [*CREATE, *AGENT], "'id'",
         routes={POST_RUNS: Raw(200, {"status": "awaiting_traces"})}),
    Case("create-numeric-id", [*CREATE, *AGENT], "'id'", routes={POST_RUNS: Raw(200, {"id": 42})}),
    Case("create-nginx-502", [*CREATE, *AGENT], "502 Bad Gateway",
         routes={POST_RUNS: html(502, NGINX_502)}),
    Case("create-401", [*CREATE, *AGENT], "HTTP 401",
         routes={POST_RUNS: Raw(401, {"detail": "invalid API key"})}),
    Case("create-422", [*CREATE, *AGENT], "no golden version",
         routes={POST_RUNS: Raw(422, {"detail": "dataset ds_1 has no golden version"})}),
    Case("create-dropped", [*CREATE, *AGENT], "POST /preprod-evals",
         routes={POST_RUNS: Raw(200, DROP)}),
    Case("run-html-200", [*ATTACH, *AGENT], "non-JSON", routes={GET_RUN: html(200)}),
    Case("run-truncated-json", [*ATTACH, *AGENT], "non-JSON",
         routes={GET_RUN: Raw(200, '{"id": "ppr_1", "versionLab')}),
    Case("run-json-list", [*ATTACH, *AGENT], f"GET /preprod-evals/{RUN_ID}",
         routes={GET_RUN: Raw(200, [{"id": RUN_ID}])}),
    Case("run-json-string", [*ATTACH, *AGENT], f"GET /preprod-evals/{RUN_ID}",
         routes={GET_RUN: Raw(200, '"ppr_1"')}),
    Case("run-404", [*ATTACH, *AGENT], "run not found",
         routes={GET_RUN: Raw(404, {"detail": "run not found"})}),
    Case("run-503-html", [*ATTACH, *AGENT], "HTTP 503",
         routes={GET_RUN: html(503, "<html><body><h1>Service Unavailable</h1></body></html>")}),
    Case("items-html-200", [*ATTACH_L, *AGENT], "non-JSON", routes={GET_ITEMS: html(200)}),
    Case("items-wrong-type", [*ATTACH_L, *AGENT], "no items to replay",
         routes={GET_ITEMS: Raw(200, {"items": "oops"})}),
    Case("items-no-item-id", [*ATTACH_L, *AGENT], "no item_id",
         routes={GET_ITEMS: Raw(200, {"items": [{"input": "q"}]})}),
    Case("items-empty", [*ATTACH_L, *AGENT], "no items to replay",
         routes={GET_ITEMS: Raw(200, {"items": []})}),
    Case("items-truncated", [*ATTACH_L, *AGENT], "non-JSON",
         routes={GET_ITEMS: Raw(200, '{"items": [{"item_id": "it_1", "inp')}),
    # -- hostile answers (issue 17) -------------------------------------------------------------
    Case("run-drip", [*ATTACH, *AGENT], "no complete answer from Neens within 1.5 s",
         env={"NEENS_REQUEST_BUDGET": "1.5"}, routes={GET_RUN: Raw(200, DRIP_RUN, drip=0.5)}),
    Case("run-deeply-nested", [*ATTACH, *AGENT], "nested too deeply",
         routes={GET_RUN: Raw(200, DEEP)}),
    Case("run-nested-whole", [*ATTACH, *AGENT], "nested too deeply",
         routes={GET_RUN: Raw(200, "[" * 200_000 + "]" * 200_000)}),
    Case("run-non-utf8", [*ATTACH, *AGENT], "non-JSON",
         routes={GET_RUN: Raw(200, b'{"id": "ppr_1", "versionLabel": "\xff\xfe"}')}),
    Case("run-raw-surrogate", [*ATTACH, *AGENT], "non-JSON",
         routes={GET_RUN: Raw(200, b'{"id": "ppr_1", "versionLabel": "\xed\xa0\x80"}')}),
    Case("run-body-cap", [*ATTACH, *AGENT], "more than 2000 bytes",
         env={"NEENS_MAX_BODY_BYTES": "2000"},
         routes={GET_RUN: Raw(200, {"id": RUN_ID, "pad": "x" * 5000})}),
    Case("items-endless", [*ATTACH_L, *AGENT], "more than 1000 items",
         env={"NEENS_MAX_ITEMS": "1000"}, routes={GET_ITEMS: Raw(200, stream=endless_items)}),
    Case("env-bad-budget", [*ATTACH, *AGENT], "NEENS_REQUEST_BUDGET must be",
         env={"NEENS_REQUEST_BUDGET": "soon"}),
]


def test_the_corpus_is_big_enough():
    kinds = {c.id.split("-")[0] for c in CASES}
    assert len(CASES) >= 40 and {"env", "policy", "create", "run", "items"} <= kinds


def base_env(url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("NEENS_", "OTEL_", "GITHUB_", "GITLAB_", "CI_"))
           and k not in {"CI", "JENKINS_URL"}}
    env.update(NEENS_BASE_URL=url, NEENS_API_KEY=KEY, OTEL_EXPORTER_OTLP_ENDPOINT=url,
               OTEL_EXPORTER_OTLP_HEADERS=f"Authorization=Bearer {KEY}")
    return env


def assert_one_error_line(proc, expect: str) -> str:
    err = proc.stderr
    assert proc.returncode == 2, (proc.returncode, err, proc.stdout)
    assert "Traceback" not in err and "Traceback" not in proc.stdout, err
    lines = err.splitlines()
    assert len(lines) == 1, f"expected exactly one stderr line, got {len(lines)}:\n{err}"
    assert lines[0].startswith("neens: error: "), err
    assert expect.lower() in lines[0].lower(), (expect, lines[0])
    assert KEY not in err and KEY not in proc.stdout
    return lines[0]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_exits_2_with_one_line(case: Case, tmp_path: Path):
    for name, content in case.files.items():
        target = tmp_path / name
        if content is None:
            target.mkdir()
        else:
            target.write_bytes(content)
    with BrokenNeens(case.routes) as server:
        env = base_env(server.url)
        for key, value in case.env.items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = value
        args = [a.replace("{p}", str(tmp_path)) for a in case.args]
        proc = run_cli(args, env, timeout=120, cwd=tmp_path)
    line = assert_one_error_line(proc, case.expect)
    if "non-JSON" in case.expect:
        assert "<" not in line  # never a page of HTML in the log
    assert len(line) < 600


@pytest.mark.parametrize("missing", ["unset", "empty"])
def test_no_key_is_one_line_before_any_request(missing: str, tmp_path: Path):
    with BrokenNeens({}) as server:
        env = base_env(server.url)
        if missing == "unset":
            env.pop("NEENS_API_KEY")
        else:
            env["NEENS_API_KEY"] = ""
        proc = run_cli([*CREATE, *AGENT], env, timeout=120, cwd=tmp_path)
        seen = list(server.seen)
    line = assert_one_error_line(proc, "no Neens API key: pass --api-key or set NEENS_API_KEY")
    assert seen == [] and "POST" not in line


def test_a_base_url_with_a_path_says_use_the_origin_before_any_request(tmp_path: Path):
    with BrokenNeens({}) as server:
        env = base_env(server.url)
        env["NEENS_BASE_URL"] = server.url + "/api"
        proc = run_cli([*CREATE, *AGENT], env, timeout=120, cwd=tmp_path)
        seen = list(server.seen)
    assert_one_error_line(proc, f"--base-url has a path (/api): use the origin, e.g. {server.url}")
    assert seen == []
