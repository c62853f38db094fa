"""A study's rules, without the page: enter through a link, consent, tasks, attention check, completion.

A worker arrives through a link carrying the study id and their platform's
worker id (`PROLIFIC_PID`, or `worker_id` for other platforms). The worker id
is kept only as a salted pseudonym (`worker_pseudonym`); their place in the
flow is a row in the store (`arena.store.studies`), so a reload, another tab or
another app process resumes where they left off, and a completed worker
cannot complete again. Each task holds a quota cell (`reserve_cell`) from the
moment it is handed out until it is finished or abandoned.

Failed checks (a wrong attention answer, a task finished faster than the
study's `min_task_seconds`) flag the worker: their data is kept and listed
for the researcher, and left out of the study's results.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from datetime import datetime
from typing import Any, Mapping, Optional, Sequence

from arena.corpus.records import PSEUDONYM_PREFIX, pseudonymiser, resolve_salt
from arena.dialogue import Dialogue, UserInfo, UserKind, Vote, new_id, utc_now
from arena.study import STUDY_ID, STUDY_KEY, STUDY_VERSION_KEY, Study, StudyError, cell_systems, parse_study
from arena.store import Participant
from arena.store.studies import COMPLETED
from webapp.services import Services
from webapp.sessions.aspect_ratings import rate_dialogue
from webapp.sessions.refusal import refuse
from webapp.sessions.turn_step import (ChangedElsewhere, checked_message, read_current, same_conversation,
                                       store_label, stored_turn)

WORKER_ID_PARAMS = ("PROLIFIC_PID", "worker_id")
PLATFORM_PARAMS = ("STUDY_ID", "SESSION_ID")
MAX_WORKER_ID_CHARS = 128
VOTE_CHOICES = {"A": "System A was better", "B": "System B was better", "tie": "A tie",
                "both_bad": "Both were bad"}

# A fixed set of locks, picked by key: memory stays bounded however many workers come, and no action
# holds two of them, so two keys sharing a lock only wait for each other.
_LOCKS = tuple(threading.Lock() for _ in range(256))


def _lock(key: str) -> threading.Lock:
    """One worker's actions run one at a time in this process (a double click reserves no second cell)."""
    return _LOCKS[hash(key) % len(_LOCKS)]


def sides(study: Study) -> tuple[str, ...]:
    return ("A", "B") if study.mode == "battle" else ("A",)


@lru_cache(maxsize=64)
def _parsed(text: str) -> Study:
    # Every event of a worker's page reads the study's saved version, which never changes: its text is
    # parsed (YAML and checks) once per process, not on each click.
    return parse_study(text)


def load_study(services: Services, study_id: str, version: Optional[int] = None) -> tuple[int, Study]:
    found = services.store.study_text(study_id, version) if STUDY_ID.match(study_id or "") else None
    if found is None:
        raise refuse("There is no such study. Please check the link you were given.")
    try:
        return found[0], _parsed(found[1])
    except StudyError:  # saved files were checked; an older file may fail a newer check
        raise refuse("This study cannot be opened right now; please contact the researchers.") from None


def worker_pseudonym(services: Services, study_id: str, worker_id: str) -> str:
    """The salted pseudonym that stands for the worker in this study (the raw id is never stored)."""
    salt = services.settings.pseudonym_salt
    pseudonym = pseudonymiser(resolve_salt(services.store, salt.get_secret_value() if salt else None))
    return pseudonym(f"study-worker:{study_id}:{worker_id}")


def worker_id_of(params: Mapping[str, Any]) -> str:
    worker = next((str(params[k]).strip() for k in WORKER_ID_PARAMS if params.get(k)), "")
    if not worker:
        raise refuse("This study link has no worker id; please open it from the platform that sent you here.")
    if len(worker) > MAX_WORKER_ID_CHARS or not worker.isprintable():
        raise refuse("The worker id in this link is not valid; please open it from the platform that sent you.")
    return worker


def enter(services: Services, params: Mapping[str, Any]) -> tuple[Study, Participant]:
    """The study and the worker's row for a link's query parameters (a returning worker gets theirs)."""
    study_id = str(params.get("study") or "").strip()
    version, study = load_study(services, study_id)
    pseudonym = worker_pseudonym(services, study.id, worker_id_of(params))
    found = services.store.get_participant(study.id, pseudonym)
    if found is not None:
        return load_study(services, study.id, found.study_version)[1], found
    closed = study.open_at(utc_now())
    if closed:
        raise refuse(closed)
    platform = {k: str(params[k])[:MAX_WORKER_ID_CHARS] for k in PLATFORM_PARAMS if params.get(k)}
    return study, services.store.join_study(study.id, pseudonym, version,
                             {"step": "consent", "served": [], "flags": [], "task_seconds": [], "platform": platform})


def current(services: Services, ident: Optional[tuple[str, str]]) -> tuple[Study, Participant]:
    if not ident:
        raise refuse("Please open the study through the link you were given.")
    participant = services.store.get_participant(ident[0], ident[1])
    if participant is None:
        raise refuse("Please open the study through the link you were given.")
    return load_study(services, participant.study_id, participant.study_version)[1], participant


def consent(services: Services, study: Study, p: Participant) -> None:
    with _lock(p.pseudonym):
        p = _fresh(services, p)
        if p.data.get("step") != "consent":
            return
        p.data["step"] = "instructions"
        services.store.save_participant(p)


def _fresh(services: Services, p: Participant) -> Participant:
    """The worker's row as stored now (read under the worker's lock: another request may have moved on)."""
    return services.store.get_participant(p.study_id, p.pseudonym) or p


def begin(services: Services, study: Study, p: Participant) -> None:
    with _lock(p.pseudonym):
        p = _fresh(services, p)
        if p.data.get("step") != "instructions":
            return
        _next(services, study, p)


def _next(services: Services, study: Study, p: Participant) -> None:
    """Hand out the next task, or finish the worker."""
    done = len(p.data.get("task_seconds", []))
    if done >= study.tasks_per_participant:
        p.data["step"] = "done"
        p.data.pop("task", None)
        services.store.complete_participant(p)
        return
    exclude = [] if study.repeat_systems else p.data.get("served", [])
    held = services.store.reserve_cell(study, p.pseudonym, exclude)
    if held is None:
        p.data["step"] = "full"
        services.store.save_participant(p)
        return
    cell, claim_id = held
    battle_id = new_id()
    dialogues = []
    for side, crs in zip(sides(study), cell_systems(cell), strict=True):
        dialogues.append(Dialogue(
            crs_id=crs, user=UserInfo(kind=UserKind.HUMAN, id=PSEUDONYM_PREFIX + p.pseudonym),
            metadata={"source": "study", STUDY_KEY: study.id, STUDY_VERSION_KEY: p.study_version,
                      "task": done + 1, **({"battle_id": battle_id, "side": side} if study.mode == "battle" else {})},
        ))
    services.store.save_dialogues(dialogues)
    p.data["step"] = "task"
    p.data["task"] = {"cell": cell, "claim": claim_id, "battle_id": battle_id, "started": utc_now().isoformat(),
                      "dialogues": {side: d.dialogue_id for side, d in zip(sides(study), dialogues)}}
    services.store.save_participant(p)


def task_dialogues(services: Services, p: Participant) -> dict[str, Dialogue]:
    task = p.data.get("task") or {}
    out = {}
    for side, dialogue_id in (task.get("dialogues") or {}).items():
        d = services.store.get_dialogue(dialogue_id)
        if d is not None:
            out[side] = d
    return out


def _task_dialogue(services: Services, p: Participant, side: str) -> Dialogue:
    if p.data.get("step") != "task":
        raise refuse("There is no task under way.")
    d = task_dialogues(services, p).get(side)
    if d is None:
        raise refuse("There is no task under way.")
    return d


def check_send(services: Services, p: Participant, side: str, text: str) -> tuple[Dialogue, str]:
    """The conversation a message goes to and the cleaned message; refuses what cannot be sent now
    (checked before the page shows the message as sent)."""
    d = _task_dialogue(services, p, side)
    if d.feedback is not None or d.ended:
        raise refuse("This conversation has ended; please give your verdict.")
    return d, checked_message(services, text)


def send(services: Services, study: Study, p: Participant, side: str, text: str) -> None:
    with _lock(f"{p.pseudonym}:{side}"):
        d, text = check_send(services, p, side, text)
        reply = stored_turn(services, d, text, version=_version(services, d),
                            unavailable="The system is unavailable right now; please try again in a moment.")
        if reply.error and not d.ended:
            raise refuse("The system had a problem answering; please send your message again.")


def rate(services: Services, study: Study, p: Participant, side: str, sentiment: str) -> None:
    with _lock(f"{p.pseudonym}:{side}"):
        d = _task_dialogue(services, p, side)
        if d.feedback is not None:
            raise refuse(f"You already gave your verdict ({d.feedback.sentiment}).")
        turns = len(d.user_turns())
        if turns < study.min_user_turns:
            raise refuse(f"Please send at least {study.min_user_turns} messages before giving your verdict "
                         f"({turns} so far).")
        # A study's labels are bounded by its tasks and checks, not by the public label limits.
        store_label(services, d, sentiment, limited=False, version=_version(services, d))


def _version(services: Services, d: Dialogue) -> int:
    """The stored version of the task's conversation just read (another app process may write it too:
    the step then writes only over this version)."""
    stored = read_current(services, d)
    if stored is None or not same_conversation(d, stored):
        raise ChangedElsewhere()
    return stored.version


def submit(services: Services, study: Study, p: Participant, choice: Optional[str],
           attention: Optional[str], aspects: Sequence[Any] = ()) -> None:
    """Finish the task under way: its verdicts (and the battle's vote), the aspect form's answers (any may be
    left open), the checks, then the next step."""
    with _lock(p.pseudonym):
        p = _fresh(services, p)
        if p.data.get("step") != "task":
            raise refuse("There is no task under way.")
        dialogues = task_dialogues(services, p)
        if any(d.feedback is None for d in dialogues.values()):
            raise refuse("Please give your verdict (Satisfied or Frustrated) on every conversation first.")
        if study.mode == "battle" and choice not in VOTE_CHOICES:
            raise refuse("Please say which system was better.")
        number = len(p.data.get("task_seconds", [])) + 1
        check = study.attention_check
        instructed = check is not None and check.kind == "instructed" and check.after_task == number
        if instructed and not attention:
            raise refuse("Please answer every question of the form.")
        if study.aspects and aspects:
            (d,) = dialogues.values()
            rate_dialogue(services, d, list(aspects), d.user.id)  # a bad value refuses the whole submission
        task = p.data["task"]
        seconds = (utc_now() - datetime.fromisoformat(task["started"])).total_seconds()
        flags = p.data.setdefault("flags", [])
        if seconds < study.min_task_seconds:
            flags.append(f"task {number} took {seconds:.0f} s (minimum {study.min_task_seconds:.0f} s)")
        if instructed and attention != check.answer:
            flags.append(f"attention check failed (answered {attention!r})")
        p.data.setdefault("task_seconds", []).append(round(seconds, 1))
        p.data.setdefault("served", []).append(task["cell"])
        p.data.pop("task")
        gold = check is not None and check.kind == "gold" and check.after_task == number
        p.data["step"] = "gold" if gold else "between"
        if not services.store.finish_study_task(p, task["claim"], task["cell"]):
            raise refuse("This task was already submitted.")
        if study.mode == "battle":  # after the task is settled, so a second submission casts no second vote
            a, b = dialogues["A"], dialogues["B"]
            services.store.save_battle(a, b, Vote(
                battle_id=task["battle_id"], dialogue_a=a.dialogue_id, dialogue_b=b.dialogue_id, crs_a=a.crs_id,
                crs_b=b.crs_id, choice=choice, user_id=a.user.id, user_kind=UserKind.HUMAN, study=study.id,
                study_version=p.study_version))
        if not gold:
            _next(services, study, p)


def answer_gold(services: Services, study: Study, p: Participant, answer: Optional[str]) -> None:
    with _lock(p.pseudonym):
        p = _fresh(services, p)
        if p.data.get("step") != "gold":
            raise refuse("There is no question waiting.")
        if not answer:
            raise refuse("Please choose an answer.")
        if answer != study.attention_check.answer:
            p.data.setdefault("flags", []).append(f"gold task failed (answered {answer!r})")
        p.data["gold_answer"] = answer
        _next(services, study, p)


def retry_full(services: Services, study: Study, p: Participant) -> None:
    """A worker who met full cells may try again (a place may have been freed)."""
    with _lock(p.pseudonym):
        p = _fresh(services, p)
        if p.data.get("step") == "full":
            _next(services, study, p)


def completed(p: Participant) -> bool:
    return p.status == COMPLETED
