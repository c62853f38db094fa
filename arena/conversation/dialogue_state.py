"""The explicit state of one conversation with a recommender, as the system read it.

One `DialogueState` is carried through a conversation: each user message is read once into a
change of the state, the change is applied, and the recommender and the reply read the state
alone. The state of each system turn is stored on that turn (`Utterance.state`), so a stored or
exported dialogue says why a list came: which constraints were in force (with their polarity and
scope), what had been shown where, what the user had seen, turned down or taken, and what the
last message asked.

The models here are plain data (the core knows no catalog reader); `crs.dialogue_policy` fills
them, and `crs.state_reader` asks an LLM for the change of state in the same schema.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

STATE_VERSION = 1

Slot = Literal["genre", "sub_genre", "person", "era", "kind", "mood", "audience", "subject", "like",
               "intensity", "word", "origin", "maker"]
Polarity = Literal["want", "avoid"]
Act = Literal["request", "question", "reject", "seen", "accept", "end", "chat", "correction", "shrug",
              "clarify"]


class Constraint(BaseModel):
    """One thing the conversation rules in (`want`) or out (`avoid`).

    `value` is the catalog's own word for it: a genre name, a person's name, an era as
    "1990-1999", a kind (book, series, film), an audience ("children"), a subject of the curated
    subject list, a mood of the phrase table, the id of a title held up as a model ("like"), an
    intensity (gore, violence), a word stem kept out of plots, an origin ("italy", "asia": borne out by
    the record's languages, genres or plot), or a maker (a studio or franchise its records name:
    "Disney"). `scope` says how the wanted genres combine ("all" of them or "any" one) and is "all"
    for every other slot.
    `since` is the user turn (0 first) that set it."""

    model_config = ConfigDict(extra="forbid")

    slot: Slot
    value: str
    polarity: Polarity = "want"
    scope: Literal["all", "any"] = "all"
    since: int = 0


class ShownItem(BaseModel):
    """An item a system turn showed: `turn` counts the system turns from 0, `position` from 1."""

    model_config = ConfigDict(extra="forbid")

    item_id: str
    title: str
    turn: int
    position: int


class MentionedItem(BaseModel):
    """A catalog title the user named, whether they spoke of it well, and in which user turn."""

    model_config = ConfigDict(extra="forbid")

    item_id: str
    liked: bool = True
    turn: int = 0


def liked_lately(mentioned: Sequence[MentionedItem], turns_back: int = 0) -> list[str]:
    """The ids of the titles spoken well of in the latest user turn that spoke well of any, and in the
    `turns_back` user turns before it, in the order they were named. The one reading of which liked
    titles are the user's latest word (the models of a list, the lead of "his films")."""
    liked = [m for m in mentioned if m.liked]
    latest = max((m.turn for m in liked), default=None)
    if latest is None:
        return []
    return list(dict.fromkeys(m.item_id for m in liked if m.turn >= latest - turns_back))


class OpenQuestion(BaseModel):
    """What the last message asks of an item: `aspect` (plot, stars, director, year, genres,
    suitability, scary, ...) about the items it refers to."""

    model_config = ConfigDict(extra="forbid")

    aspect: str
    item_ids: list[str] = Field(default_factory=list)


class DialogueState(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int = STATE_VERSION
    reader: str = "rules"  # who read the last message: "rules" or "llm:<model>"
    read_through: int = 0  # how many utterances of the dialogue the state has taken in
    user_turns: int = 0
    act: Act = "request"  # what the last user message does
    understood: str = ""  # one line of what the last message was read as (a clarifying turn says it)
    intents: list[str] = Field(default_factory=list)
    constraints: list[Constraint] = Field(default_factory=list)
    shown: list[ShownItem] = Field(default_factory=list)  # every item shown, oldest first
    last_shown: list[str] = Field(default_factory=list)  # ids of the last system turn's items
    last_list: list[str] = Field(default_factory=list)  # ids of the last turn that showed several
    mentioned: list[MentionedItem] = Field(default_factory=list)
    seen: list[str] = Field(default_factory=list)
    turned_down: list[str] = Field(default_factory=list)
    taken: list[str] = Field(default_factory=list)
    left_out: list[str] = Field(default_factory=list)  # ids kept out of lists: turned down, seen, variants
    about: list[str] = Field(default_factory=list)  # ids the last message refers to
    open_question: Optional[OpenQuestion] = None
    focus: list[str] = Field(default_factory=list)  # ids "it" refers to when the last reply showed none
    audience_asked: bool = False  # the audience constraint came from a question only, not a request
    # What each user message gives the ranker to read (empty for a question, closing, small talk).
    asked: list[str] = Field(default_factory=list)
    has_preference: bool = False
    # Constraints the list of this turn gave up because nothing in the catalog kept them all.
    relaxed: list[Constraint] = Field(default_factory=list)

    def wanted(self, slot: str) -> list[str]:
        return [c.value for c in self.constraints if c.slot == slot and c.polarity == "want"]

    def avoided(self, slot: str) -> list[str]:
        return [c.value for c in self.constraints if c.slot == slot and c.polarity == "avoid"]

    def shown_ids(self) -> set[str]:
        return {s.item_id for s in self.shown}
