"""The web view over HTTP: sign-in, cookie flags, CSRF, and escaping of untrusted text."""

from __future__ import annotations

import re
import subprocess

import httpx
import pytest
from tests.server.conftest import Served
from tests.server.support import HRM, WAIT_S, clean_env, create_key, ledger_sizes, turn_records

_CSRF = re.compile(r'name="csrf" value="([0-9a-f]+)"')


def browser(served: Served) -> httpx.Client:
    return httpx.Client(base_url=served.server.base_url, follow_redirects=False, timeout=WAIT_S)


def sign_in(http: httpx.Client, key: str) -> str:
    """Sign in; the CSRF token of the session."""
    response = http.post("/login", data={"key": key})
    assert response.status_code == 303, response.text
    page = http.get("/")
    assert page.status_code == 200
    found = _CSRF.search(page.text)
    assert found is not None
    return found.group(1)


def test_pages_need_a_session_and_a_wrong_key_is_refused(served: Served) -> None:
    with browser(served) as http:
        for path in ("/", "/problems", "/canon", "/ledger", "/turns/1"):
            response = http.get(path)
            assert (response.status_code, response.headers["location"]) == (303, "/login")
        refused = http.post("/login", data={"key": "sk-hrm-nope-nope"})
    assert refused.status_code == 401
    assert "not valid" in refused.text
    assert "sk-hrm-nope-nope" not in refused.text


def test_the_session_cookie_is_httponly_and_samesite_strict(served: Served) -> None:
    with browser(served) as http:
        response = http.post("/login", data={"key": served.alice})
    cookie = response.headers["set-cookie"]
    assert cookie.startswith("hrm_session=")
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict")
    assert served.alice not in cookie


def test_a_form_without_the_sessions_csrf_token_is_refused_and_writes_nothing(served: Served) -> None:
    with browser(served) as http:
        sign_in(http, served.alice)
        before = ledger_sizes(served.home)
        forged = http.post("/chat", data={"message": "Remember that my pin is 1"})
        wrong = http.post("/chat", data={"message": "x", "csrf": "0" * 64})
        odd = http.post("/chat", data={"message": "x", "csrf": "é" * 64})
    assert forged.status_code == 403 and wrong.status_code == 403 and odd.status_code == 403
    assert "CSRF" in forged.text
    assert ledger_sizes(served.home) == before


def test_a_message_sent_from_the_page_is_a_turn_shown_with_its_decision_link(served: Served) -> None:
    with browser(served) as http:
        csrf = sign_in(http, served.bob)
        sent = http.post("/chat", data={"message": "Explain how a bloom filter works", "csrf": csrf})
        assert sent.status_code == 303
        turn = int(sent.headers["location"].rsplit("-", 1)[1])
        page = http.get("/").text
        decision = http.get(f"/turns/{turn}").text
    assert f'href="/turns/{turn}"' in page and "bloom filter" in page
    assert "Arbitration" in decision and "Work orders" in decision
    assert turn_records(served.home, "RESIDENT:bob")[-1]["data"]["turn"] == turn


def test_untrusted_text_is_escaped_everywhere_it_is_shown(served: Served) -> None:
    attack = "<script>alert('x')</script><img src=x onerror=alert(1)>"
    with browser(served) as http:
        csrf = sign_in(http, served.bob)
        sent = http.post("/chat", data={"message": f"Explain {attack} please", "csrf": csrf})
        turn = int(sent.headers["location"].rsplit("-", 1)[1])
        http.post("/chat", data={"message": f"Remember that my motto is {attack}", "csrf": csrf})
        pages = [http.get(p).text for p in ("/", f"/turns/{turn}", "/canon", "/problems")]
    for page in pages:
        assert "<script>alert" not in page and "<img src=x" not in page
    assert "&lt;script&gt;" in pages[0] and "&lt;script&gt;" in pages[2]


def test_a_revoked_key_ends_its_browser_session(served: Served) -> None:
    key = create_key(served.home, "dora")
    with browser(served) as http:
        sign_in(http, key)
        subprocess.run([*HRM, "serve", "keys", "revoke", "dora", "--home", str(served.home)],
                       check=True, capture_output=True, env=clean_env(served.home), timeout=WAIT_S)
        response = http.get("/")
    assert (response.status_code, response.headers["location"]) == (303, "/login")


@pytest.mark.parametrize("path", ["/", "/login", "/canon"])
def test_pages_are_readable_on_a_phone(served: Served, path: str) -> None:
    with browser(served) as http:
        sign_in(http, served.alice)
        page = http.get(path).text
        css = http.get("/static/style.css")
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in page
    assert css.status_code == 200 and "@media (max-width" in css.text
    assert "<script" not in page  # server-rendered: no script at all
