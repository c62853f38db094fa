"""The one dialogue model that flows from chat to store to scorer to export.

A `Dialogue` is the unit everything else works on: the chat UI and the runner
append utterances, the store persists it, scorers read it and attach `Score`s,
and the exporters write it in our own JSON or the CRSArena-Dial/DialogueKit
layout (see `arena.corpus.dialoguekit`).
"""

from __future__ import annotations

import uuid
from datetime import datetime, timezone
from enum import Enum
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

from arena.conversation.dialogue_state import DialogueState

SCHEMA_VERSION = 1


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def new_id() -> str:
    return uuid.uuid4().hex


class Role(str, Enum):
    USER = "USER"
    AGENT = "AGENT"


class DialogueAct(BaseModel):
    """An IARD-style dialogue act: an intent plus slot values.

    `slot_values` keeps the IARD form: a list of `[SLOT, value]` or
    `[SLOT, value, start, end]` lists.
    """

    model_config = ConfigDict(extra="forbid")

    intent: str
    slot_values: list[list[Any]] = Field(default_factory=list)


class RecommendedItem(BaseModel):
    model_config = ConfigDict(extra="forbid")

    item_id: str
    title: str


class UserKind(str, Enum):
    HUMAN = "human"
    SIMULATOR = "simulator"


class Rating(BaseModel):
    """One rater's answers to an aspect rating form (see `arena.crowd.aspects`).

    Used for a whole dialogue (`Dialogue.ratings`) and for one reply
    (`Utterance.ratings`). `values` holds only the aspects the rater answered:
    an aspect that is missing was skipped (or, for a simulator, could not be
    read from its answer) and is unrated, never 0.
    """

    model_config = ConfigDict(extra="forbid")

    values: dict[str, float] = Field(default_factory=dict)
    rater_id: str = "anonymous"
    rater_kind: UserKind = UserKind.HUMAN
    form_version: str
    prompt_version: Optional[str] = None  # simulator ratings: the prompt that asked for them
    model: Optional[str] = None  # simulator ratings: the LLM that answered
    source: str = "arena"  # "arena" (rated live), "import" (from a file) or "simulator"
    # Imported aspects the form does not ask: each one's scale (min, max), declared in the import's
    # mapping file or inferred from the file's values. None when every value is an aspect of the form.
    extra_scales: Optional[dict[str, tuple[float, float]]] = None
    error: Optional[str] = None  # why a simulator's answer left aspects unrated
    timestamp: datetime = Field(default_factory=utc_now)


def replace_rating(ratings: list[Rating], new: Rating) -> None:
    """Put `new` in place of an earlier rating by the same rater from the same source, else append."""
    for i, old in enumerate(ratings):
        if old.rater_id == new.rater_id and old.rater_kind == new.rater_kind and old.source == new.source:
            ratings[i] = new
            return
    ratings.append(new)


class Utterance(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: Role
    text: str
    utterance_id: str = Field(default_factory=new_id)
    items: list[RecommendedItem] = Field(default_factory=list)
    dialogue_acts: Optional[list[DialogueAct]] = None
    # Who produced `dialogue_acts`: the annotator's "name/version" label; None when the acts came
    # with the dialogue (an annotated corpus) or were never made.
    acts_annotator: Optional[str] = None
    timestamp: datetime = Field(default_factory=utc_now)
    error: Optional[str] = None
    ratings: list[Rating] = Field(default_factory=list)  # per-reply aspect ratings (e.g. relevance)
    # A system turn: the conversation's state as the system read it when it replied (None: the
    # system keeps none, or the turn came from a corpus).
    state: Optional[DialogueState] = None


class UserInfo(BaseModel):
    """Who played the user: a person (pseudonymous id) or a simulator."""

    model_config = ConfigDict(extra="forbid")

    kind: UserKind = UserKind.HUMAN
    id: str = "anonymous"
    simulator: Optional[str] = None  # simulator type when kind == simulator
    details: dict[str, Any] = Field(default_factory=dict)  # goal/profile, seed, model


Sentiment = Literal["satisfied", "frustrated"]
# Each sentiment by its own name: `SENTIMENTS.get(text)` is the sentiment `text` names, or None.
SENTIMENTS: dict[Optional[str], Sentiment] = {"satisfied": "satisfied", "frustrated": "frustrated"}


class Feedback(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sentiment: Sentiment
    comment: str = ""
    timestamp: datetime = Field(default_factory=utc_now)


class Score(BaseModel):
    """One metric's result. `value is None` means *unscored*, never zero."""

    model_config = ConfigDict(extra="forbid")

    # NaN and infinities are refused: they are not JSON and would poison means.
    value: Optional[float] = Field(default=None, allow_inf_nan=False)
    scorer: str
    version: str
    model: Optional[str] = None
    details: dict[str, Any] = Field(default_factory=dict)
    error: Optional[str] = None
    timestamp: datetime = Field(default_factory=utc_now)

    @property
    def scored(self) -> bool:
        return self.value is not None


class Dialogue(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_version: int = SCHEMA_VERSION
    dialogue_id: str = Field(default_factory=new_id)
    crs_id: str
    user: UserInfo = Field(default_factory=UserInfo)
    utterances: list[Utterance] = Field(default_factory=list)
    feedback: Optional[Feedback] = None
    scores: dict[str, Score] = Field(default_factory=dict)
    ratings: list[Rating] = Field(default_factory=list)  # dialogue-level aspect ratings, optional
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime = Field(default_factory=utc_now)
    ended_at: Optional[datetime] = None
    end_reason: Optional[str] = None

    # -- building -----------------------------------------------------------
    def add_user(self, text: str, **kwargs: Any) -> Utterance:
        utt = Utterance(role=Role.USER, text=text, **kwargs)
        self.utterances.append(utt)
        return utt

    def add_agent(
        self,
        text: str,
        items: Optional[list[RecommendedItem]] = None,
        **kwargs: Any,
    ) -> Utterance:
        utt = Utterance(role=Role.AGENT, text=text, items=list(items or []), **kwargs)
        self.utterances.append(utt)
        return utt

    def end(self, reason: str) -> None:
        if self.ended_at is None:
            self.ended_at = utc_now()
        self.end_reason = reason

    # -- reading ------------------------------------------------------------
    @property
    def ended(self) -> bool:
        return self.ended_at is not None

    @property
    def is_simulated(self) -> bool:
        return self.user.kind == UserKind.SIMULATOR

    def user_turns(self) -> list[Utterance]:
        return [u for u in self.utterances if u.role == Role.USER]

    def agent_turns(self) -> list[Utterance]:
        return [u for u in self.utterances if u.role == Role.AGENT]

    @property
    def num_turns(self) -> int:
        """Number of user turns (a turn is one user utterance and its reply)."""
        return len(self.user_turns())

    def recommended_items(self) -> list[RecommendedItem]:
        """Every item shown in the dialogue, first occurrence order, no duplicates."""
        seen: set[str] = set()
        out: list[RecommendedItem] = []
        for utt in self.agent_turns():
            for item in utt.items:
                if item.item_id not in seen:
                    seen.add(item.item_id)
                    out.append(item)
        return out

    def utterance(self, utterance_id: str) -> Optional[Utterance]:
        return next((u for u in self.utterances if u.utterance_id == utterance_id), None)

    def errors(self) -> list[str]:
        return [u.error for u in self.utterances if u.error]

    def system_failed(self) -> bool:
        """Whether the system failed a turn (an agent utterance recorded with an error): such a
        dialogue and its battle say nothing about the system's quality and are not counted."""
        return any(u.error for u in self.utterances if u.role == Role.AGENT)

    @property
    def in_battle(self) -> bool:
        """Whether the dialogue is one side of a battle (the Battle tab's, or a study task's in battle mode):
        it counts nowhere until the battle's vote is stored (`arena.crowd.counting`)."""
        return self.metadata.get("source") == "battle" or "battle_id" in self.metadata

    def score_values(self) -> dict[str, Optional[float]]:
        return {name: s.value for name, s in sorted(self.scores.items())}

    def set_score(self, name: str, score: Score) -> None:
        self.scores[name] = score

    # -- (de)serialising ------------------------------------------------------
    def to_json(self, **kwargs: Any) -> str:
        return self.model_dump_json(**kwargs)

    @classmethod
    def from_json(cls, text: str | bytes) -> "Dialogue":
        return cls.model_validate_json(text)


# Dialogue.metadata keys naming where the dialogue's acts came from (set by the scorer that annotated them).
ACTS_METADATA_KEYS = ("acts_annotator", "acts_model")


def copy_acts(source: Dialogue, target: Dialogue) -> bool:
    """Give `target` the dialogue acts of `source` and their provenance; True when anything changed.

    Utterances are matched by id, so a stored dialogue takes the acts its scores
    were computed from without the rest of a possibly older copy (its feedback,
    ratings) overwriting newer fields. Utterances `source` lacks are left alone.
    """
    by_id = {u.utterance_id: u for u in source.utterances}
    changed = False
    for utt in target.utterances:
        new = by_id.get(utt.utterance_id)
        if new is None:
            continue
        if utt.dialogue_acts != new.dialogue_acts or utt.acts_annotator != new.acts_annotator:
            utt.dialogue_acts = [a.model_copy(deep=True) for a in new.dialogue_acts] \
                if new.dialogue_acts is not None else None
            utt.acts_annotator = new.acts_annotator
            changed = True
    for key in ACTS_METADATA_KEYS:
        if source.metadata.get(key) != target.metadata.get(key):
            if key in source.metadata:
                target.metadata[key] = source.metadata[key]
            else:
                target.metadata.pop(key, None)
            changed = True
    return changed


VoteChoice = Literal["A", "B", "tie", "both_bad"]


class Vote(BaseModel):
    """A side-by-side battle's outcome: which of two dialogues' systems was better."""

    model_config = ConfigDict(extra="forbid")

    vote_id: str = Field(default_factory=new_id)
    battle_id: str
    dialogue_a: str
    dialogue_b: str
    crs_a: str
    crs_b: str
    choice: VoteChoice
    comment: str = ""
    user_id: str = "anonymous"
    user_kind: UserKind = UserKind.HUMAN
    timestamp: datetime = Field(default_factory=utc_now)
    # The crowd: None for the open arena, else the study (arena.crowd.study) and its file's version.
    study: Optional[str] = None
    study_version: Optional[int] = None

    @property
    def winner(self) -> Optional[str]:
        return {"A": self.crs_a, "B": self.crs_b}.get(self.choice)
