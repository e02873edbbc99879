"""The web view in a real headless Chromium (Debian's, driven by Selenium through its matching
chromedriver): sign in, send a message, open the answer's decision, roll back a canon entry.

The browser comes from the system's package manager (`scripts/install-browser.sh`, which
`make test` runs); nothing is downloaded at run time. Without it these tests fail, saying how
to install it — they never skip. Screenshots are saved in the test's temporary directory and,
when ``SERVE_TEST_ARTEFACTS`` names a directory, there too.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.server.conftest import Served
from tests.server.support import WAIT_S, create_key

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
_ARGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         "--disable-dev-shm-usage")


@pytest.fixture(scope="module")
def chrome() -> Iterator[object]:
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.exists()]
    if missing:
        pytest.fail(
            f"no browser for the web view's tests: {', '.join(missing)} missing. Run "
            "`make browser` (scripts/install-browser.sh installs Debian's chromium and "
            "chromium-driver with apt-get) and test again", pytrace=False,
        )
    os.environ["SE_OFFLINE"] = "true"  # Selenium Manager must never fetch a driver
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in _ARGS:
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.set_window_size(1280, 1000)
    driver.implicitly_wait(WAIT_S)  # waits for an element to appear: an event, not a pace
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def shots(tmp_path: Path) -> Iterator[object]:
    """Saves a screenshot of the page as a test artefact; returns its path."""
    wanted = os.environ.get("SERVE_TEST_ARTEFACTS")

    def shoot(driver: object, name: str) -> Path:
        path = tmp_path / f"{name}.png"
        assert driver.save_screenshot(str(path))  # type: ignore[attr-defined]
        if wanted:
            Path(wanted).mkdir(parents=True, exist_ok=True)
            shutil.copy(path, Path(wanted) / path.name)
        return path

    yield shoot


def _css(driver: object, selector: str) -> object:
    return driver.find_element("css selector", selector)  # type: ignore[attr-defined]


def _all(driver: object, selector: str) -> list[object]:
    return driver.find_elements("css selector", selector)  # type: ignore[attr-defined, no-any-return]


def _go(driver: object, element: object) -> None:
    """Click `element` and wait until the browser has left the page it was on."""
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.wait import WebDriverWait

    page = _css(driver, "html")
    element.click()  # type: ignore[attr-defined]
    wait = WebDriverWait(driver, WAIT_S)  # type: ignore[arg-type]
    wait.until(_left(expected_conditions.staleness_of(page)))
    # The new page whole, not its first rows: a partly parsed table would be read short.
    wait.until(lambda d: d.execute_script("return document.readyState") == "complete")


def _left(stale: Any) -> Any:
    """`stale` (Selenium's staleness check), asked again when Chrome, asked about the old page
    while it is being torn down, answers "Node with given id does not belong to the document"
    instead of saying the element is stale (a race a fresh clone's run met once)."""
    from selenium.common.exceptions import WebDriverException

    def check(driver: object) -> bool:
        try:
            return bool(stale(driver))
        except WebDriverException as exc:
            if "does not belong to the document" in str(exc):
                return False  # the old page is going: look again
            raise

    return check


def _send(driver: object, text: str) -> None:
    box = _css(driver, "textarea#message")
    box.send_keys(text)  # type: ignore[attr-defined]
    _go(driver, _css(driver, "form.send button"))


def test_sign_in_send_open_the_decision_and_roll_back_canon(
    served: Served, chrome: object, shots: object
) -> None:
    driver = chrome
    key = create_key(served.home, "erin")
    driver.delete_all_cookies()  # type: ignore[attr-defined]
    driver.get(f"{served.server.base_url}/login")  # type: ignore[attr-defined]
    _css(driver, "input#key").send_keys(key)  # type: ignore[attr-defined]
    _go(driver, _css(driver, "form button"))
    assert _css(driver, "h1").text == "Conversation"  # type: ignore[attr-defined]
    assert _css(driver, ".who").text == "RESIDENT:erin"  # type: ignore[attr-defined]

    _send(driver, "Explain how binary search works")
    turn = _css(driver, "li.turn:last-child")
    assert "binary search" in turn.text  # type: ignore[attr-defined]
    shots(driver, "conversation")  # type: ignore[operator]
    _go(driver, turn.find_element("css selector", "a.why"))  # type: ignore[attr-defined]

    assert _css(driver, "h1").text.startswith("Why turn 1")  # type: ignore[attr-defined]
    arbitration = _css(driver, "#arbitration").text  # type: ignore[attr-defined]
    assert "switch" in arbitration and "score 1.00" in arbitration and "band preempt" in arbitration
    assert "sensemaking" in _css(driver, "#stance .stance").text  # type: ignore[attr-defined]
    assert _css(driver, "#stance .allowed").text == "respond"  # type: ignore[attr-defined]
    assert "open_loop" in _css(driver, "#context").text  # type: ignore[attr-defined]
    assert "llm_call" in _css(driver, "#work-orders").text  # type: ignore[attr-defined]
    assert _all(driver, "#explanation th")
    shots(driver, "decision")  # type: ignore[operator]

    driver.get(f"{served.server.base_url}/")  # type: ignore[attr-defined]
    _send(driver, "Remember that my locker code is 4512")
    _send(driver, "Remember that my locker code is 7788")
    _go(driver, _css(driver, "a[href='/turns/3']"))
    writes = _css(driver, "#writes").text  # type: ignore[attr-defined]
    assert "fact.my-locker-code" in writes and "approved" in writes

    _go(driver, _css(driver, "nav a[href='/canon']"))
    versions = _all(driver, "section.canon tr.version")
    assert [v.text.split()[0] for v in versions] == ["v1", "v2"]  # type: ignore[attr-defined]
    assert "7788" in versions[1].text and "current" in versions[1].text  # type: ignore[attr-defined]
    _go(driver, versions[0].find_element("css selector", "button"))  # type: ignore[attr-defined]

    versions = _all(driver, "section.canon tr.version")
    assert len(versions) == 3
    latest = versions[2].text  # type: ignore[attr-defined]
    assert "v3 (restores v1)" in latest and "4512" in latest and "serve:erin" in latest
    assert "@v3" in _css(driver, ".citation").text  # type: ignore[attr-defined]
    shots(driver, "canon-rolled-back")  # type: ignore[operator]

    _go(driver, _css(driver, "nav a[href='/ledger']"))
    assert "Every ledger verifies" in _css(driver, ".verdict").text  # type: ignore[attr-defined]
    _go(driver, _css(driver, "nav a[href='/problems']"))
    assert "binary search" in _css(driver, "table.rows").text  # type: ignore[attr-defined]


def test_the_pages_fit_a_phone_width_window(served: Served, chrome: object, shots: object) -> None:
    driver = chrome
    driver.delete_all_cookies()  # type: ignore[attr-defined]
    driver.get(f"{served.server.base_url}/login")  # type: ignore[attr-defined]
    _css(driver, "input#key").send_keys(served.alice)  # type: ignore[attr-defined]
    _go(driver, _css(driver, "form button"))
    _send(driver, "Explain how a hash map resolves collisions when two keys share a bucket")
    driver.set_window_size(390, 844)  # type: ignore[attr-defined]
    try:
        for path in ("/", "/turns/1", "/canon", "/problems"):
            driver.get(f"{served.server.base_url}{path}")  # type: ignore[attr-defined]
            assert _css(driver, "h1")
            overflow = driver.execute_script(  # type: ignore[attr-defined]
                "return document.documentElement.scrollWidth - window.innerWidth"
            )
            assert overflow <= 0, f"{path} is {overflow}px wider than a phone"
        driver.get(f"{served.server.base_url}/")  # type: ignore[attr-defined]
        shots(driver, "conversation-phone")  # type: ignore[operator]
    finally:
        driver.set_window_size(1280, 1000)  # type: ignore[attr-defined]
