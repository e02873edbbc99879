"""The web view over HTTP: sign-in and out, cookie flags, CSRF, escaping of untrusted text, and
records put into words for a person."""

from __future__ import annotations

import html
import re
import subprocess
from pathlib import Path

import httpx
import pytest
from tests.server.conftest import Served
from tests.server.support import (
    HRM,
    WAIT_S,
    ServerProcess,
    clean_env,
    create_key,
    ledger_sizes,
    post_chat,
    turn_records,
)

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


def page_text(page: str) -> str:
    """A page's words as a person reads them (tags gone, entities decoded)."""
    page = re.sub(r"<head>.*?</head>|<header.*?</header>", "", page, flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page))).strip()


def test_signing_out_ends_the_session_for_every_holder_of_its_cookie(served: Served) -> None:
    with browser(served) as http:
        csrf = sign_in(http, served.alice)
        cookie = http.cookies["hrm_session"]
        signed_out = http.post("/logout", data={"csrf": csrf})
    assert (signed_out.status_code, signed_out.headers["location"]) == (303, "/login")
    # The old cookie, kept by someone (another tab, a copied header), no longer works.
    with browser(served) as replay:
        replay.cookies.set("hrm_session", cookie)
        for path in ("/", "/canon"):
            refused = replay.get(path)
            assert (refused.status_code, refused.headers["location"]) == (303, "/login")
        forged = replay.post("/chat", data={"csrf": csrf, "message": "still me?"})
    assert forged.status_code == 303 and forged.headers["location"] == "/login"
    with browser(served) as again:  # signing in again gives a new, working session
        sign_in(again, served.alice)
        assert again.get("/canon").status_code == 200


def test_a_message_over_the_forms_limit_is_explained_on_the_page(served: Served) -> None:
    with browser(served) as http:
        csrf = sign_in(http, served.alice)
        before = turn_records(served.home, "RESIDENT:alice")
        response = http.post("/chat", data={"csrf": csrf, "message": "x" * 70_000})
    assert response.status_code == 413
    words = page_text(response.text)
    assert "This message is over 64 KiB" in words and "it was not sent" in words
    assert "send a shorter conversation" not in words  # the API's words, not a person's
    assert 'action="/chat"' in response.text  # the conversation page, its box to try again
    assert turn_records(served.home, "RESIDENT:alice") == before


def test_a_forgotten_canon_entry_shows_as_forgotten_not_as_current(served: Served) -> None:
    key = create_key(served.home, "fran")
    with served.server.client(key) as api:
        for text in ("I prefer answers in French", "Forget what I said about French"):
            assert api.post("/v1/chat/completions", json={
                "model": "hrm", "messages": [{"role": "user", "content": text}]}).status_code == 200
        listed = api.get("/v1/hrm/canon").json()
        entry = api.get(f"/v1/hrm/canon/{listed[0]['key']}").json()
    assert [(e["status"], e["value"]["retracted"]) for e in listed] == [("forgotten", True)]
    assert entry["status"] == "forgotten"
    with browser(served) as http:
        sign_in(http, key)
        words = page_text(http.get("/canon").text)
    assert "{'retracted'" not in words and "retracted" not in words
    assert "v2 forgotten — you asked: “Forget what I said about French”" in words
    assert "current" not in words
    assert "v1 I prefer answers in French" in words and "Roll back to v1" in words


def test_the_decision_page_names_each_gate_and_where_its_context_came_from(served: Served) -> None:
    key = create_key(served.home, "gil")
    with served.server.client(key) as api:
        for text in ("Let's plan the v2 launch of our billing service",
                     "Let's focus on the billing migration script for the next 3 turns",
                     "Write the migration step for the billing invoices table"):
            assert api.post("/v1/chat/completions", json={
                "model": "hrm", "messages": [{"role": "user", "content": text}]}).status_code == 200
    with browser(served) as http:
        sign_in(http, key)
        second, third = http.get("/turns/2").text, http.get("/turns/3").text
    stance = re.search(r'<section id="stance">.*?</section>', second, re.S)
    assert stance is not None
    # The stance change went through a gate: the section itself names it, not only "In short".
    assert '<strong class="gate">framing</strong>' in stance.group(0)
    assert "The framing gate passed: the stance moved sensemaking → execution" in page_text(
        stance.group(0))
    context = re.search(r'<section id="context">.*?</section>', third, re.S)
    assert context is not None
    words = page_text(context.group(0))
    # The exchanges shown are named by their place, not by keys that read like turn numbers.
    assert "most recent exchange" in words and "2nd most recent exchange" in words
    assert ">turn-0<" not in context.group(0) and ">turn-1<" not in context.group(0)


def test_the_ledger_page_and_the_api_say_how_to_repair_a_damaged_ledger(tmp_path: Path) -> None:
    home = tmp_path / "home"
    key = create_key(home, "hank")
    with ServerProcess(home) as server:
        assert post_chat(server, key, "How do I set up log rotation?").status_code == 200
        assert server.stop() == 0
    ledger = home / "HO2/ledger/RESIDENT_hank/workorder.jsonl"
    lines = ledger.read_text().split("\n")
    at = next(n for n, line in enumerate(lines) if '"kind":"turn"' in line)
    lines[at] = lines[at].replace("log rotation", "LOG rotation")  # altered: its hash fails
    ledger.write_text("\n".join(lines))
    with ServerProcess(home) as server:
        broken = post_chat(server, key, "And for nginx logs?")
        with httpx.Client(base_url=server.base_url, follow_redirects=False, timeout=WAIT_S) as http:
            assert http.post("/login", data={"key": key}).status_code == 303
            words = page_text(http.get("/ledger").text)
        assert server.stop() == 0
    error = broken.json()["error"]
    assert broken.status_code == 500 and error["code"] == "ledger_corrupt"
    assert f"hrm ledger quarantine {ledger}" in error["message"]
    assert f"workorder.jsonl:{at + 1}" in error["message"]
    assert "{'line'" not in words
    assert f"Line {at + 1} (record {at + 1}): hash mismatch" in words
    assert "hrm ledger quarantine HO2/ledger/RESIDENT_hank/workorder.jsonl" in words


def test_no_auth_opens_the_web_view_as_admin_and_still_refuses_a_forged_form(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    with ServerProcess(home, "--no-auth") as server:
        with httpx.Client(base_url=server.base_url, follow_redirects=False,
                          timeout=WAIT_S) as http:
            page = http.get("/")  # no redirect to a sign-in page that has no key to ask for
            assert page.status_code == 200, page.headers.get("location")
            assert "ADMIN" in page.text and "Sign out" not in page.text
            assert http.get("/login").headers["location"] == "/"
            csrf = _CSRF.search(page.text)
            assert csrf is not None
            sent = http.post("/chat", data={"csrf": csrf.group(1), "message": "hello there"})
            assert sent.status_code == 303 and sent.headers["location"].startswith("/#turn-")
        # A form posted from another site carries no cookie (SameSite=Strict): refused.
        with httpx.Client(base_url=server.base_url, follow_redirects=False,
                          timeout=WAIT_S) as stranger:
            forged = stranger.post("/chat", data={"csrf": csrf.group(1), "message": "forged"})
            assert forged.status_code == 403
        assert server.stop() == 0
    assert [r["data"]["input"] for r in turn_records(home, "ADMIN")] == ["hello there"]
