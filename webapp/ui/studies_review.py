"""The Studies tab's "Submissions and bonuses" section: the platform's submissions joined to the arena's
workers, approve / reject / ask to return (one or many, each after a confirmation step), and the bonus
preview and payment.

Every call is sent once (`arena.crowd.platform_review` claims it in the store first); a failure is one line
and changes nothing in the arena. What is confirmed is what was prepared: the plan and the previewed
bonus lines wait in the session's state, so a second click of Confirm or Pay finds the claim and sends
nothing.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import gradio as gr
import pandas as pd

from arena.crowd import platform_review as review
from arena.crowd.prolific_api import REJECTION_CATEGORIES, PlatformError, ProlificClient
from arena.store.platform_payments import UNKNOWN
from arena.text_safety import escape_text
from webapp.leaderboard import study_review as view
from webapp.services import Services
from webapp.ui.moderation_tab import actor_of
from webapp.ui.parts.refusal_notice import NOTICE_MARK
from webapp.ui.parts.tables import shown_table
from webapp.sessions.session_choices import OFFERED

ACTION_CHOICES = [("Approve", review.APPROVE), ("Reject", review.REJECT), ("Ask to return", review.RETURN)]
ClientFactory = Callable[[], ProlificClient]


def _notice(text: str) -> str:
    return f"{NOTICE_MARK} {escape_text(' '.join(text.split()))}"


def load(services: Services, study_id: Optional[str], typed: str,
         client: ClientFactory) -> tuple[str, Optional[pd.DataFrame], list[tuple[str, str]]]:
    """The line, the joined table and the checkbox choices (submission id, with its worker and status)."""
    if not study_id:
        return _notice("Choose a study first."), None, []
    platform_id = view.platform_study_id(services, study_id, typed)
    if not platform_id:
        return _notice("No Prolific study id known for this study: type it in the field."), None, []
    try:
        with client() as api:
            submissions = api.list_submissions(platform_id)
    except PlatformError as exc:
        return _notice(f"Could not load the submissions: {exc}"), None, []
    table = view.submissions_view(services, study_id, submissions)
    # What the platform's webhook last reported, which may be newer than the list just read.
    reported = services.store.submission_statuses(study_id)
    table["last reported"] = table["submission"].map(lambda s: reported.get(str(s), ""))
    choices = [(f"{r['submission']} · {r['pseudonym'] or r['Prolific id']} · {r['Prolific status']} · "
                f"{r['arena verdict']}", str(r["submission"])) for _, r in table.iterrows()]
    return f"{len(table)} submission(s) on Prolific study {escape_text(platform_id)}.", table, choices


def known_on_platform(services: Services, study_id: str, typed: str) -> bool:
    """Whether the study's submissions can be read without asking: it was created from this page, or its
    Prolific id is typed (a study without either is loaded only on Load, which says what is missing)."""
    return bool((typed or "").strip()) or services.store.platform_link(study_id) is not None


def prepare(study_id: Optional[str], chosen: list[str], action: str, category: str, message: str,
            reasons: str) -> tuple[str, Optional[dict[str, Any]]]:
    """The confirmation line and the plan that Confirm sends (None: nothing to confirm)."""
    if not study_id or not chosen:
        return _notice("Choose a study and at least one submission first."), None
    plan = {"study": study_id, "ids": list(chosen), "action": action, "category": category,
            "message": message or "", "reasons": [r for r in (reasons or "").splitlines() if r.strip()]}
    if action == review.REJECT and len(plan["message"].strip()) < 100:
        return _notice(f"A rejection's message needs at least 100 characters (this one has "
                       f"{len(plan['message'].strip())})."), None
    words = review.DONE_WORDS[action]
    extra = f" as {category}" if action == review.REJECT else ""
    return (f"About to send to Prolific: {len(chosen)} submission(s) {words}{extra}. Press **Confirm** to "
            "send, or change the choice and prepare again."), plan


def confirm(services: Services, plan: Optional[dict[str, Any]], actor: str, client: ClientFactory) -> str:
    if not plan:
        return _notice("Nothing to confirm: prepare the review first.")
    try:
        with client() as api:
            done = review.review_submissions(services.store, api, plan["study"], plan["ids"], plan["action"],
                                             actor=actor, message=plan["message"], category=plan["category"],
                                             reasons=plan["reasons"])
    except PlatformError as exc:
        return _notice(f"Nothing changed: {exc}")
    return _notice(done.line()) if done.failure else escape_text(done.line())


def pay(services: Services, study_id: Optional[str], typed: str, lines: Optional[list[Any]], actor: str,
        client: ClientFactory) -> str:
    if not study_id or not lines:
        return _notice("Preview the bonuses first.")
    platform_id = view.platform_study_id(services, study_id, typed)
    if not platform_id:
        return _notice("No Prolific study id known for this study: type it in the field.")
    try:
        with client() as api:
            done = review.pay_bonus(services.store, api, study_id, platform_id, list(lines), actor=actor)
    except PlatformError as exc:
        return _notice(f"Nothing paid: {exc}")
    return escape_text(done.line) if done.state == "paid" else _notice(done.line)


SETTLE_CHOICES = [("Mark as paid", "paid"), ("Mark as not paid (its lines can be paid again)", "not paid")]


def unknown_payments(services: Services, study_id: Optional[str]) -> list[tuple[str, str]]:
    """The study's payments whose outcome is unknown, as dropdown choices (label, payment key)."""
    if not study_id:
        return []
    return [(f"bonus {b.bonus_id or '?'} · {b.total:.2f} to {b.workers} worker(s) · {b.updated_at[:19]}",
             b.batch_key) for b in services.store.bonus_payments(study_id) if b.state == UNKNOWN]


def prepare_settle(study_id: Optional[str], key: Optional[str],
                   verdict: str) -> tuple[str, Optional[dict[str, Any]]]:
    """The confirmation line and the plan Confirm records (None: nothing to confirm)."""
    if not study_id or not key:
        return _notice("Choose a study and a payment whose outcome is unknown first."), None
    if verdict not in ("paid", "not paid"):
        return _notice("Choose whether Prolific shows the payment as paid or not."), None
    also = " Its lines will be offered again at the next preview." if verdict == "not paid" else ""
    return (f"About to record this payment as {verdict}, as found on Prolific.{also} Press **Record** to "
            "confirm."), {"study": study_id, "key": key, "verdict": verdict}


def settle(services: Services, plan: Optional[dict[str, Any]], actor: str) -> str:
    if not plan:
        return _notice("Nothing to record: prepare it first.")
    done = services.store.settle_unknown_bonus(plan["study"], plan["key"], paid=plan["verdict"] == "paid",
                                               actor=actor)
    if not done:
        return _notice("Nothing recorded: that payment's outcome is no longer unknown.")
    return f"Recorded as {plan['verdict']} (written to the moderation log)."


def _build_unknown(services: Services, picked: gr.Dropdown) -> None:
    """Recording what the researcher found on Prolific for a payment whose outcome is unknown."""
    with gr.Row():
        payment = gr.Dropdown([], label="Payment whose outcome is unknown (check it on Prolific)",
                              elem_id="studies-bonus-unknown", scale=3)
        verdict = gr.Radio(SETTLE_CHOICES, value="paid", label="Prolific shows it as",
                           elem_id="studies-bonus-verdict", scale=2)
    with gr.Row():
        look = gr.Button("List unknown payments", elem_id="studies-bonus-unknown-list")
        ready = gr.Button("Prepare", elem_id="studies-bonus-settle-prepare")
        record = gr.Button("Record", variant="stop", elem_id="studies-bonus-settle-record")
    plan = gr.State(None)
    said = gr.Markdown("", elem_id="studies-bonus-settle-line")

    def on_look(study_id: Optional[str]) -> Any:
        return gr.update(choices=unknown_payments(services, study_id), value=None)

    def on_record(ready_plan: Optional[dict[str, Any]], request: gr.Request) -> tuple[str, None]:
        return settle(services, ready_plan, actor_of(request)), None

    look.click(OFFERED.offering(on_look, [payment]), [picked], [payment], api_name="study_bonus_unknown")
    ready.click(prepare_settle, [picked, payment, verdict], [said, plan],
                api_name="study_bonus_settle_prepare")
    record.click(on_record, [plan], [said, plan], api_name="study_bonus_settle")


def build(services: Services, picked: gr.Dropdown,
          client: ClientFactory = ProlificClient.from_environment) -> list[Any]:
    """The section; returns the events of the actions that change the platform or the arena (the tab shows
    the study again after each)."""
    gr.Markdown("#### Submissions and bonuses on Prolific")
    with gr.Row():
        typed = gr.Textbox(label="Prolific study id (only for a study not created from this page)",
                           elem_id="studies-review-platform-id", scale=3)
        fetch = gr.Button("Load submissions", elem_id="studies-review-load", scale=1)
    line = gr.Markdown("", elem_id="studies-review-line")
    table = gr.Dataframe(label="Submissions", interactive=False, visible=False,
                         elem_id="studies-review-table")
    chosen = gr.CheckboxGroup([], label="Submissions to act on", elem_id="studies-review-chosen")
    with gr.Row():
        action = gr.Radio(ACTION_CHOICES, value=review.APPROVE, label="Action",
                          elem_id="studies-review-action")
        category = gr.Dropdown(list(REJECTION_CATEGORIES), value="FAILED_CHECK", label="Rejection category",
                               elem_id="studies-review-category")
    message = gr.Textbox(label="Rejection message (at least 100 characters; filled from the flags)", lines=3,
                         elem_id="studies-review-message")
    reasons = gr.Textbox(label="Reasons to return (one per line)", lines=2, elem_id="studies-review-reasons")
    with gr.Row():
        ready = gr.Button("Prepare", elem_id="studies-review-prepare")
        send = gr.Button("Confirm", variant="stop", elem_id="studies-review-confirm")
    plan = gr.State(None)
    outcome = gr.Markdown("", elem_id="studies-review-outcome")
    with gr.Row():
        preview = gr.Button("Preview bonuses", elem_id="studies-bonus-preview")
        pay_button = gr.Button("Pay the previewed bonuses", variant="stop", elem_id="studies-bonus-pay")
    lines = gr.State(None)
    bonus_line = gr.Markdown("", elem_id="studies-bonus-line")
    bonus_table = gr.Dataframe(label="Bonus lines", interactive=False, visible=False,
                               elem_id="studies-bonus-table")

    def on_load(study_id: Optional[str], platform_id: str) -> tuple[Any, ...]:
        said, found, options = load(services, study_id, platform_id, client)
        return said, shown_table(found), gr.update(choices=options, value=[])

    def on_pick(study_id: Optional[str], platform_id: str) -> tuple[Any, ...]:
        if not study_id or not known_on_platform(services, study_id, platform_id):
            return "", shown_table(None), gr.update(choices=[], value=[])
        return on_load(study_id, platform_id)

    def on_choose(ids: list[str], shown: Optional[pd.DataFrame]) -> str:
        return view.rejection_message(view.selected_flags(shown, ids or []))

    def on_confirm(ready_plan: Optional[dict[str, Any]], request: gr.Request) -> tuple[str, None]:
        return confirm(services, ready_plan, actor_of(request), client), None

    def on_preview(study_id: Optional[str]) -> tuple[Any, ...]:
        if not study_id:
            return _notice("Choose a study first."), None, None
        shown, owed, said = view.bonus_preview(services, study_id)
        return (escape_text(said) + (" Press **Pay** to pay them." if owed else ""), shown_table(shown),
                owed or None)

    def on_pay(study_id: Optional[str], platform_id: str, owed: Optional[list[Any]],
               request: gr.Request) -> tuple[str, None]:
        return pay(services, study_id, platform_id, owed, actor_of(request), client), None

    loaded = [picked, typed], [line, table, chosen]
    fetch.click(OFFERED.offering(on_load, loaded[1]), *loaded, api_name="study_review_load")
    # The statuses follow each review without a press of Load: the list is read again after Confirm, and
    # when a study is chosen (where the platform knows it).
    picked.change(OFFERED.offering(on_pick, loaded[1]), *loaded, api_visibility="private")
    chosen.change(on_choose, [chosen, table], [message], api_visibility="private")
    ready.click(prepare, [picked, chosen, action, category, message, reasons], [outcome, plan],
                api_name="study_review_prepare")
    sent = send.click(on_confirm, [plan], [outcome, plan], api_name="study_review_confirm")
    sent.then(OFFERED.offering(on_load, loaded[1]), *loaded, api_visibility="private")
    preview.click(on_preview, [picked], [bonus_line, bonus_table, lines], api_name="study_bonus_preview")
    paid = pay_button.click(on_pay, [picked, typed, lines], [bonus_line, lines], api_name="study_bonus_pay")
    _build_unknown(services, picked)
    return [sent, paid]
