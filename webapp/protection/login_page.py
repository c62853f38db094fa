"""The researcher login page's word about a lockout: how long until the address may try again.

A login form shows one fixed line for a refused login ("Incorrect
credentials", for an answer 400) and nothing at all for any other answer (the
server's own form, `webapp.protection.shared_login`, and Gradio's alike). So
`LoginLimitMiddleware` adds, to the researcher app's page, a line in the
login panel (`AUTH_MESSAGE`, also Gradio's `auth_message`) and a small
script (`page_script`): when a login is refused with 429, the script writes
the answer's one line there ("Too many failed logins from this address: try
again in 14 min 30 s.") and counts it down; a page opened during a lockout
shows the line at once. The counting itself stays in `webapp.protection.login_limits`.
"""

from __future__ import annotations

import json
import math

WAIT_ID = "admin-login-wait"
# Rendered by Gradio inside its login panel, under its title; empty until a lockout fills it.
AUTH_MESSAGE = f'<p id="{WAIT_ID}" role="alert" aria-live="polite" style="font-weight:600;margin:0"></p>'


def wait_words(seconds: float) -> str:
    """A wait in words a person reads at a glance: "14 min 30 s", "1 min", "45 s"."""
    total = max(1, math.ceil(seconds))
    minutes, rest = divmod(total, 60)
    if minutes == 0:
        return f"{rest} s"
    return f"{minutes} min {rest} s" if rest else f"{minutes} min"


def lockout_line(seconds: float) -> str:
    return f"Too many failed logins from this address: try again in {wait_words(seconds)}."


# Written in plain ES5 so that it runs before and beside Gradio's own bundle; it only reads answers of
# the login route and writes the one line, never touching the request.
_SCRIPT = """<script>(function () {
  var id = %(id)s, until = %(until)s;
  function words(s) {
    s = Math.max(1, Math.ceil(s)); var m = Math.floor(s / 60), r = s %% 60;
    return m === 0 ? r + " s" : (r ? m + " min " + r + " s" : m + " min");
  }
  function draw() {
    var line = document.getElementById(id);
    if (!line) { return; }
    var left = until ? (until - Date.now()) / 1000 : 0, text = line.textContent;
    if (left > 0) {
      text = "Too many failed logins from this address: try again in " + words(left) + ".";
    } else if (until) {
      text = "You may try to log in again now."; until = 0;
    }
    // Written only when it changes: each write is a mutation the observer below sees.
    if (line.textContent !== text) { line.textContent = text; }
  }
  setInterval(draw, 1000);
  new MutationObserver(draw).observe(document.documentElement, {childList: true, subtree: true});
  var plain = window.fetch;
  window.fetch = function (input, init) {
    var url = typeof input === "string" ? input : (input && input.url) || "";
    var post = init && String(init.method || "").toUpperCase() === "POST";
    return plain.apply(this, arguments).then(function (answer) {
      if (post && /\\/login\\/?$/.test(url.split("?")[0])) {
        if (answer.status === 429) {
          var wait = Number(answer.headers.get("retry-after") || 0);
          until = Date.now() + wait * 1000; draw();
        } else if (answer.status === 400) {
          var line = document.getElementById(id); if (line) { line.textContent = ""; } until = 0;
        }
      }
      return answer;
    });
  };
})();</script>"""


def page_script(locked_s: float) -> bytes:
    """The script for a page opened now: `locked_s` seconds of lockout already running (0: none)."""
    until = "Date.now() + %d" % math.ceil(locked_s * 1000) if locked_s > 0 else "0"
    return (_SCRIPT % {"id": json.dumps(WAIT_ID), "until": until}).encode("utf-8")
