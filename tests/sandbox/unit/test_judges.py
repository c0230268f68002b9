from __future__ import annotations

import pytest

from neens_sandbox.judges import JudgeConfigError, run_judge, token_f1, validate_judge
from neens_sandbox.scoring import score_session


def judge(**kw):
    return validate_judge({"id": "j", **kw})


def test_contains_reads_expected_output_case_insensitively():
    j = judge(kind="contains", metric="correctness")
    assert run_judge(j, {"output": "Refund of $42.00 OK"}, expected="$42.00").score == 1.0
    miss = run_judge(j, {"output": "Refund of $41.00"}, expected="$42.00")
    assert miss.score == 0.0 and "missing '$42.00'" in miss.reason
    assert run_judge(j, {"output": "THIRTY DAYS"}, expected="thirty days").score == 1.0
    cs = judge(kind="contains", value="Days", case_sensitive=True)
    assert run_judge(cs, {"output": "30 days"}).score == 0.0
    assert run_judge(j, {"output": "x"}, expected=None).score is None


def test_not_contains_single_and_list():
    j = judge(kind="not_contains", value=["internal note", "password"])
    assert run_judge(j, {"output": "fine answer"}).score == 1.0
    hit = run_judge(j, {"output": "an Internal Note leaked"})
    assert hit.score == 0.0 and "internal note" in hit.reason
    assert run_judge(j, {"output": None}).score == 1.0


def test_regex_exact_and_similarity():
    rx = judge(kind="regex", pattern=r"\$\d+\.\d{2}")
    assert run_judge(rx, {"output": "pay $3.50"}).score == 1.0
    assert run_judge(rx, {"output": "pay 3"}).score == 0.0
    ex = judge(kind="exact")
    assert run_judge(ex, {"output": "  yes \n"}, expected="YES").score == 1.0
    assert run_judge(ex, {"output": "yes please"}, expected="yes").score == 0.0
    sim = judge(kind="similarity")
    assert run_judge(sim, {"output": "refund approved"}, expected="refund approved").score == 1
    assert 0 < run_judge(sim, {"output": "refund of $42.00 approved"},
                         expected="$42.00 refund").score < 1


def test_token_f1_values():
    assert token_f1("a b c", "a b c") == 1.0
    assert token_f1("", "") == 1.0 and token_f1("a", "") == 0.0
    assert token_f1("a b", "a c") == pytest.approx(0.5)


def test_latency_and_steps_give_partial_credit():
    lat = judge(kind="max_latency_ms", value=1000)
    assert run_judge(lat, {"latencyMs": 800}).score == 1.0
    assert run_judge(lat, {"latencyMs": 2000}).score == 0.5
    assert run_judge(lat, {}).score is None
    steps = judge(kind="max_steps", value=2)
    assert run_judge(steps, {"steps": 4}).score == 0.5


def test_llm_judge_without_endpoint_cannot_score():
    j = judge(kind="llm")
    verdict = run_judge(j, {"output": "x"}, llm=None)
    assert verdict.score is None and "no llm endpoint" in verdict.reason


@pytest.mark.parametrize("raw, needle", [
    ({"id": "j", "kind": "nope"}, "kind must be"),
    ({"kind": "contains"}, "id"),
    ({"id": "j", "kind": "regex", "pattern": "("}, "invalid regex"),
    ({"id": "j", "kind": "not_contains"}, "needs 'value'"),
    ({"id": "j", "kind": "max_steps", "value": 0}, "positive number"),
    ({"id": "j", "kind": "contains", "colour": 1}, "unknown key"),
    ("j", "mapping"),
])
def test_invalid_judges(raw, needle):
    with pytest.raises(JudgeConfigError, match=needle):
        validate_judge(raw)


def test_item_passes_at_mean_of_point_seven():
    judges = [judge(kind="contains", metric="a"), judge(kind="max_steps", value=7, metric="b")]
    # a = 1.0, b = 7/17 ≈ 0.41 -> mean 0.706 passes; b = 7/18 -> mean 0.694 fails
    ok = score_session(judges, {"output": "yes", "steps": 17}, item_input="q", expected="yes",
                       llm=None)
    assert ok["passed"] is True and set(ok["scores"]) == {"a", "b"}
    no = score_session(judges, {"output": "yes", "steps": 18}, item_input="q", expected="yes",
                       llm=None)
    assert no["passed"] is False
    none = score_session([judge(kind="contains")], {"output": "x"}, item_input="q",
                         expected=None, llm=None)
    assert none["passed"] is None and "no judge could score" in none["error"]


def test_llm_judge_calls_an_openai_compatible_endpoint():
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    seen = {}

    class Fake(BaseHTTPRequestHandler):
        def log_message(self, *args):
            return

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.update(path=self.path, body=body)
            reply = json.dumps({"choices": [{"message": {"content": "Score: 0.8"}}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

    server = HTTPServer(("127.0.0.1", 0), Fake)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        llm = {"base_url": f"http://127.0.0.1:{server.server_address[1]}/v1", "model": "m"}
        verdict = run_judge(judge(kind="llm", metric="helpfulness"), {"output": "an answer"},
                            item_input="a question", expected="be helpful", llm=llm)
        assert verdict.score == 0.8 and verdict.metric == "helpfulness"
        assert seen["path"] == "/v1/chat/completions" and seen["body"]["model"] == "m"
        assert "an answer" in seen["body"]["messages"][1]["content"]
        dead = {"base_url": "http://127.0.0.1:9/v1"}
        failed = run_judge(judge(kind="llm"), {"output": "x"}, llm=dead)
        assert failed.score is None and "llm judge failed" in failed.reason
    finally:
        server.shutdown()
        server.server_close()
