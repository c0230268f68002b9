"""Errors in each door's terms: the API's advice names the flags on the CLI and the inputs in
the CI step (worded from the settings' name table, no rewording); "How to fix" bullets keep
their code spans and escape the rest."""

from __future__ import annotations

from neens_action.api.http_util import non_json_error, status_hint
from neens_action.api.transport import Transport
from neens_action.errors import NeensApiError
from neens_action.report.build.eval import error_kind
from neens_action.report.render.md_parts import hint
from neens_action.settings.names import CI, speaking


def _no_base_url() -> str:
    try:
        Transport("", "k", None)
    except NeensApiError as exc:
        return str(exc)
    raise AssertionError("an empty base URL was accepted")


def test_api_advice_names_flags_on_the_cli_and_inputs_in_ci() -> None:
    assert status_hint(401) == "check --api-key / NEENS_API_KEY: a nk_live_… project key"
    assert "is --base-url the Neens API origin?" in str(non_json_error("GET", "/x", 200, "t/h"))
    assert _no_base_url() == "no Neens base URL: pass --base-url or set NEENS_BASE_URL"
    with speaking(CI):
        assert status_hint(401) == "check the api-key input: a nk_live_… project key"
        assert ("is the base-url input the Neens API origin?"
                in str(non_json_error("GET", "/x", 200, "text/html")))
        assert _no_base_url() == ("no Neens base URL: set the base-url input (or the "
                                  "NEENS_BASE_URL variable)")
    assert status_hint(401).startswith("check --api-key")  # the CLI's again after the block


def test_report_hints_name_the_door_s_setting() -> None:
    assert error_kind("HTTP 401 Unauthorized")[1] == [
        "Check the API key (`--api-key` or `NEENS_API_KEY`): it must be a `nk_live_…` "
        "project key of this Neens."]
    with speaking(CI):
        assert error_kind("HTTP 401 Unauthorized")[1] == [
            "Check the API key (the `api-key` input or `NEENS_API_KEY`): it must be a "
            "`nk_live_…` project key of this Neens."]
        assert error_kind("timed out")[1] == [
            "Re-run the job; raise the `poll-timeout` input when scoring is slow."]


def test_hints_keep_code_spans_and_escape_the_rest() -> None:
    assert hint("Check the `api-key` input (or `NEENS_API_KEY`).") == \
        "Check the `api-key` input (or `NEENS_API_KEY`)."
    assert hint("- a <b>|@bob</b> `x`") == "\\- a &lt;b&gt;\\|@\u200bbob&lt;/b&gt; `x`"
