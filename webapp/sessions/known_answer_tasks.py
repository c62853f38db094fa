"""A study's known-answer tasks in the worker's flow: handing one out, its turns, and judging the verdict.

A known-answer task takes no place in a quota cell (it tests the worker, not a
system). Its dialogue is marked (`KNOWN_ANSWER_KEY`), so no board or export
counts it. `good` and `off_topic` tasks talk with the scripted system of
`crs.known_answer` over the study's catalog; a `replay` shows a stored
dialogue, copied under a new id, for the worker to judge without writing. In a
battle study a known-answer task is a battle of the two scripted systems, on
sides drawn per worker, and the vote is judged (`known_battle`); it is kept in
the worker's row only, never stored as a vote, so no board, export or session
order of votes meets it.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Optional

from arena.catalogs.catalog import load_catalog
from arena.conversation.runner import DialogueEnded, DialogueRunner, MessageRejected
from arena.corpus.records import PSEUDONYM_PREFIX
from arena.crowd.known_answers import (
    RESULTS_KEY, accuracy_flag, known_battle, known_positions, known_task,
)
from arena.crowd.study import KNOWN_ANSWER_KEY, STUDY_KEY, STUDY_VERSION_KEY, Study
from arena.dialogue import Dialogue, UserInfo, UserKind
from arena.store import Participant
from crs.known_answer import KnownAnswerCRS
from webapp.services import Services
from webapp.sessions.refusal import refuse
from webapp.sessions.turn_step import refused_when_full, save_checked

DEFAULT_CATALOG = "redial"
REPLAY_LINE = "This conversation is one to read, not to continue: please give your verdict on it."
NO_REPLAY = "This study's known-answer conversation {id!r} is not in this arena's store."


def known_done(p: Participant) -> int:
    return len(p.data.get(RESULTS_KEY) or [])


def next_is_known(study: Study, p: Participant) -> bool:
    """Whether the worker's next task is a known-answer one: its place in their sequence is one of the known
    positions, or their own tasks are all done and known-answer ones remain."""
    if study.known_answers is None or known_done(p) >= study.known_answers.count:
        return False
    position = len(p.data.get("task_seconds", [])) + known_done(p) + 1
    return (position in known_positions(study, p.pseudonym)
            or len(p.data.get("task_seconds", [])) >= study.tasks_per_participant)


def known_dialogue(services: Services, study: Study, p: Participant, dialogue_id: str,
                   preview: dict[str, Any]) -> Dialogue:
    """The dialogue of the worker's next known-answer task (not yet stored); `preview`: the metadata a
    researcher's preview walk adds."""
    spec = known_task(study, known_done(p))
    metadata = {"source": "study", STUDY_KEY: study.id, STUDY_VERSION_KEY: p.study_version, **preview,
                KNOWN_ANSWER_KEY: spec}
    user = UserInfo(kind=UserKind.HUMAN, id=PSEUDONYM_PREFIX + p.pseudonym)
    if spec["kind"] != "replay":
        return Dialogue(dialogue_id=dialogue_id, crs_id=f"known_answer_{spec['kind']}", user=user,
                        metadata=metadata)
    stored = services.store.get_dialogue(spec["replay_of"])
    if stored is None:
        raise refuse(NO_REPLAY.format(id=spec["replay_of"]))
    # The replay shows the turns only: no verdict, ratings or metadata of the stored one.
    return Dialogue(dialogue_id=dialogue_id, crs_id=stored.crs_id, user=user, metadata=metadata,
                    utterances=[u.model_copy(update={"ratings": []}) for u in stored.utterances])


def known_battle_dialogues(study: Study, p: Participant, ids: dict[str, str], battle_id: str,
                           preview: dict[str, Any]) -> list[Dialogue]:
    """The two dialogues (sides A, B; `ids`: side -> dialogue id) of the worker's next known-answer battle
    (not yet stored): the good system on one side, the off-topic one on the other."""
    spec = known_battle(p.pseudonym, known_done(p))
    user = UserInfo(kind=UserKind.HUMAN, id=PSEUDONYM_PREFIX + p.pseudonym)
    return [Dialogue(dialogue_id=ids[side], crs_id=f"known_answer_{system}", user=user, metadata={
        "source": "study", STUDY_KEY: study.id, STUDY_VERSION_KEY: p.study_version, **preview,
        "battle_id": battle_id, "side": side,
        KNOWN_ANSWER_KEY: {"kind": spec["kind"], "answer": spec["answer"], "system": system}})
        for side, system in sorted(spec["systems"].items())]


@lru_cache(maxsize=8)
def _scripted(dataset: str, kind: str) -> KnownAnswerCRS:
    return KnownAnswerCRS(load_catalog(dataset), kind)  # type: ignore[arg-type]


def known_turn(services: Services, study: Study, d: Dialogue, text: str, version: Optional[int]) -> None:
    """One turn of a known-answer task with its scripted system, stored over `version`."""
    spec = d.metadata[KNOWN_ANSWER_KEY]
    kind = spec.get("system", spec["kind"])  # a battle's dialogue names its side's scripted system
    if kind == "replay":
        raise refuse(REPLAY_LINE)
    settings = services.settings
    system = _scripted(study.dataset or DEFAULT_CATALOG, kind)
    runner = DialogueRunner(system, max_turns=settings.max_turns, turn_timeout_s=settings.turn_timeout_s,
                            max_message_chars=settings.max_message_chars)
    with refused_when_full(d):
        try:
            runner.user_turn(d, text)
        except (MessageRejected, DialogueEnded) as exc:
            raise refuse(str(exc)) from None
        save_checked(services, d, version)


def judge(study: Study, p: Participant, d: Dialogue, vote: Optional[str] = None) -> None:
    """Record the worker's verdict on the known-answer task `d` (for a battle, either side's dialogue, and
    the worker's `vote`: the right one is the good side); once every one is judged, a worker below the
    study's `min_accuracy` is flagged."""
    spec = d.metadata[KNOWN_ANSWER_KEY]
    if spec["kind"] == "battle":
        given = vote
    else:
        given = d.feedback.sentiment if d.feedback is not None else None
    result = {"kind": spec["kind"], "answer": spec["answer"], "given": given}
    p.data.setdefault(RESULTS_KEY, []).append(result)
    flag = accuracy_flag(study, p)
    if flag is not None:
        p.data.setdefault("flags", []).append(flag)
