"""The results page in a real browser (issue 21): headless Chromium (Debian's
``chromium`` package) driven through ``chromedriver`` by Selenium.

``make test`` installs chromium and chromium-driver when running as root
(CI); elsewhere, without them, these tests skip and say why.  One browser
session for the module; the page is opened from ``file://``.  Values shown
by the page are checked against the CSV files the same scoring wrote beside
it; screenshots (desktop 1280 px and phone 390 px wide) and a PDF printout
are saved under the test's temporary folder.
"""

from __future__ import annotations

import base64
import os
import shutil
import tempfile

import pytest

from shrec_score.errors import visible
from shrec_score.html import to_html

from .html_pages import DATE, HOSTILE_RUNS, hostile_report, read_csv, sample06_out

pytestmark = pytest.mark.filterwarnings("ignore:Glyph .* missing from font")

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium (test extra) drives the browser")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import Select  # noqa: E402

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--hide-scrollbars", "--disable-dev-shm-usage",
]
A4_TEXT_WIDTH = 703  # 210 mm less two 12 mm margins, in CSS px (96 per inch)


def chromium(profile: str) -> webdriver.Chrome:
    """Headless Chromium with its profile in ``profile``, 1280 x 900, the console logged; skips without it."""
    if not (os.access(CHROMIUM, os.X_OK) and os.access(CHROMEDRIVER, os.X_OK)):
        pytest.skip("chromium and chromedriver are not installed (make test installs them when run as root: apt-get install chromium chromium-driver)")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    driver.set_window_size(1280, 900)
    return driver


@pytest.fixture(scope="module")
def browser():
    profile = tempfile.mkdtemp(prefix="shrec-chromium-")
    driver = chromium(profile)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    out = sample06_out(tmp_path_factory)
    return out, "file://" + os.path.join(out, "report", "index.html")


@pytest.fixture
def page(browser, sample):
    """The SHREC 2006 sample's page, freshly loaded at desktop width; no error on the console."""
    out, url = sample
    browser.set_window_size(1280, 900)
    browser.get(url)
    yield browser, out
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []


TABLE_TEXT = "return Array.from(document.querySelectorAll(arguments[0] + ' tbody tr')).map(tr => Array.from(tr.cells).map(c => c.textContent.trim()));"


def _rows(driver, selector):
    return driver.execute_script(TABLE_TEXT, selector)


def _header(driver, table_id, label):
    xpath = f"//table[@id='{table_id}']/thead//th[button[starts-with(normalize-space(.), '{label}')]]"
    return driver.find_element(By.XPATH, xpath)


def _num(text):
    return float(text.replace("\u2605", "").strip() or "nan")


def test_leaderboard_is_rendered_and_header_clicks_sort_it(page):
    driver, out = page
    per_run = read_csv(os.path.join(out, "per_run.csv"))
    rows = _rows(driver, "#leaderboard-table")
    assert [r[1] for r in rows] == [p["run"] for p in per_run]
    heads = driver.execute_script("return Array.from(document.querySelectorAll('#leaderboard-table thead th')).map(th => th.textContent.split(' ')[0])")
    col = heads.index("ADR")
    assert [r[col].replace("\u2605", "").strip() for r in rows] == [f"{float(p['ADR']):.4f}" for p in per_run]

    # FP_highly is lower-is-better: the first click sorts ascending (stable: ties keep the current order)
    th = _header(driver, "leaderboard-table", "FP_highly")
    th.find_element(By.TAG_NAME, "button").click()
    ascending = sorted(per_run, key=lambda p: float(p["FP_highly"]))
    assert [r[1] for r in _rows(driver, "#leaderboard-table")] == [p["run"] for p in ascending]
    assert th.get_attribute("aria-sort") == "ascending"
    # the second one, from the keyboard (Enter on the focused button), reverses it
    th.find_element(By.TAG_NAME, "button").send_keys(Keys.ENTER)
    descending = sorted(ascending, key=lambda p: -float(p["FP_highly"]))
    assert [r[1] for r in _rows(driver, "#leaderboard-table")] == [p["run"] for p in descending]
    assert th.get_attribute("aria-sort") == "descending"
    # NDCG@100 is higher-is-better: descending first; B2's and D1's are undefined (their lists stop
    # before rank 100): last, in the order they had
    assert [p["run"] for p in per_run if p["NDCG@100"] == ""] == ["B2", "D1"]
    th = _header(driver, "leaderboard-table", "NDCG@100")
    th.find_element(By.TAG_NAME, "button").click()
    expected = sorted(descending, key=lambda p: (p["NDCG@100"] == "", -float(p["NDCG@100"] or 0)))
    assert [p["run"] for p in expected[-2:]] == ["D1", "B2"]
    assert [r[1] for r in _rows(driver, "#leaderboard-table")] == [p["run"] for p in expected]
    # the run column sorts by name
    _header(driver, "leaderboard-table", "run").find_element(By.TAG_NAME, "button").click()
    assert [r[1] for r in _rows(driver, "#leaderboard-table")] == sorted(p["run"] for p in per_run)


def test_explorer_shows_the_chosen_run_and_measure(page):
    driver, out = page
    per_query = read_csv(os.path.join(out, "per_query.csv"))
    run, measure = "B2", "NDCG@50"
    Select(driver.find_element(By.ID, "pq-run")).select_by_visible_text(run)
    Select(driver.find_element(By.ID, "pq-measure")).select_by_visible_text(measure)
    expected = [(r["query"], r["class"], r[measure]) for r in per_query if r["run"] == run]
    rows = _rows(driver, "#pq-table")
    assert [(q, c) for q, c, _ in rows] == [(q, c) for q, c, _ in expected]
    assert sum(v == "" for _, _, v in expected) == 0
    for (q, _, shown), (_, _, value) in zip(rows, expected):
        assert abs(float(shown) - float(value)) <= 0.5e-4 + 1e-12, q  # shown with 4 decimals
    # filter by class
    cls = expected[3][1]
    Select(driver.find_element(By.ID, "pq-class")).select_by_visible_text(cls)
    assert [r[0] for r in _rows(driver, "#pq-table")] == [q for q, c, _ in expected if c == cls]
    assert driver.find_element(By.ID, "pq-status").text.startswith(f"{sum(c == cls for _, c, _ in expected)} of {len(expected)} queries shown")
    Select(driver.find_element(By.ID, "pq-class")).select_by_index(0)
    # sort by value: NDCG is higher-is-better, best first
    driver.find_element(By.XPATH, "//table[@id='pq-table']//th[@data-key='value']/button").click()
    shown = [float(r[2]) for r in _rows(driver, "#pq-table")]
    assert shown == sorted(shown, reverse=True) and len(shown) == len(expected)


def test_clicking_a_query_shows_every_run_side_by_side(page):
    driver, out = page
    per_query = read_csv(os.path.join(out, "per_query.csv"))
    runs = [p["run"] for p in read_csv(os.path.join(out, "per_run.csv"))]
    first = driver.find_element(By.CSS_SELECTOR, "#pq-table tbody td.q button")
    query = first.text
    first.click()
    detail = driver.find_element(By.ID, "pq-detail")
    assert detail.is_displayed()
    assert driver.find_element(By.ID, "pq-detail-h").text.startswith(f"Query {query} ")
    heads = driver.execute_script("return Array.from(document.querySelectorAll('#pq-detail-table thead th')).map(th => th.textContent)")
    rows = _rows(driver, "#pq-detail-table")
    assert [r[0] for r in rows] == runs
    values = {r["run"]: r for r in per_query if r["query"] == query}
    for row in rows:
        for label, cell in zip(heads[1:], row[1:]):
            want = values[row[0]][label]
            if want == "":
                assert cell == ""
            else:
                assert abs(_num(cell) - float(want)) <= 0.5e-4 + 1e-12, (row[0], label)


def test_screenshots_desktop_and_phone(page, tmp_path):
    driver, _ = page
    for name, width in (("desktop", 1280), ("phone", 390)):
        driver.set_window_size(width, 900)
        inner = driver.execute_script("return window.innerWidth")
        # the page never scrolls sideways: wide tables scroll inside their own box
        assert driver.execute_script("return document.documentElement.scrollWidth") <= inner
        boxes = driver.execute_script(
            "return Array.from(document.querySelectorAll('.scroll')).map(b => [b.clientWidth, b.scrollWidth, getComputedStyle(b).overflowX])"
        )
        assert all(client <= inner and overflow == "auto" for client, _, overflow in boxes)
        if name == "phone":  # the leaderboard is wider than a phone: it scrolls in its box
            assert boxes[0][1] > boxes[0][0]
        height = driver.execute_script("return document.documentElement.scrollHeight")
        shot = driver.execute_cdp_cmd(  # the whole page, as laid out at this window size
            "Page.captureScreenshot",
            {"format": "png", "captureBeyondViewport": True, "clip": {"x": 0, "y": 0, "width": inner, "height": min(height, 12000), "scale": 1}},
        )
        path = tmp_path / f"results-{name}.png"
        path.write_bytes(base64.b64decode(shot["data"]))
        assert path.read_bytes().startswith(b"\x89PNG") and path.stat().st_size > 10_000


def test_printing_fits_every_table_on_a4(page, tmp_path):
    driver, _ = page
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    try:
        driver.set_window_size(A4_TEXT_WIDTH + 40, 900)
        driver.execute_script("window.shrecFitTables()")  # what the beforeprint event runs
        widths = driver.execute_script(
            "return Array.from(document.querySelectorAll('.scroll > table')).filter(t => t.offsetParent)"
            ".map(t => [t.id || t.caption.textContent, t.getBoundingClientRect().width])"
        )
        assert widths and all(w <= A4_TEXT_WIDTH + 1 for _, w in widths), widths
        # the 44-column leaderboard prints as slices (rank, run and 8 columns), shrunk by 15% at most
        zooms = driver.execute_script(
            "return Array.from(document.querySelectorAll('#leaderboard .scroll > table')).filter(t => t.offsetParent).map(t => t.style.zoom)"
        )
        assert len(zooms) == 6 and all(z == "" or float(z) >= 0.85 for z in zooms), zooms
        assert not driver.find_element(By.ID, "pq-controls").is_displayed()  # the explorer is not printed
        driver.execute_script("window.shrecUnfitTables()")
    finally:
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
    from selenium.webdriver.common.print_page_options import PrintOptions

    options = PrintOptions()
    options.page_width, options.page_height = 21.0, 29.7
    pdf = driver.print_page(options)

    data = base64.b64decode(pdf)
    assert data.startswith(b"%PDF")
    (tmp_path / "results.pdf").write_bytes(data)


def test_hostile_names_run_no_script_and_show_as_themselves(browser, tmp_path):
    report = hostile_report()
    path = tmp_path / "index.html"
    path.write_text(to_html(report, description="</script><script>window.__pwned=3</script>", date=DATE), encoding="utf-8")
    browser.set_window_size(1280, 900)
    browser.get(path.as_uri())
    assert browser.execute_script("return window.__pwned === undefined")
    assert [r[1] for r in _rows(browser, "#leaderboard-table")] == [visible(r) for r in report.leaderboard["run"]]
    options = [o.text for o in Select(browser.find_element(By.ID, "pq-run")).options]
    assert sorted(options) == sorted(visible(r).strip() for r in HOSTILE_RUNS)
    browser.find_element(By.CSS_SELECTOR, "#pq-table tbody td.q button").click()
    assert browser.find_element(By.ID, "pq-detail-h").text.startswith('Query q<0>&"0" (class </script>)')
    assert browser.execute_script("return window.__pwned === undefined")


FIRST_ROW = """
const table = document.querySelector('#leaderboard-table'), box = table.parentElement.getBoundingClientRect();
const row = table.tBodies[0].rows[0].getBoundingClientRect(), sort = table.querySelector('thead th[aria-sort]').getBoundingClientRect();
return {inner: window.innerHeight, width: window.innerWidth, scrollY: window.scrollY, row: [row.top, row.bottom],
        box: [box.left, box.right], sort: [sort.left, sort.right],
        figures: Array.from(document.querySelectorAll('figure.plot svg')).map(s => s.getBoundingClientRect().width)};
"""


def _many_runs_page(tmp_path) -> str:
    """A generated 14-run contest with a dozen warnings and a two-paragraph description."""
    from .html_pages import big_report

    report = big_report(n_runs=14, n_queries=60)
    report.warnings.extend(f"note: warning number {i} of a long list that must not push the leaderboard down" for i in range(12))
    path = tmp_path / "many" / "index.html"
    path.parent.mkdir()
    path.write_text(to_html(report, title="SHREC 20XX: a track with 14 runs", description="First paragraph.\n\nSecond one.", date=DATE), encoding="utf-8")
    return path.as_uri()


@pytest.mark.parametrize("which", ["sample", "14 runs"])
def test_first_screen_shows_the_leaderboard_at_desktop_and_phone_width(browser, sample, tmp_path, which):
    """Issue 31.15: at 1280 and 390 px the leaderboard's first row lies inside the first screen (its
    rectangle against the window's inner height, page unscrolled), the sort column is visible in the
    leaderboard's box without scrolling sideways, and at desktop width every figure is drawn at least
    800 px wide.  The first screens are saved as PNG in tmp_path."""
    url = sample[1] if which == "sample" else _many_runs_page(tmp_path)
    for name, (width, height) in (("desktop", (1280, 800)), ("phone", (390, 844))):
        browser.set_window_size(width, height)
        browser.get(url)
        got = browser.execute_script(FIRST_ROW)
        assert got["scrollY"] == 0
        assert 0 < got["row"][0] and got["row"][1] <= got["inner"], (name, got)
        assert got["box"][0] <= got["sort"][0] and got["sort"][1] <= got["box"][1], (name, got)
        if name == "desktop":
            assert got["figures"] and min(got["figures"]) >= 800, got["figures"]
        path = tmp_path / f"first-screen-{which.replace(' ', '-')}-{name}.png"
        assert browser.save_screenshot(str(path))
        assert path.read_bytes().startswith(b"\x89PNG")
