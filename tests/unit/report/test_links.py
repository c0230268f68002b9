"""The ``ui-url`` template: its variables, what it refuses, and the links it makes."""

from __future__ import annotations

import pytest

from neens_action.errors import UsageError
from neens_action.report.links import attach, check_ui_url, item_link, ui_link
from neens_action.report.model import ItemVerdict, Report


def _report() -> Report:
    items = [ItemVerdict("dvi_1", "q", "fail"), ItemVerdict("it_<b>|x", "q", "fail"),
             ItemVerdict("dvi_2", "q", "pass")]
    return Report(kind="eval", title="t", verdict="blocked", exit_code=1, headline="h",
                  run_id="ppr_1", items=items)


@pytest.mark.parametrize(("template", "run", "item"), [
    ("https://app.example/runs/{run_id}", "https://app.example/runs/ppr_1", ""),
    ("https://app.example/runs/{run_id}?item={item_id}", "https://app.example/runs/ppr_1",
     "https://app.example/runs/ppr_1?item=dvi_1"),
    ("https://app.example/runs/{run_id}?tab=items&item={item_id}&x=1",
     "https://app.example/runs/ppr_1?tab=items&x=1",
     "https://app.example/runs/ppr_1?tab=items&item=dvi_1&x=1"),
    ("https://app.example/runs/{run_id}#item-{item_id}", "https://app.example/runs/ppr_1",
     "https://app.example/runs/ppr_1#item-dvi_1"),
])
def test_run_and_item_pages_from_the_template(template: str, run: str, item: str) -> None:
    assert check_ui_url(template) == template
    assert ui_link(template, "ppr_1") == run
    assert item_link(template, "ppr_1", "dvi_1") == item


@pytest.mark.parametrize(("template", "says"), [
    ("https://app.example/runs/", "must contain {run_id}"),
    ("https://app.example/runs/{run}", "not {run}"),
    ("javascript:alert(1)//{run_id}", "http(s) URL template"),
    ("https://app.example/runs/{run_id} x", "http(s) URL template"),
    ("https://app.example/runs/{run_id}/items/{item_id}", "query or the fragment"),
    ("https://app.example/x#{run_id}-{item_id}", "query or the fragment"),
])
def test_bad_templates_are_refused_with_what_to_fix(template: str, says: str) -> None:
    with pytest.raises(UsageError) as exc:
        check_ui_url(template)
    assert says in str(exc.value) and str(exc.value).startswith("--ui-url")
    assert ui_link(template, "ppr_1") == "" and item_link(template, "ppr_1", "i") == ""


def test_ids_from_the_server_never_shape_a_link() -> None:
    assert ui_link("https://app.example/runs/{run_id}", "ppr_1/../../x") == ""
    assert item_link("https://app.example/r/{run_id}?i={item_id}", "ppr_1", "a b") == ""
    assert item_link("https://app.example/r/{run_id}?i={item_id}", "ppr_1", "<b>") == ""


def test_attach_links_items_and_the_setting_wins_over_the_variable() -> None:
    env = {"NEENS_UI_URL": "https://env.example/runs/{run_id}?item={item_id}"}
    report = attach(_report(), environ=env, baseline_run_id="ppr_0")
    assert report.run_url == "https://env.example/runs/ppr_1"
    assert report.links["baseline"] == "https://env.example/runs/ppr_0"
    assert [i.link for i in report.items] == [
        "https://env.example/runs/ppr_1?item=dvi_1", "", "https://env.example/runs/ppr_1?item=dvi_2"]
    report = attach(_report(), ui_url="https://flag.example/r/{run_id}", environ=env)
    assert report.run_url == "https://flag.example/r/ppr_1"
    assert all(i.link == "" for i in report.items)  # no {item_id}: items are not linked
    assert attach(_report(), environ={}).run_url == ""  # no template: no link at all
