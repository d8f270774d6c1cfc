"""The HTML report fits a 1,400 px window (issue 58, item 6): in headless Chromium at 1400x900,
neither the page nor any table's box scrolls sideways, so every column is on screen, in the
reports of real inputs: Spark's own History Server logs (25 applications), the logs our runs
recorded (the affinity plugin's placement tables), a recorded run's results directory and a
sweep's (configurations, co-scheduling, placements). And the application table names each
attempt of an application, as ``results`` does. No JVM; Chromium and a few reports: slow."""

from __future__ import annotations

import re

import pytest
from conftest import FIXTURES, invoke_cli
from test_report import _synthetic_results, chromium
from test_results_of_event_logs import _events, _spark_events

WIDTH, HEIGHT = 1400, 900
# every table, its stage tables' <details> opened: what overflows its box or the window
_OVERFLOWS = """() => {
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  const wide = [];
  for (const table of document.querySelectorAll('table')) {
    const box = table.parentElement;
    if (table.scrollWidth > table.clientWidth || box.scrollWidth > box.clientWidth
        || table.getBoundingClientRect().right > window.innerWidth) {
      const head = table.rows[0].innerText.replace(/\\s+/g, ' ').slice(0, 60);
      wide.push(`${table.closest('section').id}: ${head}: ${table.scrollWidth} px in ${box.clientWidth}`);
    }
  }
  return {page: document.scrollingElement.scrollWidth, tables: document.querySelectorAll('table').length, wide};
}"""


def _report(source, target) -> str:
    proc = invoke_cli("report", str(source), "-o", str(target))
    assert proc.returncode == 0, proc.stderr
    return str(target)


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, str]:
    """Each report, by what it is of."""
    where = tmp_path_factory.mktemp("width")
    sweep = where / "sweep"
    sweep.mkdir()
    _synthetic_results(sweep)
    with pytest.MonkeyPatch.context() as patch:  # the scans' summaries kept here, not in ~
        patch.setenv("NUMASPARK_STATE_DIR", str(where / "state"))
        return {
            "spark's logs": _report(_spark_events(), where / "spark.html"),
            "recorded logs": _report(_events(where / "events"), where / "recorded.html"),
            "a recorded run": _report(FIXTURES / "runs" / "wordcount-core", where / "run.html"),
            "a sweep": _report(sweep, where / "sweep.html"),
        }


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        yield launched
        launched.close()


def _open(browser, path: str):
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    page.route(
        "**/*", lambda r: r.abort() if not r.request.url.startswith("file:") else r.continue_()
    )
    page.goto(f"file://{path}")
    return page


@pytest.mark.slow
@pytest.mark.parametrize("of", ["spark's logs", "recorded logs", "a recorded run", "a sweep"])
def test_every_table_fits_a_1400_px_window(reports, browser, of):
    page = _open(browser, reports[of])
    try:
        measured = page.evaluate(_OVERFLOWS)
    finally:
        page.close()
    assert measured["tables"] >= 2  # the application table and a section's, or runs and more
    assert measured["wide"] == [], f"{of}: tables wider than their box at {WIDTH} px"
    assert measured["page"] <= WIDTH


@pytest.mark.slow
def test_the_application_table_names_each_attempt(reports, browser):
    page = _open(browser, reports["spark's logs"])
    try:
        ids = page.evaluate(
            "Array.from(document.querySelectorAll('#applications tr')).slice(1)"
            ".map(row => row.cells[1].innerText.replace(/\\s+/g, ' '))"
        )
        headings = page.evaluate(
            "Array.from(document.querySelectorAll('h3')).map(h => h.innerText)"
        )
    finally:
        page.close()
    assert len(ids) == 25 and len(set(ids)) == 25  # two attempts of one application: two names
    # Spark's test logs hold two applications run twice each: an id, two attempts
    for app in ("local-1426533911241", "local-1430917381535"):
        assert [i for i in ids if i.startswith(app)] == [f"{app} attempt 1", f"{app} attempt 2"]
        assert f"{app} attempt 2" in headings
    assert "local-1430917381536" in ids  # a log that names no attempt: its id alone
    assert not [i for i in ids if re.search(r"attempt (None|$)", i)]
