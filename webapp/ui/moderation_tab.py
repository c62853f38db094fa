"""Moderation tab (researcher app only): hide, unhide or delete dialogues; the log; flagged votes; scoring.

Hidden dialogues leave the leaderboard and every export; deleting removes a
dialogue with its scores and battle vote. Each action needs a reason and is
written to the moderation log with the logged-in researcher's name.
"""

from __future__ import annotations

from typing import Any, Optional

import gradio as gr
import pandas as pd

from webapp.protection.label_limits import flagged_labels
from webapp.protection.moderation import ModerationError, delete, delete_user, hide, parse_ids
from webapp.services import Services
from arena.text_safety import escape_markdown
from webapp.sessions.refusal import refuse


def actor_of(request: Optional[gr.Request]) -> str:
    return (getattr(request, "username", None) if request is not None else None) or "researcher"


def log_table(services: Services) -> pd.DataFrame:
    rows = services.store.moderation_entries()
    return pd.DataFrame(rows, columns=["entry_id", "action", "target", "actor", "reason", "detail", "created_at"])


def flags_table(services: Services) -> pd.DataFrame:
    flags = services.store.flagged_votes()
    votes = [v for v in services.store.list_votes() if v.vote_id in flags]
    rows = [{"vote_id": v.vote_id, "battle_id": v.battle_id, "crs_a": v.crs_a, "crs_b": v.crs_b,
             "choice": v.choice, "cast": v.timestamp.isoformat(), "reason": flags[v.vote_id]} for v in votes]
    return pd.DataFrame(rows, columns=["vote_id", "battle_id", "crs_a", "crs_b", "choice", "cast", "reason"])


def scoring_markdown(services: Services) -> str:
    counts = services.store.scoring_counts()
    text = ("**Scoring queue**: " + ", ".join(f"{state} {n}" for state, n in counts.items()))
    failed = services.store.failed_jobs(limit=5)
    if failed:
        text += "\n\nLatest failures: " + "; ".join(  # stored error text, escaped
            f"{escape_markdown(d)}: {escape_markdown(e[:120])}" for d, e in failed)
    return text


def build(services: Services, *, tab: Optional[gr.Tab] = None) -> None:
    gr.Markdown("Hide a dialogue to take it off the leaderboard and out of every export (it can be shown "
                "again); delete it to remove it with its scores and battle vote. Every action is logged.")
    with gr.Row():
        ids = gr.Textbox(label="Dialogue ids (commas or spaces between them)", scale=3,
                         elem_id="moderation-ids")
        reason = gr.Textbox(label="Reason (required, logged)", scale=2, elem_id="moderation-reason")
    with gr.Row():
        hide_button = gr.Button("Hide", elem_id="moderation-hide")
        unhide_button = gr.Button("Show again", elem_id="moderation-unhide")
        delete_button = gr.Button("Delete", variant="stop", elem_id="moderation-delete")
    with gr.Row():
        user = gr.Textbox(label="User id or export pseudonym (deletion request)", scale=3,
                          elem_id="moderation-user")
        delete_user_button = gr.Button("Delete all of this user's dialogues", variant="stop", scale=1,
                                       elem_id="moderation-delete-user")
    result = gr.Markdown("", elem_id="moderation-result")
    refresh = gr.Button("Refresh", elem_id="moderation-refresh")
    scoring = gr.Markdown("", elem_id="moderation-scoring")
    with gr.Accordion("Moderation log", open=True):
        log_box = gr.Dataframe(interactive=False, wrap=True, elem_id="moderation-log")
    with gr.Accordion("Flagged votes (left out of the leaderboard by default)", open=False):
        flags_box = gr.Dataframe(interactive=False, wrap=True, elem_id="moderation-flags")
    with gr.Accordion("Flagged satisfaction labels (left out of satisfaction rates)", open=False):
        labels_box = gr.Dataframe(interactive=False, wrap=True, elem_id="moderation-label-flags")
    labels_view = lambda: pd.DataFrame(flagged_labels(services.store),  # noqa: E731
                                       columns=["dialogue_id", "system", "label", "rater", "given", "reason"])

    def views() -> tuple[Any, ...]:
        return scoring_markdown(services), log_table(services), flags_table(services)

    def act(kind: str):
        def handler(id_text: str, reason_text: str, who: str, request: gr.Request) -> tuple[Any, ...]:
            actor = actor_of(request)
            try:
                if kind == "delete_user":
                    counts = delete_user(services.store, who, actor=actor, reason=reason_text)
                    message = (f"Deleted {counts['dialogues']} dialogue(s) and {counts['votes']} vote(s) of "
                               f"{counts['users']} stored user id(s).")
                elif kind == "delete":
                    counts = delete(services.store, parse_ids(id_text), actor=actor, reason=reason_text)
                    message = f"Deleted {counts['dialogues']} dialogue(s) and {counts['votes']} vote(s)."
                else:
                    done = hide(services.store, parse_ids(id_text), actor=actor, reason=reason_text,
                                hide=kind == "hide")
                    message = f"{'Hid' if kind == 'hide' else 'Showed again'} {len(done)} dialogue(s)."
            except ModerationError as exc:
                raise refuse(str(exc)) from None
            return (message, *views())

        return handler

    outputs = [result, scoring, log_box, flags_box]
    inputs = [ids, reason, user]
    hide_button.click(act("hide"), inputs, outputs, api_name="moderation_hide")
    unhide_button.click(act("unhide"), inputs, outputs, api_name="moderation_unhide")
    delete_button.click(act("delete"), inputs, outputs, api_name="moderation_delete")
    delete_user_button.click(act("delete_user"), inputs, outputs, api_name="moderation_delete_user")
    refresh.click(views, None, [scoring, log_box, flags_box], api_name="moderation_refresh")
    refresh.click(labels_view, None, [labels_box], api_name="moderation_label_flags")
    if tab is not None:  # the tab holding this one, given by the page
        tab.select(views, None, [scoring, log_box, flags_box], api_name=False)
        tab.select(labels_view, None, [labels_box], api_name=False)
