"""The upload form and the leaderboard page in a real browser (issue 32):
headless Chromium driven by Selenium, as tests/test_html_browser.py drives it,
against a real ``shrec-score serve``.  A broken run shows the check's
file:line error next to the form; a good run appears on ``/`` once scored;
a screenshot of each page is saved under the test's temporary folder."""

from __future__ import annotations

import base64
import re

import pytest

from .test_html_browser import chromium
from .test_server_kit import Served, add_team, tiny_run, write_contest, zip_of

pytest.importorskip("starlette", reason="the server extra is not installed")
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium (test extra) drives the browser")
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


@pytest.fixture
def browser(tmp_path):
    driver = chromium(str(tmp_path / "profile"))
    yield driver
    driver.quit()


def _shot(driver, path) -> None:
    path.write_bytes(base64.b64decode(driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png"})["data"]))
    assert path.read_bytes().startswith(b"\x89PNG")


def _submit(driver, url: str, archive: str, token: str | None, name: str) -> None:
    driver.get(url + "/submit")
    if token is not None:
        driver.find_element(By.NAME, "token").send_keys(token)
    driver.find_element(By.NAME, "name").send_keys(name)
    driver.find_element(By.NAME, "file").send_keys(archive)
    button = driver.find_element(By.CSS_SELECTOR, "button[type=submit]")
    button.click()
    WebDriverWait(driver, 60).until(lambda _: _replaced(button))  # the answer's page has replaced the form


def _replaced(element) -> bool:
    """True once ``element`` has left the page.  selenium's staleness_of knows one way to say so; chromium says
    another while the old document is being replaced ("Node with given id does not belong to the document", a
    WebDriverException), which failed the test now and then (the race: the check lands mid-navigation)."""
    try:
        element.is_enabled()
    except StaleElementReferenceException:
        return True
    except WebDriverException as exc:
        if "does not belong to the document" in str(exc):
            return True
        raise
    return False


def test_the_form_shows_the_checks_error_and_a_good_run_reaches_the_leaderboard(browser, tmp_path):
    contest = write_contest(tmp_path)
    token = add_team(contest, "team<b>")  # not a name add-team takes: the pages must escape what the store holds
    server = Served(contest).start()
    try:
        bad, good = tmp_path / "bad.zip", tmp_path / "good.zip"
        bad.write_bytes(zip_of(tiny_run(good=False), top="mine"))
        good.write_bytes(zip_of(tiny_run(), top="mine"))
        _submit(browser, server.url, str(bad), token, "broken")
        errors = browser.find_element(By.ID, "errors").text
        assert "mine/2.txt:3: distance 'far' is not a number" in errors
        _shot(browser, tmp_path / "submit-error.png")
        _submit(browser, server.url, str(good), None, "fine")  # the session keeps the team: no token asked again
        receipt = browser.find_element(By.ID, "receipt").text
        assert "team<b>-fine" in receipt and re.search(r"[0-9a-f]{64}", receipt)
        server.wait(lambda rows: rows and rows[0]["status"] == "scored", what="the run scored")
        browser.get(server.url + "/")
        cells = [c.text for c in browser.find_elements(By.CSS_SELECTOR, "table.leaderboard tbody tr > *")]
        assert cells == ["1", "team<b>-fine", "6", "1.0000", "1.0000", "1.0000"]  # rank, run, queries, NN, FT, AP: a perfect run
        # no CSP violation nor any other error (the form's answers carry the API's statuses, 422 for the broken run)
        assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE" and not (e["source"] == "network" and "/submit - " in e["message"])] == []
        assert browser.execute_script("return getComputedStyle(document.body).fontFamily").startswith("system-ui")
        _shot(browser, tmp_path / "leaderboard.png")
    finally:
        server.kill()
