"""A crowdsourced study: the file a researcher writes, and which crowd a dialogue or vote belongs to.

A study file (YAML, see `assets/studies/example.yaml`) fixes what one crowd of
recruited workers does: the systems and mode (single chat or battle), how many
tasks each worker does, the quota of each cell (a system, or a pair of systems
in battle mode), the attention check, the opening dates and how a finished
worker is sent back to the recruiting platform (a completion code or a
redirect URL the page forwards them to, with the completion code as a query
parameter when `redirect_code_param` names one, as Prolific's
`https://app.prolific.com/submissions/complete?cc=CODE` expects). `parse_study` refuses a bad file
with one line naming the field.

Every dialogue and vote records its crowd: "open" for the public arena, else
the study's id (and the study file's version) in `Dialogue.metadata` and on
the `Vote`. Leaderboards, meta-evaluation and exports filter by it.
"""

from __future__ import annotations

import itertools
import re
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any, Literal, Mapping, Optional
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

OPEN_CROWD = "open"
STUDY_KEY = "study"  # Dialogue.metadata key of the study id
STUDY_VERSION_KEY = "study_version"
# Dialogue.metadata key of a known-answer task's dialogue: its kind and the verdict it is known to deserve.
KNOWN_ANSWER_KEY = "known_answer"
KNOWN_CROWD_SUFFIX = "~known"
PAIR_SEPARATOR = "|"
STUDY_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{1,62}$")
COMPLETION_CODE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # shown as is, and typed back on the platform
QUERY_PARAM = re.compile(r"^[A-Za-z0-9_]{1,32}$")


class StudyError(ValueError):
    """A study file that cannot be used; the message is one line naming the field."""


class AttentionCheck(BaseModel):
    """A question with one right answer. `instructed`: an item in the verdict form of task `after_task`
    ("to show you read this, choose ..."); `gold`: a step of its own after that task, where the worker
    reads `text` (a conversation whose verdict is known) and answers."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["instructed", "gold"]
    after_task: int = Field(1, ge=1)
    question: str = Field(min_length=1)
    options: list[str] = Field(min_length=2)
    answer: str
    text: str = ""  # gold: the Markdown the worker judges

    @model_validator(mode="after")
    def _answer_is_an_option(self) -> "AttentionCheck":
        if self.answer not in self.options:
            raise ValueError(f"answer {self.answer!r} is not one of the options")
        if self.kind == "gold" and not self.text.strip():
            raise ValueError("a gold check needs the text the worker judges")
        return self


KnownKind = Literal["good", "off_topic", "replay"]
# The verdict a careful worker gives each kind of known-answer task.
KNOWN_VERDICTS: dict[KnownKind, str] = {"good": "satisfied", "off_topic": "frustrated"}


class KnownReplay(BaseModel):
    """A stored dialogue replayed for the worker to judge, with the rating it is known to deserve."""

    model_config = ConfigDict(extra="forbid")

    dialogue_id: str = Field(min_length=1)
    answer: Literal["satisfied", "frustrated"]


class KnownAnswers(BaseModel):
    """Tasks whose right verdict is known, mixed in among a worker's tasks: a scripted system whose replies
    clearly fit the request (`good`) or clearly do not (`off_topic`), or a stored dialogue replayed for the
    worker to judge (`replay`). In a battle study each one is a battle of the `good` system against the
    `off_topic` one, and the right vote is the good side (`kinds` is for chat studies).
    `positions`: where they come in the worker's sequence of tasks (1 = first),
    empty for places drawn at random per worker. A worker whose share of right verdicts is below
    `min_accuracy` is flagged."""

    model_config = ConfigDict(extra="forbid")

    count: int = Field(1, ge=1)
    positions: list[int] = Field(default_factory=list)
    kinds: list[KnownKind] = Field(default_factory=lambda: list(KNOWN_VERDICTS), min_length=1)
    replays: list[KnownReplay] = Field(default_factory=list)
    min_accuracy: float = Field(0.5, ge=0, le=1)

    @model_validator(mode="after")
    def _placed(self) -> "KnownAnswers":
        if self.positions and (len(self.positions) != self.count or len(set(self.positions)) != self.count):
            raise ValueError("positions: give one distinct position per known-answer task, or none")
        if any(n < 1 for n in self.positions):
            raise ValueError("positions: a position is 1 or more")
        if "replay" in self.kinds and not self.replays:
            raise ValueError("replays: the replay kind needs stored dialogues with their known rating")
        return self


class BonusRule(BaseModel):
    """What a worker earns on top of the reward, in the workspace currency's major units (pounds, dollars):
    `fixed` for each approved worker, or `per_valid_task` for each valid task; `cap` bounds one worker's
    bonus. `arena.crowd.bonuses.bonus_lines` applies it."""

    model_config = ConfigDict(extra="forbid")

    fixed: Optional[Decimal] = Field(None, gt=0, decimal_places=2)
    per_valid_task: Optional[Decimal] = Field(None, gt=0, decimal_places=2)
    cap: Optional[Decimal] = Field(None, gt=0, decimal_places=2)

    @model_validator(mode="after")
    def _one_amount(self) -> "BonusRule":
        if (self.fixed is None) == (self.per_valid_task is None):
            raise ValueError("give either fixed or per_valid_task (an amount such as 0.50)")
        return self


Device = Literal["desktop", "tablet", "mobile"]


class ProlificSettings(BaseModel):
    """How the study is created on Prolific from the Studies page (`prolific:` in the study file). The
    title, the participant link and the completion code come from the rest of the file."""

    model_config = ConfigDict(extra="forbid")

    reward: int = Field(ge=1)  # per participant, in the workspace currency's smallest unit (pence, cents)
    estimated_minutes: int = Field(ge=1)
    places: Optional[int] = Field(None, ge=1)  # default: the study's total quota (`Study.total_places`)
    description: str = Field(min_length=1)
    devices: list[Device] = Field(default_factory=lambda: list[Device](["desktop"]), min_length=1)
    # What Prolific does with a submission that brings the completion code: hold it for the researcher's
    # review (the arena's flags decide), or approve it at once.
    completion_action: Literal["MANUALLY_REVIEW", "AUTOMATICALLY_APPROVE"] = "MANUALLY_REVIEW"

    @field_validator("devices")
    @classmethod
    def _once_each(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("a device is listed twice")
        return value


class Study(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    title: str = Field(min_length=1)
    consent: str = Field(min_length=1)  # Markdown
    instructions: str = Field(min_length=1)  # Markdown
    mode: Literal["chat", "battle"] = "chat"
    systems: list[str] = Field(min_length=1)
    dataset: Optional[str] = None
    tasks_per_participant: int = Field(1, ge=1)
    min_user_turns: int = Field(1, ge=1)
    min_task_seconds: float = Field(0.0, ge=0)  # a faster task flags the worker
    aspects: Optional[Literal["default"]] = None  # the app's aspect form after each verdict, or none
    quota_per_cell: int = Field(10, ge=1)
    quotas: dict[str, int] = Field(default_factory=dict)  # cell -> quota, overriding quota_per_cell
    repeat_systems: bool = False  # may a worker meet the same system (pair) again?
    opens: Optional[datetime] = None
    closes: Optional[datetime] = None
    completion_code: Optional[str] = None
    redirect_url: Optional[str] = None
    # e.g. "cc": the completion code rides on the redirect as ?cc=CODE
    redirect_code_param: Optional[str] = None
    attention_check: Optional[AttentionCheck] = None
    abandon_after_minutes: float = Field(60.0, gt=0)  # an unfinished task's cell is freed after this
    # A task's place is held while the worker is active: it lapses after this many minutes without a
    # message or verdict (and in any case after abandon_after_minutes), so a worker who left frees it soon.
    idle_minutes: float = Field(5.0, gt=0)
    # A task takes its place when it is handed out (Start), as a platform reserves a place for a worker who
    # starts: held this long for the first message, then `idle_minutes` after each message or verdict.
    start_hold_minutes: float = Field(10.0, gt=0)
    # Which worker ids a link may carry: "prolific" (Prolific's own ids, 24 hexadecimal characters), or
    # "any" (any printable id of up to 128 characters, for other platforms; nothing checks that it is real).
    worker_ids: Literal["prolific", "any"] = "prolific"
    flagged_counts: bool = False  # does a flagged worker's finished task fill a place? (false: it is freed)
    new_workers_per_minute: int = Field(5, ge=1)  # new worker ids one network address may bring per minute
    # Where the workers come from: Prolific (its link parameters and statuses) or Amazon Mechanical Turk
    # (workerId, assignmentId, hitId, turkSubmitTo; the finished task is posted back to MTurk's form).
    platform: Literal["prolific", "mturk"] = "prolific"
    known_answers: Optional[KnownAnswers] = None
    bonus: Optional[BonusRule] = None  # a bonus on top of the reward, paid from the Studies page
    prolific: Optional[ProlificSettings] = None  # creating and running the study on Prolific from the app

    @field_validator("id")
    @classmethod
    def _id_is_a_slug(cls, value: str) -> str:
        if not STUDY_ID.match(value):
            raise ValueError("must be 2-63 lower-case letters, digits, '-' or '_'")
        if value == OPEN_CROWD:
            raise ValueError(f"{OPEN_CROWD!r} names the public arena")
        return value

    @field_validator("opens", "closes")
    @classmethod
    def _utc(cls, value: Optional[datetime]) -> Optional[datetime]:
        if value is not None and value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        return value

    @field_validator("completion_code")
    @classmethod
    def _plain_code(cls, value: Optional[str]) -> Optional[str]:
        if value is not None and not COMPLETION_CODE.match(value):
            raise ValueError("must be 1-64 letters, digits, '-' or '_'")
        return value

    @field_validator("redirect_url")
    @classmethod
    def _https(cls, value: Optional[str]) -> Optional[str]:
        # The page forwards workers there by script: only a plain web address, never javascript: or the like.
        if value is None:
            return value
        parts = urlsplit(value)
        if parts.scheme not in ("https", "http") or not parts.hostname or re.search(r"[\s\"'<>\\`]", value):
            raise ValueError("must be an http(s) address such as https://app.prolific.com/submissions/complete")
        return value

    @field_validator("redirect_code_param")
    @classmethod
    def _param_name(cls, value: Optional[str]) -> Optional[str]:
        if value is not None and not QUERY_PARAM.match(value):
            raise ValueError("must be 1-32 letters, digits or '_' (a query parameter's name, such as cc)")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> "Study":
        self._check_systems()
        self._check_cells()
        self._check_schedule_and_ending()
        return self

    def _check_systems(self) -> None:
        if len(set(self.systems)) != len(self.systems):
            raise ValueError("systems: a system is listed twice")
        if self.mode == "battle" and len(self.systems) < 2:
            raise ValueError("systems: a battle study needs at least two")
        if self.mode == "battle" and self.known_answers and "replay" in self.known_answers.kinds:
            # A battle's known-answer task is always a clearly good system against a clearly off-topic one.
            raise ValueError("known_answers: kinds: a battle study's known-answer task pairs a good and an "
                             "off-topic system; replay is for chat studies")
        if self.mode == "battle" and self.aspects:
            raise ValueError("aspects: the aspect form is offered in chat studies only")

    def _check_cells(self) -> None:
        cells = self.cells()
        for cell, quota in self.quotas.items():
            if cell not in cells:
                raise ValueError(f"quotas: {cell!r} is not a cell of this study (one of {', '.join(cells)})")
            if quota < 0:
                raise ValueError(f"quotas: {cell!r} must be 0 or more")
        if not self.repeat_systems and self.tasks_per_participant > len(cells):
            raise ValueError(
                f"tasks_per_participant: {self.tasks_per_participant} tasks but only {len(cells)} "
                "cells, and repeat_systems is false"
            )

    def _check_schedule_and_ending(self) -> None:
        if self.opens and self.closes and self.closes <= self.opens:
            raise ValueError("closes: must be after opens")
        if self.platform == "mturk" and self.redirect_url:
            raise ValueError("redirect_url: an MTurk study returns its workers through MTurk's submit form")
        if not self.completion_code and not self.redirect_url and self.platform != "mturk":
            raise ValueError("completion_code: a study needs a completion code or a redirect_url")
        if self.redirect_code_param and not (self.redirect_url and self.completion_code):
            raise ValueError("redirect_code_param: needs both a redirect_url and a completion_code")
        if self.attention_check and self.attention_check.after_task > self.tasks_per_participant:
            raise ValueError("attention_check: after_task is beyond tasks_per_participant")
        if self.prolific is not None and not self.completion_code:
            raise ValueError("prolific: a study run on Prolific needs a completion_code")
        if self.prolific is not None and self.platform != "prolific":
            raise ValueError("prolific: the study's platform is not Prolific")
        known = self.known_answers
        if known and any(n > self.tasks_per_participant + known.count for n in known.positions):
            raise ValueError("known_answers: a position is beyond the worker's last task")

    def all_tasks(self) -> int:
        """How many tasks a worker does in all: the study's own, and its known-answer tasks."""
        return self.tasks_per_participant + (self.known_answers.count if self.known_answers else 0)

    # -- cells and quotas ----------------------------------------------------------
    def cells(self) -> list[str]:
        """What a quota counts: a system (chat) or an order-free pair "a|b" (battle)."""
        if self.mode == "chat":
            return list(self.systems)
        return [PAIR_SEPARATOR.join(sorted(p)) for p in itertools.combinations(self.systems, 2)]

    def quota(self, cell: str) -> int:
        return self.quotas.get(cell, self.quota_per_cell)

    def total_places(self) -> int:
        """How many workers the quotas take in all: every cell's finished tasks, over the tasks each
        worker does (rounded up, so that the last cells can fill)."""
        tasks = sum(self.quota(cell) for cell in self.cells())
        return max(1, -(-tasks // self.tasks_per_participant))

    def platform_places(self) -> int:
        """The places to open on the platform: the file's `prolific.places`, else the total quota."""
        if self.prolific is not None and self.prolific.places is not None:
            return self.prolific.places
        return self.total_places()

    def open_at(self, now: datetime) -> Optional[str]:
        """None when the study takes workers at `now`, else why not (for the worker)."""
        if self.opens and now < self.opens:
            return f"This study opens on {self.opens.strftime('%Y-%m-%d %H:%M UTC')}."
        if self.closes and now >= self.closes:
            return "This study has closed. Thank you for your interest."
        return None

    def completion_url(self) -> Optional[str]:
        """Where a finished worker is forwarded: `redirect_url`, with `redirect_code_param=completion_code`
        added to its query when the file asks for it; None without a redirect_url."""
        if not self.redirect_url:
            return None
        if not self.redirect_code_param:
            return self.redirect_url
        parts = urlsplit(self.redirect_url)
        query = [
            (k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != self.redirect_code_param
        ]
        query.append((self.redirect_code_param, self.completion_code or ""))
        return urlunsplit(parts._replace(query=urlencode(query)))


def cell_systems(cell: str) -> list[str]:
    return cell.split(PAIR_SEPARATOR)


def _field(error: Mapping[str, Any]) -> str:
    where = ".".join(str(part) for part in error.get("loc", ()))
    return where


def parse_study(text: str) -> Study:
    """The study in a YAML text; StudyError (one line naming the field) for anything unusable."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" at line {mark.line + 1}" if mark is not None else ""
        raise StudyError(f"study file: not valid YAML{line}") from None
    if not isinstance(data, dict):
        raise StudyError("study file: must be a mapping of fields (id, title, consent, ...)")
    try:
        return Study.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = _field(first)
        message = str(first.get("msg", "invalid")).removeprefix("Value error, ")
        if not where:  # a check across fields names its field at the start of its message
            where, _, message = message.partition(": ") if ": " in message else ("study", "", message)
        raise StudyError(f"study file: {where}: {' '.join(message.split())}") from None


# -- crowds ----------------------------------------------------------------------------


def crowd_of_dialogue(dialogue: Any) -> str:
    """The dialogue's crowd; a known-answer task's is its study's with `KNOWN_CROWD_SUFFIX`, a crowd of its
    own that no board or export selects (`arena.crowd.counting`)."""
    return crowd_of_metadata(dialogue.metadata)


def crowd_of_metadata(metadata: Optional[Mapping[str, Any]]) -> str:
    metadata = metadata or {}
    crowd = metadata.get(STUDY_KEY) or OPEN_CROWD
    return crowd + KNOWN_CROWD_SUFFIX if metadata.get(KNOWN_ANSWER_KEY) else crowd


def crowd_of_vote(vote: Any) -> str:
    return getattr(vote, "study", None) or OPEN_CROWD
