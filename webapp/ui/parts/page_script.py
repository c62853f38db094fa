"""The script every page of the app carries (in its `<head>`): what the browser keeps across a reload, and
the questions it asks before a conversation under way is left.

- **The tab in use.** The tab a participant opened is remembered for the page (sessionStorage, so per
  browser tab and gone when it closes); a reload opens it again instead of the first tab. Tabs are known
  by their labels, which are unique on each page.
- **Unsent text.** What is typed in a message box marked `KEEPS_DRAFT` is kept the same way and put back
  after a reload, once the box is usable again (its conversation resumed). A box the server empties (the
  message was sent) empties the kept copy too. Nothing leaves the browser: no draft is sent anywhere.
- **Leaving a conversation under way.** A message box marked `under-way` (`webapp.ui.parts.under_way`)
  belongs to a conversation with a message sent and no verdict yet. While one is, the buttons in
  `LEAVING_BUTTONS` ask first (cancelling leaves everything as it was), and closing or reloading the page
  asks the browser's own question. An event that cannot be stopped in the page (a dropdown's choice) asks
  through `window.crsArenaLeave` from its own `js` (`webapp.ui.parts.under_way.leave_js`).
- **Pinned columns.** A table marked `pinned-columns` keeps its first two columns in view while it scrolls
  sideways (`webapp.ui.parts.style`); the second column's offset is the first one's width, measured here.

Clicks are caught before Gradio's own handlers see them; the rest (the tab to reopen, the kept text, the
pinned offset) is looked at a few times a second rather than hooked into Gradio's components, which its
own scripts draw and redraw.
"""

from __future__ import annotations

import json

KEEPS_DRAFT = "keeps-draft"  # elem_classes of a message box whose unsent text survives a reload
UNDER_WAY = "under-way"  # elem_classes of the message box of a conversation that leaving would lose
# Which button leaves which conversation: the button's elem_id, the conversation's message boxes.
LEAVING_BUTTONS = {
    "battle-new": ["battle-msg-a", "battle-msg-b"],
    "chat-new": ["chat-msg"],
}
LEAVE_QUESTION = "Your conversation is not finished yet. Leave it and start afresh?"
DRAFT_WAIT_MS = 30_000  # how long a kept draft waits, from its box's first showing, for the box to open
POLL_MS = 250
ANSWER_MS = 500  # events this soon after a question, for the same conversation, take its answer

PAGE_JS = """
(function () {
  if (window.crsArenaPage) { return; }
  window.crsArenaPage = true;
  var page = window.location.pathname + window.location.search;
  var TAB_KEY = "crs-arena-tab:" + page;
  var DRAFT_KEY = "crs-arena-draft:" + page + "#";
  var storage = null;
  try { storage = window.sessionStorage; } catch (e) { storage = null; }
  function read(key) { try { return storage ? storage.getItem(key) : null; } catch (e) { return null; } }
  function write(key, value) {
    try {
      if (!storage) { return; }
      if (value) { storage.setItem(key, value); } else { storage.removeItem(key); }
    } catch (e) { /* full or refused: this page just forgets */ }
  }

  // The tab in use: remembered (by its label) when the participant opens one, opened again after a
  // reload. A tab that does not fit the width is in Gradio's overflow menu, a button without the tab role.
  function tabButtons() {
    return Array.prototype.filter.call(document.querySelectorAll(".tab-wrapper button"), function (button) {
      return !button.closest(".visually-hidden") && button.textContent.trim();
    });
  }
  document.addEventListener("click", function (event) {
    var button = event.target && event.target.closest ? event.target.closest(".tab-wrapper button") : null;
    if (button && event.isTrusted && tabButtons().indexOf(button) >= 0) {
      write(TAB_KEY, button.textContent.trim());
    }
  }, true);
  var wantedTab = read(TAB_KEY);
  function reopenTab() {
    if (!wantedTab) { return; }
    var buttons = tabButtons().filter(function (b) { return b.textContent.trim() === wantedTab; });
    if (!buttons.length) { return; }  // the tabs are not drawn yet
    var tab = buttons.filter(function (b) { return b.getAttribute("role") === "tab"; })[0] || buttons[0];
    var open = tab.getAttribute("aria-selected") === "true" || tab.classList.contains("selected");
    if (!open) { tab.click(); }
    wantedTab = null;
  }

  // Unsent text: each marked box's text is kept; after a reload it goes back once the box is usable.
  var waiting = {};
  var firstSeen = {};  // when each kept draft's box was first on the page (a tab not opened yet has none)
  if (storage) {
    for (var i = 0; i < storage.length; i++) {
      var key = storage.key(i);
      if (key && key.indexOf(DRAFT_KEY) === 0) { waiting[key] = storage.getItem(key); }
    }
  }
  function keepDrafts() {
    document.querySelectorAll(".__KEEPS_DRAFT__[id]").forEach(function (block) {
      var box = block.querySelector("textarea, input[type=text]");
      if (!box) { return; }
      var key = DRAFT_KEY + block.id;
      if (Object.prototype.hasOwnProperty.call(waiting, key)) {
        firstSeen[key] = firstSeen[key] || Date.now();
        var late = Date.now() - firstSeen[key] > __DRAFT_WAIT_MS__;
        if (box.value) {
          delete waiting[key];  // typed anew since the reload: that text wins
        } else if (!box.disabled && box.offsetParent !== null && !late) {
          box.value = waiting[key];
          box.dispatchEvent(new Event("input", { bubbles: true }));
          delete waiting[key];
        } else if (late) {
          delete waiting[key];  // its conversation did not come back: the text is not put elsewhere
        } else {
          return;  // its box is not usable yet
        }
      }
      write(key, box.value);
    });
  }

  // Leaving a conversation under way asks first.
  function underWay(ids) {
    return ids.some(function (id) {
      var box = document.getElementById(id);
      return !!box && box.classList.contains("__UNDER_WAY__");
    });
  }
  // One answer serves every event of the same gesture: the question itself takes the focus from a
  // dropdown, which then reports its choice a second time.
  var answered = { ids: null, at: 0, leave: true };
  window.crsArenaLeave = function (ids) {
    var same = answered.ids === ids.join(" ") && Date.now() - answered.at < __ANSWER_MS__;
    if (same) { return answered.leave; }
    if (!underWay(ids)) { return true; }
    var leave = window.confirm(__LEAVE_QUESTION__);
    answered = { ids: ids.join(" "), at: Date.now(), leave: leave };
    return leave;
  };
  var leaving = __LEAVING_BUTTONS__;
  document.addEventListener("click", function (event) {
    var button = event.target && event.target.closest ? event.target.closest("button[id]") : null;
    if (!button || !Object.prototype.hasOwnProperty.call(leaving, button.id) || button.disabled) { return; }
    if (!window.crsArenaLeave(leaving[button.id])) {
      event.preventDefault();
      event.stopImmediatePropagation();
    }
  }, true);
  window.addEventListener("beforeunload", function (event) {
    if (document.querySelector(".__UNDER_WAY__")) {
      event.preventDefault();
      event.returnValue = "";
    }
  });

  // Pinned columns: the second one starts where the first one ends.
  function pinColumns() {
    document.querySelectorAll(".pinned-columns").forEach(function (table) {
      var first = table.querySelector("th[data-testid='header-0']");
      if (first) { table.style.setProperty("--pinned-left", first.getBoundingClientRect().width + "px"); }
    });
  }

  function tick() {
    reopenTab();
    keepDrafts();
    pinColumns();
  }
  window.setInterval(tick, __POLL_MS__);
})();
"""


def page_script() -> str:
    """The script as it goes into the page, with the names above filled in."""
    return (PAGE_JS.replace("__KEEPS_DRAFT__", KEEPS_DRAFT).replace("__UNDER_WAY__", UNDER_WAY)
            .replace("__LEAVING_BUTTONS__", json.dumps(LEAVING_BUTTONS))
            .replace("__LEAVE_QUESTION__", json.dumps(LEAVE_QUESTION))
            .replace("__DRAFT_WAIT_MS__", str(DRAFT_WAIT_MS)).replace("__POLL_MS__", str(POLL_MS))
            .replace("__ANSWER_MS__", str(ANSWER_MS)))


PAGE_HEAD = f"<script>{page_script()}</script>"


def name_message_js(index: int) -> str:
    """The `js` of a send event whose input at `index` is the message's id (a hidden Textbox): left empty
    by the page, it becomes a fresh random id, so every message the page sends is named. A request
    repeated by the network or a load balancer carries the same id; the server then stores it once."""
    return (f"(...args) => {{ if (!args[{index}]) {{ args[{index}] = 'page-' + ((window.crypto && "
            "window.crypto.randomUUID) ? window.crypto.randomUUID() : Date.now().toString(36) + '-' + "
            "Math.random().toString(36).slice(2)); } return args; }")
