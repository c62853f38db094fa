"""Aspect ratings, without the page: the rating form's answers stored on a dialogue or one of its replies.

The form is `assets/ratings/aspects_v1.yaml` unless ARENA_RATING_FORM names
another. Dialogue-level aspects are asked after Satisfied/Frustrated (Chat,
Battle) or with a study's task; every question may be left open. Reply-level
aspects (relevance) rate one system message. Ratings are a field of the
Dialogue (or of the rated utterance), so they are stored with it in one write.
The panel and the feedback menu that ask for them are `webapp.ui.parts.aspect_form`.
A rating is written onto the stored copy, over its version, and only while the
page's copy is that conversation: a conversation deleted elsewhere is not
brought back by a late rating (`webapp.sessions.turn_step.CHANGED_ELSEWHERE`).
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from arena.crowd.aspects import AspectForm, load_form
from arena.dialogue import Dialogue, Rating, Role, UserKind, replace_rating
from webapp.sessions.refusal import Refusal, refuse
from webapp.sessions.turn_step import ChangedElsewhere, read_current, refused_when_full, same_conversation

SKIPPED = "Skipped; thank you all the same."


def _store_rating(services: Any, dialogue: Dialogue, apply: Callable[[Dialogue], None]) -> None:
    """Apply a rating to the page's copy and to the stored one, and store it over the stored version."""
    stored = read_current(services, dialogue)
    if stored is None or not same_conversation(dialogue, stored, label=False):
        raise ChangedElsewhere()
    with refused_when_full(dialogue):
        apply(dialogue)
        apply(stored.dialogue)
        services.store.save_dialogue_checked(stored.dialogue, stored.version, finished=True)


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
    """Attach one reply-level rating to the message at `index` and store the dialogue; a status line
    ("" when there is nothing to rate). A full store raises `Refusal`."""
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
    rating = Rating(values=values, rater_id=rater_id, rater_kind=UserKind.HUMAN, form_version=form.version,
                    source="arena")
    _store_rating(services, dialogue, lambda d: replace_rating(d.utterances[position].ratings, rating))
    return f"Saved: {str(choice).split(':')[0]} for that reply."


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
    rating = Rating(values=values, rater_id=rater_id, rater_kind=UserKind.HUMAN, form_version=form.version,
                    source="arena")
    _store_rating(services, dialogue, lambda d: replace_rating(d.ratings, rating))
    return f"Thank you: {len(values)} of {len(form.dialogue)} aspects rated and saved."
