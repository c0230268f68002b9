"""Errors in the CI step's terms: the API's CLI wording names the inputs; "How to fix"
bullets keep their code spans and escape the rest."""

from __future__ import annotations

from neens_action.outcome import Outcome
from neens_action.report.build.errors import in_input_terms, outcome_in_input_terms
from neens_action.report.render.md_parts import hint


def test_cli_flags_become_inputs() -> None:
    assert in_input_terms("HTTP 401 Unauthorized (check --api-key / NEENS_API_KEY: a key)") \
        == "HTTP 401 Unauthorized (check the api-key input: a key)"
    assert in_input_terms("returned a non-JSON response; is --base-url the Neens API origin?") \
        == "returned a non-JSON response; is the base-url input the Neens API origin?"
    assert in_input_terms("no Neens base URL: pass --base-url or set NEENS_BASE_URL") == (
        "no Neens base URL: set the base-url input (or the NEENS_BASE_URL variable)")
    # other flags (a resume command) are left alone
    assert in_input_terms("then neens eval run --run-id r --finish") == \
        "then neens eval run --run-id r --finish"


def test_outcome_error_and_warnings_are_reworded() -> None:
    o = Outcome(mode="run", error="HTTP 401 (check --api-key / NEENS_API_KEY)",
                warnings=["is --base-url right?"])
    assert outcome_in_input_terms(o) is o
    assert o.error == "HTTP 401 (check the api-key input)"
    assert o.warnings == ["is the base-url input right?"]


def test_hints_keep_code_spans_and_escape_the_rest() -> None:
    assert hint("Check the `api-key` input (or `NEENS_API_KEY`).") == \
        "Check the `api-key` input (or `NEENS_API_KEY`)."
    assert hint("- a <b>|@bob</b> `x`") == "\\- a &lt;b&gt;\\|@\u200bbob&lt;/b&gt; `x`"
