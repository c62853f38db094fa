"""Hypothesis strategies and builders for rich dialogues used across the store tests."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from hypothesis import strategies as st

from arena.dialogue import (
    Dialogue,
    DialogueAct,
    Feedback,
    RecommendedItem,
    Role,
    Score,
    UserInfo,
    UserKind,
    Utterance,
    Vote,
)

# Text as people type it: any printable unicode, quotes, newlines; no lone surrogates.
text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
ids = st.text(st.characters(whitelist_categories=("Ll", "Lu", "Nd"), whitelist_characters="-_:"),
              min_size=1, max_size=24)
moments = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1),
                       timezones=st.sampled_from([timezone.utc, timezone(timedelta(hours=2))]))
json_scalars = st.none() | st.booleans() | st.integers(-10**9, 10**9) | text | \
    st.floats(allow_nan=False, allow_infinity=False)
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(text, inner, max_size=3), max_leaves=8)
json_objects = st.dictionaries(text, json_values, max_size=3)

acts = st.builds(DialogueAct, intent=st.sampled_from(["IQU", "REC-S", "ACC", "CRI-F", "OTH"]),
                 slot_values=st.lists(st.sampled_from([["GENRE", "comedy"], ["TITLE", "Heat", 3, 7]]),
                                      max_size=2))
items = st.builds(RecommendedItem, item_id=ids, title=text)
utterances = st.builds(
    Utterance, role=st.sampled_from(list(Role)), text=text, utterance_id=ids,
    items=st.lists(items, max_size=3), dialogue_acts=st.none() | st.lists(acts, max_size=3),
    acts_annotator=st.none() | st.sampled_from(["offline/13-3f2a", "llm-acts/prompt2-9c1d"]), timestamp=moments, error=st.none() | text,
)
scores = st.builds(
    Score, value=st.none() | st.floats(allow_nan=False, allow_infinity=False), scorer=ids, version=ids,
    model=st.none() | text, details=json_objects, error=st.none() | text, timestamp=moments,
)
users = st.builds(UserInfo, kind=st.sampled_from(list(UserKind)), id=ids, simulator=st.none() | ids,
                  details=json_objects)
feedbacks = st.builds(Feedback, sentiment=st.sampled_from(["satisfied", "frustrated"]), comment=text,
                      timestamp=moments)
dialogues = st.builds(
    Dialogue, dialogue_id=ids, crs_id=ids, user=users, utterances=st.lists(utterances, max_size=6),
    feedback=st.none() | feedbacks,
    scores=st.dictionaries(st.sampled_from(["rdl", "srrr", "sr", "core.overall", "core.coherence"]), scores,
                           max_size=3),
    metadata=json_objects, created_at=moments, ended_at=st.none() | moments, end_reason=st.none() | text,
)


def rich_dialogue(crs_id: str = "kbrd_redial", user_id: str = "user-7f3a9c21", *,
                  kind: UserKind = UserKind.HUMAN, created_at: datetime | None = None,
                  sentiment: str | None = "satisfied", n_turns: int = 2) -> Dialogue:
    """A finished, rated, scored dialogue with items, acts and an error."""
    d = Dialogue(crs_id=crs_id, user=UserInfo(kind=kind, id=user_id,
                                              simulator="goal" if kind == UserKind.SIMULATOR else None))
    if created_at is not None:
        d.created_at = created_at
    for i in range(n_turns):
        d.add_user(f"I want a funny movie #{i} \u2014 \"quoted\"\nsecond line",
                   dialogue_acts=[DialogueAct(intent="IQU", slot_values=[["GENRE", "comedy", 15, 20]])])
        d.add_agent("How about Heat (1995)?", items=[RecommendedItem(item_id="123", title="Heat (1995)")],
                    error="timeout" if i == 1 else None)
    if sentiment is not None:
        d.feedback = Feedback(sentiment=sentiment, comment="nice, thanks")
    d.set_score("rdl", Score(value=0.3, scorer="rdl", version="1", details={"acts": ["IQU", "REC-S"]}))
    d.set_score("core.overall", Score(value=71.2, scorer="core", version="1", model="fake:judge"))
    d.set_score("srrr", Score(value=None, scorer="srrr", version="1", error="llm failed"))
    d.end("user_stopped")
    return d


def battle(crs_a: str = "kbrd_redial", crs_b: str = "barcor_redial", user_id: str = "user-battle-01",
           choice: str = "A") -> tuple[Dialogue, Dialogue, Vote]:
    a = rich_dialogue(crs_a, user_id)
    b = rich_dialogue(crs_b, user_id, sentiment="frustrated")
    vote = Vote(battle_id=f"battle-{a.dialogue_id[:8]}", dialogue_a=a.dialogue_id, dialogue_b=b.dialogue_id,
                crs_a=crs_a, crs_b=crs_b, choice=choice, user_id=user_id)
    return a, b, vote
