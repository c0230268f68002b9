"""How API errors read: what is wrong and the fix first, the call only in the details."""

from __future__ import annotations

import pytest

from neens_action.api.client import NeensClient
from neens_action.errors import NeensApiError
from neens_action.settings.connection import Connection, make_client
from neens_action.settings.names import CI, SettingError, speaking
from tests.unit.api.client_support import KEY, make


def _error(fake, status: int, body: object, **kw) -> str:
    client, _ = make(fake, retries=0, **kw)
    fake.script = [(status, {}, body)]
    with pytest.raises(NeensApiError) as info:
        client.request("POST", "/preprod-evals", body={"name": "x"})
    return str(info.value)


def test_a_refused_key_leads_with_the_fix_and_keeps_the_call_last(fake) -> None:
    msg = _error(fake, 401, {"detail": "invalid API key"})
    assert msg == ("Neens refused the API key: check --api-key / NEENS_API_KEY: a nk_live_… "
                   "project key (HTTP 401 Unauthorized: invalid API key; POST /preprod-evals)")
    assert not msg.startswith("POST")


def test_the_ci_door_names_the_input(fake) -> None:
    with speaking(CI):
        msg = _error(fake, 401, {"detail": "invalid API key"})
    assert msg.startswith("Neens refused the API key: check the api-key input")


def test_a_status_without_detail_still_says_what_it_means(fake) -> None:
    msg = _error(fake, 503, "")
    assert msg == "Neens had a server error (HTTP 503 Service Unavailable; POST /preprod-evals)"


def test_a_transport_failure_names_where_it_tried(fake) -> None:
    client = NeensClient("http://127.0.0.1:9", KEY, retries=0, timeout=2.0)
    with pytest.raises(NeensApiError) as info:
        client.create_run({"name": "x"})
    assert str(info.value) == ("could not reach Neens at http://127.0.0.1:9: connection refused "
                               "(POST /preprod-evals)")


def test_a_404_through_a_base_url_with_a_path_says_use_the_origin(fake) -> None:
    client = NeensClient(fake.url + "/api", KEY, retries=0, timeout=5.0)
    fake.script = [(404, {}, {"detail": "Not Found"})]
    with pytest.raises(NeensApiError) as info:
        client.create_run({"name": "x"})
    origin = fake.url
    assert str(info.value).startswith(
        f"Neens found no such resource: --base-url has a path (/api): use the origin, e.g. "
        f"{origin} (HTTP 404")


@pytest.mark.parametrize("url", ["https://neens.example.com/api", "https://neens.example.com/api/",
                                 "https://neens.example.com/v1?x=1"])
def test_a_base_url_with_a_path_is_refused_before_any_request(url: str) -> None:
    with pytest.raises(SettingError) as info:
        Connection(base_url=url, api_key="k").check_connection()
    assert str(info.value).startswith("--base-url has a path (/")
    assert str(info.value).endswith("use the origin, e.g. https://neens.example.com")


def test_an_origin_with_a_trailing_slash_is_still_fine() -> None:
    conn = Connection(base_url="https://neens.example.com/", api_key="k").check_connection()
    assert conn.base_url == "https://neens.example.com"


@pytest.mark.parametrize("key", [None, "", "  "])
def test_no_key_is_refused_before_a_client_exists(fake, key: str | None) -> None:
    conn = Connection(base_url=fake.url, api_key=key)
    with pytest.raises(SettingError) as info:
        make_client(conn)
    assert str(info.value) == ("no Neens API key: pass --api-key or set NEENS_API_KEY "
                               "(a nk_live_… project key)")
    assert info.value.exit_code == 2 and fake.requests == []
    with speaking(CI):
        with pytest.raises(SettingError) as info:
            make_client(conn)
        assert str(info.value) == ("input api-key: no Neens API key: set the api-key input (or "
                                   "the NEENS_API_KEY variable) (a nk_live_… project key)")
