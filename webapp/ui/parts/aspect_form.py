"""The optional aspect rating form of the Chat and Battle tabs, and per-reply ratings.

After Satisfied/Frustrated a compact panel asks for the dialogue-level aspects
of the rating form (`assets/ratings/aspects_v1.yaml` unless ARENA_RATING_FORM
names another); every question may be left open and the whole panel skipped.
Reply-level aspects (relevance) are offered on each system message of the
chat through the Chatbot's feedback menu. Ratings are a field of the Dialogue
(or of the rated utterance), so they are stored with it in one write.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

import gradio as gr

from arena.aspects import AspectForm, load_form
from arena.dialogue import Dialogue, Rating, Role, UserKind, replace_rating
from webapp.sessions.refusal import Refusal, refuse
from webapp.ui.parts.refusal import notice
from webapp.sessions.turn_step import refused_when_full

SKIPPED = "Skipped; thank you all the same."


def form_for(services: Any) -> AspectForm:
    return load_form(services.settings.rating_form)


# -- per-reply ratings (Chatbot feedback menu) -------------------------------------------


def reply_options(form: AspectForm) -> dict[str, tuple[str, int]]:
    """Feedback-menu label -> (aspect, value), e.g. "Relevance 3: exactly"."""
    options: dict[str, tuple[str, int]] = {}
    for aspect in form.utterance:
        for value in aspect.scale():
            point = aspect.points.get(value)
            options[f"{aspect.label} {value}" + (f": {point}" if point else "")] = (aspect.name, value)
    return options


def rate_reply(services: Any, dialogue: Optional[Dialogue], index: Any, choice: Any, rater_id: str) -> str:
    """Attach one reply-level rating to the message at `index` and store the dialogue; a status line."""
    form = form_for(services)
    option = reply_options(form).get(str(choice))
    if dialogue is None or option is None:
        return ""
    position = index[0] if isinstance(index, (list, tuple)) else index
    if not isinstance(position, int) or not 0 <= position < len(dialogue.utterances):
        return ""
    utterance = dialogue.utterances[position]
    if utterance.role != Role.AGENT:
        return ""
    aspect, value = option
    earlier = next((r for r in utterance.ratings if r.rater_id == rater_id and r.source == "arena"), None)
    values = {**(earlier.values if earlier else {}), aspect: float(value)}
    try:
        with refused_when_full(dialogue):
            replace_rating(utterance.ratings, Rating(values=values, rater_id=rater_id, rater_kind=UserKind.HUMAN,
                                                     form_version=form.version, source="arena"))
            services.store.save_dialogue(dialogue)
    except Refusal as exc:
        return notice(exc)
    return f"Saved: {str(choice).split(':')[0]} for that reply."


# -- the dialogue-level panel ------------------------------------------------------------


@dataclass
class AspectPanel:
    column: Any
    radios: list[Any]
    save: Any
    skip: Any
    note: Any

    @property
    def inputs(self) -> list[Any]:
        return list(self.radios)

    def show(self) -> tuple[Any, ...]:
        """Updates that open the panel with every answer cleared."""
        return (gr.Column(visible=True), *[gr.Radio(value=None) for _ in self.radios], "")

    def hide(self, note: str = "") -> tuple[Any, ...]:
        return (gr.Column(visible=False), *[gr.skip() for _ in self.radios], note)

    def keep(self, note: str) -> tuple[Any, ...]:
        """Updates that leave the panel open with every answer as picked, and say `note` (a refusal)."""
        return (gr.skip(), *[gr.skip() for _ in self.radios], note)

    @property
    def outputs(self) -> list[Any]:
        return [self.column, *self.radios, self.note]


def build_panel(form: AspectForm, elem_prefix: str, title: str = "Tell us more (optional)") -> AspectPanel:
    with gr.Column(visible=False, elem_id=f"{elem_prefix}-aspects") as column:
        gr.Markdown(f"**{title}.** Answer any of these, or skip them all.")
        radios = []
        with gr.Row(equal_height=False):
            for aspect in form.dialogue:
                choices = [(f"{v}" + (f" {aspect.points[v]}" if v in aspect.points else ""), v)
                           for v in aspect.scale()]
                radios.append(gr.Radio(choices, value=None, label=f"{aspect.label} ({aspect.scale_text()})",
                                       info=aspect.definition, elem_id=f"{elem_prefix}-aspect-{aspect.name}",
                                       min_width=180))
        with gr.Row():
            save = gr.Button("Save ratings", size="sm", elem_id=f"{elem_prefix}-aspects-save")
            skip = gr.Button("Skip", size="sm", variant="secondary", elem_id=f"{elem_prefix}-aspects-skip")
    note = gr.Markdown("", elem_id=f"{elem_prefix}-aspects-note")
    return AspectPanel(column=column, radios=radios, save=save, skip=skip, note=note)


def no_conversation() -> Refusal:
    return refuse("There is no conversation to rate.")


def rate_dialogue(services: Any, dialogue: Optional[Dialogue], answers: Sequence[Any], rater_id: str) -> str:
    """Store the panel's answers on the dialogue (unanswered aspects stay unrated); a status line.

    Raises `Refusal` (the tab keeps the panel and its answers, and shows why).
    """
    if dialogue is None:
        raise no_conversation()
    if dialogue.feedback is None:
        raise refuse("Please say whether you were satisfied or frustrated first.")
    form = form_for(services)
    raw = {a.name: v for a, v in zip(form.dialogue, answers, strict=True) if v is not None}
    try:
        values = form.clean(raw, "dialogue")
    except ValueError as exc:
        raise refuse(str(exc)) from None
    if not values:
        return SKIPPED
    with refused_when_full(dialogue):
        replace_rating(dialogue.ratings, Rating(values=values, rater_id=rater_id, rater_kind=UserKind.HUMAN,
                                                form_version=form.version, source="arena"))
        services.store.save_dialogue(dialogue)
    return f"Thank you: {len(values)} of {len(form.dialogue)} aspects rated and saved."
