"""The page in a real browser: Playwright drives Debian's chromium against a real server.

Skipped with a visible reason when chromium or Playwright is missing, unless
REFEREE_REQUIRE_BROWSER=1 (CI) turns that into a failure. Screenshots go to
artifacts/screenshots/.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from web_support import StandInService

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
PHONE = {"width": 390, "height": 844}
LAPTOP = {"width": 1366, "height": 900}


def _browser_missing() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright is not installed (pip install playwright)"
    if not Path(CHROMIUM).exists():
        return f"chromium not found at {CHROMIUM} (apt install chromium)"
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    missing = _browser_missing()
    if missing:
        if os.environ.get("REFEREE_REQUIRE_BROWSER") == "1":
            pytest.fail(f"browser tests required (REFEREE_REQUIRE_BROWSER=1) but {missing}")
        pytest.skip(f"browser tests skipped: {missing}")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


class Target:
    """A running server: its base URL and the service behind it."""

    def __init__(self, base_url: str, service: StandInService) -> None:
        self.base_url = base_url
        self.service = service

    def state(self) -> dict[str, Any]:
        with urllib.request.urlopen(self.base_url + "/api/state", timeout=5) as r:
            return json.loads(r.read())

    def something_happens(self) -> None:
        self.service.place(12.0, 7.5)


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    from web.server import make_server

    service = StandInService(tmp_path_factory.mktemp("web") / "log.sqlite")
    service.command("new_match", {"game": "dition"})
    for x, y in [(5.0, 5.0), (6.2, 5.1), (10.0, 10.0), (5.5, 6.3)]:
        service.place(x, y)
    server = make_server(service, host="127.0.0.1", port=0)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    yield Target(f"http://127.0.0.1:{server.effective_port}", service)
    server.close()


@pytest.fixture
def page_errors() -> list[str]:
    return []


def open_page(browser: Any, target: Target, path: str, viewport: dict[str, int],
              errors: list[str]) -> Any:
    context = browser.new_context(viewport=viewport, device_scale_factor=2,
                                  is_mobile=viewport["width"] < 600,
                                  has_touch=viewport["width"] < 600)
    page = context.new_page()
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(target.base_url + path)
    return page


def wait_live(page: Any) -> None:
    page.wait_for_function("() => window.refereeState && "
                           "document.getElementById('status-link').textContent === 'live'",
                           timeout=15000)


def screenshot(page: Any, name: str) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def no_horizontal_scroll(page: Any) -> None:
    widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], f"page is {widths[0]} px wide in a {widths[1]} px viewport"


def test_page_loads_and_shows_the_referee(browser: Any, target: Target,
                                          page_errors: list[str]) -> None:
    page = open_page(browser, target, "/", LAPTOP, page_errors)
    wait_live(page)
    state = target.state()
    verdict = page.locator("#verdict-text")
    assert verdict.inner_text().strip() == state["instruction"]["text"]
    n_discs = len(state["position"].get("discs", []))
    if state["game"] == "dition":
        assert page.locator("#diagram .disc").count() == n_discs
    page.wait_for_selector("#camera:not([hidden])", timeout=10000)
    screenshot(page, "live_laptop")
    assert not page_errors
    page.context.close()


def test_verdict_updates_without_reload(browser: Any, target: Target,
                                        page_errors: list[str]) -> None:
    page = open_page(browser, target, "/", PHONE, page_errors)
    wait_live(page)
    page.evaluate("window.__sameDocument = true")
    before = page.evaluate("window.refereeState.move_number")
    target.something_happens()
    page.wait_for_function(f"() => window.refereeState.move_number !== {before}", timeout=20000)
    assert page.evaluate("window.__sameDocument") is True  # no reload happened
    now = target.state()
    page.wait_for_function(
        "t => document.getElementById('verdict-text').textContent === t",
        arg=now["instruction"]["text"], timeout=10000)
    assert not page_errors
    page.context.close()


def test_a_control_works(browser: Any, target: Target, page_errors: list[str]) -> None:
    page = open_page(browser, target, "/", PHONE, page_errors)
    wait_live(page)
    page.click("#pause-btn")
    page.wait_for_function("() => window.refereeState.status === 'paused'", timeout=10000)
    assert target.state()["status"] == "paused"
    assert page.locator("#pause-btn").inner_text() == "Resume"
    page.click("#pause-btn")
    page.wait_for_function("() => window.refereeState.status !== 'paused'", timeout=10000)
    assert target.state()["status"] != "paused"
    assert not page_errors
    page.context.close()


@pytest.mark.parametrize("path, name", [("/", "live"), ("/history", "history"),
                                        ("/calibrate", "calibrate")])
def test_layout_fits_a_phone(browser: Any, target: Target, page_errors: list[str],
                             path: str, name: str) -> None:
    page = open_page(browser, target, path, PHONE, page_errors)
    page.wait_for_load_state("networkidle") if path != "/" else wait_live(page)
    page.wait_for_timeout(500)
    no_horizontal_scroll(page)
    verdict_box = page.locator("main").bounding_box()
    assert verdict_box is not None and verdict_box["width"] <= PHONE["width"]
    screenshot(page, f"{name}_phone")
    assert not page_errors
    page.context.close()


def test_replay_steps_through_the_events(browser: Any, target: Target,
                                         page_errors: list[str]) -> None:
    match_id = target.state()["match_id"]
    page = open_page(browser, target, f"/replay/{match_id}", PHONE, page_errors)
    page.wait_for_selector("#replay-event-kind:has-text('Event')", timeout=10000)
    first = page.locator("#replay-event-text").inner_text()
    page.click("#step-next")
    page.wait_for_function("t => document.getElementById('replay-event-text').textContent !== t",
                           arg=first, timeout=5000)
    page.click("#step-last")
    no_horizontal_scroll(page)
    screenshot(page, "replay_phone")
    assert not page_errors
    page.context.close()
