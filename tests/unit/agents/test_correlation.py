"""OTEL_RESOURCE_ATTRIBUTES merge / escaping and the per-item environment (spec 6.1, 6.2)."""

from __future__ import annotations

from neens_action.agents.correlation import (
    ItemEnv,
    SweepTag,
    item_env,
    merge_resource_attributes,
    otlp_warning,
    parse_resource_attributes,
    sweep_context,
)

RUN = [("neens.eval_run_id", "ppr_1"), ("neens.dataset_item_id", "it 1"),
       ("neens.version_label", "v2,rc1")]


def test_spec_example():
    merged = merge_resource_attributes("service.name=my-agent,deployment.environment=ci", RUN)
    assert merged == ("service.name=my-agent,deployment.environment=ci,neens.eval_run_id=ppr_1,"
                      "neens.dataset_item_id=it%201,neens.version_label=v2%2Crc1")


def test_existing_injected_key_replaced_in_place():
    merged = merge_resource_attributes(
        "neens.version_label=old, service.name = svc ,neens.version_label=dup", RUN)
    assert merged == ("neens.version_label=v2%2Crc1,service.name=svc,neens.eval_run_id=ppr_1,"
                      "neens.dataset_item_id=it%201")


def test_user_values_encoded_and_merge_is_stable():
    once = merge_resource_attributes("team=a%2Cb,url=http://x:1/p q", RUN)
    assert once.startswith("team=a%2Cb,url=http%3A%2F%2Fx%3A1%2Fp%20q,")
    assert merge_resource_attributes(once, RUN) == once


def test_everything_outside_unreserved_is_escaped():
    merged = merge_resource_attributes("", [("k", "a-b.c_d~e f=g%h/é")])
    assert merged == "k=a-b.c_d~e%20f%3Dg%25h%2F%C3%A9"


def test_parse_drops_junk_segments():
    assert parse_resource_attributes(" ,=x,novalue,a=1,, b = 2 ,c=%20") == [
        ("a", "1"), ("b", "2"), ("c", " ")]
    assert parse_resource_attributes(None) == []


def test_item_env_run():
    base = {"PATH": "/bin", "OTEL_RESOURCE_ATTRIBUTES": "service.name=svc",
            "NEENS_EVAL_MODEL": "keep-me"}
    env = item_env(run_id="ppr_1", item_id="it_1", version_label="v1",
                   item_input="Refund €5?", base=base)
    assert env["PATH"] == "/bin"
    assert env["NEENS_EVAL_RUN_ID"] == "ppr_1"
    assert env["NEENS_DATASET_ITEM_ID"] == "it_1"
    assert env["NEENS_VERSION_LABEL"] == "v1"
    assert env["NEENS_ITEM_INPUT"] == "Refund €5?"
    assert env["NEENS_EVAL_MODEL"] == "keep-me"  # passes through outside sweeps
    assert "NEENS_SWEEP_ID" not in env
    assert env["OTEL_RESOURCE_ATTRIBUTES"] == (
        "service.name=svc,neens.eval_run_id=ppr_1,neens.dataset_item_id=it_1,"
        "neens.version_label=v1")
    assert base["OTEL_RESOURCE_ATTRIBUTES"] == "service.name=svc"  # base untouched


def test_item_env_sweep_tag_and_mapping():
    tag = SweepTag(sweep_id="msw-1", arm="haiku", rep=2, model="claude-haiku")
    env = item_env(run_id="r", item_id="i", version_label="v", item_input=None, sweep=tag,
                   base={})
    assert env["NEENS_ITEM_INPUT"] == ""
    assert (env["NEENS_SWEEP_ID"], env["NEENS_SWEEP_ARM"], env["NEENS_SWEEP_REP"],
            env["NEENS_EVAL_MODEL"]) == ("msw-1", "haiku", "2", "claude-haiku")
    assert env["OTEL_RESOURCE_ATTRIBUTES"].endswith(
        "neens.sweep_id=msw-1,neens.sweep_arm=haiku,neens.sweep_rep=2")
    env2 = item_env(run_id="r", item_id="i", version_label="v", item_input="x", base={},
                    sweep={"sweepId": "msw-1", "arm": "haiku", "rep": 2, "model": "claude-haiku"})
    assert env2 == {**env, "NEENS_ITEM_INPUT": "x"}


def test_item_env_nul_and_huge_input():
    env = item_env(run_id="r", item_id="i", version_label="v", item_input="a\x00b", base={})
    assert env["NEENS_ITEM_INPUT"] == "ab"
    big = item_env(run_id="r", item_id="i", version_label="v", item_input="x" * 200_000,
                   base={"NEENS_ITEM_INPUT": "stale"})
    assert "NEENS_ITEM_INPUT" not in big  # stdin still carries it


def test_sweep_context():
    assert sweep_context({}) is None
    assert sweep_context({"NEENS_SWEEP_ID": "s", "NEENS_SWEEP_ARM": "a", "NEENS_SWEEP_REP": "3",
                          "NEENS_EVAL_MODEL": ""}) == {
        "sweepId": "s", "arm": "a", "rep": 3, "model": None}


def test_otlp_warning_says_what_to_set():
    msg = otlp_warning({}, "http://127.0.0.1:8787/")
    assert "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:8787" in msg
    assert "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://127.0.0.1:8787/v1/traces" in msg
    assert otlp_warning({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://x/v1/traces"}, "x") is None
    assert otlp_warning({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, "x") is None


def _merged_by_hand(existing: str | None, item_id: str) -> str:
    return merge_resource_attributes(existing, [
        ("neens.eval_run_id", "r"), ("neens.dataset_item_id", item_id),
        ("neens.version_label", "v")])


def test_item_env_for_many_items_equals_the_merge_done_per_item(monkeypatch):
    ids = ["it_1", "a,b=c", "100% ünïcode id", " ", "neensitem", "%2C"]
    for existing in [None, "", "service.name=svc", "neens.dataset_item_id=old,x=1",
                     "x=1,neens.dataset_item_id=a,neens.dataset_item_id=b,y=%2C"]:
        base = {} if existing is None else {"OTEL_RESOURCE_ATTRIBUTES": existing}
        env_of = ItemEnv(run_id="r", version_label="v", base=base)
        assert env_of.around is not None
        for item_id in ids:
            env = env_of(item_id, "prompt")
            assert env["OTEL_RESOURCE_ATTRIBUTES"] == _merged_by_hand(existing, item_id)
            assert env["NEENS_DATASET_ITEM_ID"] == item_id
            assert env == item_env(run_id="r", item_id=item_id, version_label="v",
                                   item_input="prompt", base=base)
    # The user's attributes contain the marker: every item is merged on its own instead.
    monkeypatch.setattr("secrets.token_hex", lambda n: "feedface")
    existing = "note=neensitemfeedface"
    env_of = ItemEnv(run_id="r", version_label="v",
                     base={"OTEL_RESOURCE_ATTRIBUTES": existing})
    assert env_of.around is None
    assert env_of("it_9", None)["OTEL_RESOURCE_ATTRIBUTES"] == _merged_by_hand(existing, "it_9")


def test_the_agent_exports_over_http_protobuf_unless_a_protocol_is_set() -> None:
    from neens_action.agents.correlation import ItemEnv, otlp_protocol

    env = ItemEnv(run_id="r", version_label="v", base={})("it_1", "hi")
    assert env["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"] == "http/protobuf"
    for var in ("OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"):
        kept = ItemEnv(run_id="r", version_label="v", base={var: "grpc"})("it_1", "hi")
        assert kept[var] == "grpc" and otlp_protocol(kept) == "grpc"
        if var == "OTEL_EXPORTER_OTLP_PROTOCOL":  # nothing added beside the user's own
            assert "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL" not in kept
    assert otlp_protocol({}) == "http/protobuf"
    assert otlp_protocol({"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json",
                          "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}) == "http/json"
