"""What a reply shows beside it, in Chromium at 1300 and 400 px (issue 37): the Recommended panel lists
exactly the items the reply names, in the order it names them (a system attaching three items while its
text named one showed all three), and the per-reply rating says it rates the reply (a bare flag icon
read as "report")."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "battle"))

from battle_support import FakeCatalogCRS, launch, make_services  # noqa: E402

from arena.dialogue import RecommendedItem, Role, Utterance  # noqa: E402
from tests.support.browser import chat_send, shoot  # noqa: E402
from webapp.ui.parts.render import named_items  # noqa: E402

RATE_LABEL = """(sel) => { const b = document.querySelector(sel + " .extra-feedback > button");
  if (!b) { return null; }
  const r = b.getBoundingClientRect(), chat = document.querySelector(sel).getBoundingClientRect();
  return {label: getComputedStyle(b, "::after").content, inside: r.left >= chat.left && r.right <= chat.right}; }"""


def test_the_panel_takes_the_items_the_reply_names_in_its_order():
    items = [RecommendedItem(item_id=str(n), title=t) for n, t in
             enumerate(["Alien (1979)", "Heat (1995)", "The Usual Suspects (1995)", "Jaws (1975)", "Up (2009)"])]
    reply = Utterance(role=Role.AGENT, text="Try The Usual Suspects, or Alien if you like it darker.", items=items)
    assert [i.title for i in named_items(reply)] == ["The Usual Suspects (1995)", "Alien (1979)"]
    assert named_items(Utterance(role=Role.AGENT, text="What do you like?", items=items)) == []
    # A short title counts when written as a title (with its year), not as the word it also is.
    written = Utterance(role=Role.AGENT, text="Cheer up: Up (2009), then Jaws.", items=items)
    assert [i.title for i in named_items(written)] == ["Up (2009)", "Jaws (1975)"]
    assert named_items(Utterance(role=Role.AGENT, text="Cheer up with a comedy.", items=items)) == []


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.parametrize("width", [1300, 400])
def test_the_panel_shows_what_the_reply_names_and_the_rating_says_what_it_rates(tmp_path, browser, width):
    services = make_services(tmp_path, [FakeCatalogCRS("alpha")])
    demo, address = launch(services)
    try:
        page = browser.page({"width": width, "height": 900})
        page.goto(address)
        page.get_by_role("tab", name="Chat").click()
        chat_send(page, "A space adventure please")
        (dialogue,) = services.store.list_dialogues()
        reply = dialogue.agent_turns()[-1]
        assert len(reply.items) == 3  # the system attached three items; its text names the first
        panel = page.locator("#chat-items li")
        page.locator("#chat-items").get_by_text("Recommended").wait_for()
        assert panel.count() == 1 and reply.items[0].title.split(" (")[0] in panel.first.inner_text()
        assert reply.items[0].title.split(" (")[0] in reply.text
        shown = page.evaluate(RATE_LABEL, "#chat-chatbot")
        assert shown == {"label": '"Rate this reply"', "inside": True}, shown
        shoot(page, browser.shots, f"reply-panel-{width}px")
    finally:
        demo.close()
        services.store.close()
