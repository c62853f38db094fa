"""While the page does not yet know its participant, the disabled "New battle" says why beside it.

On a first start the button stayed disabled for up to 27 s with nothing saying why. The page as served
(Gradio's config, before any event runs) must carry the line; `on_resume` clears it when it enables the
button (tests/app/test_participant_browser.py drives that part in a browser).
"""

from __future__ import annotations

from battle_support import FakeCatalogCRS, make_services

from webapp.ui.battle_tab import GETTING_READY


def _component(config: dict, elem_id: str) -> dict:
    (found,) = [c for c in config["components"] if c.get("props", {}).get("elem_id") == elem_id]
    return found["props"]


def test_the_disabled_new_battle_button_says_why(tmp_path):
    from webapp.serve import build_demo

    services = make_services(tmp_path, [FakeCatalogCRS("alpha"), FakeCatalogCRS("beta")])
    try:
        config = build_demo(services).get_config_file()
    finally:
        services.store.close()
    assert _component(config, "battle-new")["interactive"] is False
    assert _component(config, "battle-notice")["value"] == GETTING_READY
    assert "New battle" in GETTING_READY and "moment" in GETTING_READY


def test_one_load_event_identifies_the_participant_and_enables_new_battle(tmp_path):
    """The page is drawn for its participant in one round trip: the load event that identifies them also
    enables New battle (and draws the other tabs), instead of a second event chained after it (on a first
    start New battle came 2.7 s after the tab was drawn). Nothing else runs at load."""
    from webapp.serve import build_demo

    services = make_services(tmp_path, [FakeCatalogCRS("alpha"), FakeCatalogCRS("beta")])
    try:
        config = build_demo(services).get_config_file()
    finally:
        services.store.close()
    ids = {c["id"]: c.get("props", {}).get("elem_id") for c in config["components"]}
    loads = [d for d in config["dependencies"] if any(t[1] == "load" for t in d["targets"])]
    assert len(loads) == 1
    drawn = {ids.get(i) for i in loads[0]["outputs"]}
    assert {"battle-new", "battle-notice", "chat-new"} <= drawn
    # what follows the load only starts background work, and changes nothing on the page
    after = [d for d in config["dependencies"] if d.get("trigger_after") == loads[0]["id"]]
    assert after and all(not d["outputs"] for d in after)
