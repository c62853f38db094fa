"""On a phone the System column stays in view: the Leaderboard's table (and the study board in the
researcher's Studies tab, which uses the same table) scrolls sideways with its Rank and System columns
pinned, at 400 px and 1300 px; the screenshots are checked for sideways overflow.

Uses Debian's Chromium (/usr/bin/chromium) through Playwright (tests/support/browser.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "battle"))
sys.path.insert(0, str(Path(__file__).parent.parent / "study"))

from battle_support import FakeCatalogCRS, launch, make_services  # noqa: E402

from tests.support.browser import (  # noqa: E402
    PHONE, WIDE, assert_no_toasts, expect, new_battle, rate_pane, send_in_pane, shoot,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]
VIEWPORTS = [pytest.param(PHONE, id="400px"), pytest.param(WIDE, id="1300px")]
# The left edges of the header cells and first row's cells of columns 0, 1 and 2 of `table`, relative to
# the table's frame, and how far the frame can scroll sideways.
EDGES = """(table) => {
    const frame = document.querySelector(table + " .virtual-table-viewport");
    const left = frame.getBoundingClientRect().left;
    const edge = (cell) => Math.round(
        document.querySelector(table + " " + cell).getBoundingClientRect().left - left);
    return {
        heads: [0, 1, 2].map((c) => edge(`th[data-testid='header-${c}']`)),
        cells: [0, 1, 2].map((c) => edge(`.body-cell[data-row='0'][data-col='${c}']`)),
        room: frame.scrollWidth - frame.clientWidth,
    };
}"""
# Whether the page script has set the second column's offset to the first one's width.
MEASURED = """(table) => {
    const el = document.querySelector(table);
    const pinned = el && (el.closest(".pinned-columns") || el.querySelector(".pinned-columns"));
    const first = pinned && pinned.querySelector("th[data-testid='header-0']");
    return !!first && pinned.style.getPropertyValue("--pinned-left") === first.getBoundingClientRect().width + "px";
}"""
SCROLL = """([table, x]) => { document.querySelector(table + " .virtual-table-viewport").scrollLeft = x; }"""
# Whether the cell at (x, y) of the page is in `table`'s column `col` (what is drawn on top there).
ON_TOP = """([table, col]) => {
    const cell = document.querySelector(`${table} .body-cell[data-row='0'][data-col='${col}']`);
    const box = cell.getBoundingClientRect();
    const hit = document.elementFromPoint(box.left + 4, box.top + box.height / 2);
    return !!hit && cell.contains(hit);
}"""


def open_tab(page, name: str) -> None:
    """Open a tab, from Gradio's overflow menu when it does not fit the width."""
    tab = page.get_by_role("tab", name=name)
    if tab.count() and tab.is_visible():
        tab.click()
    else:
        page.locator(".tab-wrapper .overflow-menu > button").click()
        page.locator(".overflow-dropdown button", has_text=name).click()


def assert_pinned(page, table: str) -> None:
    """Scrolled sideways, columns 0 and 1 stay where they were, drawn over the columns passing beneath;
    column 2 moves by the scroll."""
    page.locator(f"{table} .body-cell[data-row='0'][data-col='1']").wait_for()
    page.locator(f"{table} .body-cell[data-row='0'][data-col='1']").scroll_into_view_if_needed()
    page.wait_for_function(MEASURED, arg=table)  # the page script has placed the second column (it looks each tick)
    before = page.evaluate(EDGES, table)
    assert before["room"] > 100, f"{table} does not scroll sideways: {before}"
    page.evaluate(SCROLL, [table, before["room"]])
    page.wait_for_function(
        "([table, x]) => document.querySelector(table + ' .virtual-table-viewport').scrollLeft >= x - 1",
        arg=[table, before["room"]])
    after = page.evaluate(EDGES, table)
    pinned = after["heads"][:2] == before["heads"][:2] and after["cells"][:2] == before["cells"][:2]
    assert pinned, (before, after)
    assert after["heads"][1] == after["cells"][1] > after["cells"][0] == 0  # the second one after the first
    assert after["cells"][2] < before["cells"][2] - 50  # the rest scrolls
    assert page.evaluate(ON_TOP, [table, 0]) and page.evaluate(ON_TOP, [table, 1])


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_the_leaderboard_keeps_rank_and_system_in_view(tmp_path, browser, viewport):
    width = f"{viewport['width']}px"
    services = make_services(tmp_path, [FakeCatalogCRS("alpha"), FakeCatalogCRS("beta")], max_turns=3)
    demo, address = launch(services)
    try:
        page = browser.page(viewport)
        page.goto(address)
        new_battle(page)
        send_in_pane(page, "A", "A space adventure")
        send_in_pane(page, "B", "Sharks")
        rate_pane(page, "A", "satisfied")
        rate_pane(page, "B", "frustrated")
        page.locator("#battle-vote-a:enabled").click()
        page.locator("#battle-result").get_by_text("System A was").wait_for()
        page.get_by_role("tab", name="Leaderboard").click()
        page.locator("#leaderboard-refresh").click()
        page.locator("#leaderboard-summary").get_by_text("1 battle.").wait_for()
        expect(page.locator("#leaderboard-table th[data-testid='header-1']")).to_contain_text("System")
        assert_pinned(page, "#leaderboard-table")
        expect(page.locator("#leaderboard-table .body-cell[data-row='0'][data-col='1']")).to_contain_text(
            "(ReDial)", use_inner_text=True)  # the system's name, in view
        shoot(page, browser.shots, f"leaderboard-scrolled-{width}")
        assert_no_toasts(page, "the leaderboard")
    finally:
        demo.close()
        services.store.close()


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_the_study_board_keeps_rank_and_system_in_view(tmp_path, browser, viewport):
    from study_support import pid, publish

    from webapp.sessions import study as flow

    width = f"{viewport['width']}px"
    services = make_services(tmp_path, [FakeCatalogCRS("alpha"), FakeCatalogCRS("beta")], max_turns=3)
    publish(services, mode="battle", systems=["alpha", "beta"], tasks_per_participant=1)
    link = {"study": "pilot", "PROLIFIC_PID": pid("W1"), "STUDY_ID": pid("prolific-study"),
            "SESSION_ID": pid("S-W1")}
    study, worker = flow.enter(services, link)
    flow.consent(services, study, worker)
    flow.begin(services, study, worker)
    study, worker = flow.enter(services, link)
    for side in ("A", "B"):
        flow.send(services, study, worker, side, "a war film please")
        flow.rate(services, study, worker, side, "satisfied")
    flow.submit(services, study, worker, "A", None)
    demo, address = launch(services, admin=True)
    try:
        page = browser.page(viewport)
        page.goto(address)
        page.get_by_role("tab", name="Evaluate").wait_for()
        open_tab(page, "Studies")
        page.locator("#studies-pick input").click()
        page.get_by_role("option", name="pilot").first.click()
        page.locator("#studies-board").wait_for()
        assert_pinned(page, "#studies-board")
        shoot(page, browser.shots, f"study-board-scrolled-{width}")
        assert_no_toasts(page, "the study board")
    finally:
        demo.close()
        services.store.close()
