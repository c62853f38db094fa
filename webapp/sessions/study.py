"""A study's rules, without the page: enter through a link, consent, tasks, attention check, completion.

A worker arrives through a link carrying the study id and their platform's
worker id (`PROLIFIC_PID`, or `worker_id` for other platforms), checked against
the platform's id format before anything is taken (`webapp.sessions.study_ids`).
The worker id is kept only as a salted pseudonym (`worker_pseudonym`); their
place in the flow is a row in the store (`arena.store.studies`), so a reload,
another tab or another app process resumes where they left off, and a
completed worker cannot complete again. A task takes its place in a quota cell
when it is handed out (`reserve_cell`, one transaction in the store), as a
platform reserves a place for a worker who starts; with no room, the worker
gets the notice before writing anything. The place is held
`start_hold_minutes` for the first message, then lapses after the study's
`idle_minutes` without a message or verdict (each one extends it,
`keep_cell`). A worker who writes is never turned away: when their place
lapsed and its cell filled meanwhile, the task moves to a cell with room (they
have seen no system answer yet), and with none it goes on all the same (a
finished task always counts).

A worker id is bound to the platform session that first used it (Prolific's
SESSION_ID), else to the first browser (a token the page keeps in the
browser's local storage): another session or browser with the same worker id
gets one line and never the first one's conversation. One network address may
bring only `new_workers_per_minute` new worker ids to a study per minute.

A task is never handed out on a system that is not available here: the
worker gets another cell, or waits on a notice (`waiting_notice`) when none is
up. A system that goes down before the worker's first message is swapped for
another cell.

Failed checks (a wrong attention answer, a task finished faster than the
study's `min_task_seconds`) flag the worker: their data is kept and listed
for the researcher, and left out of the study's results; unless the study
file sets `flagged_counts`, their places are released for other workers.
"""

from __future__ import annotations

import random
import threading
import uuid
from functools import lru_cache
from datetime import datetime
from typing import Any, Mapping, Optional, Sequence, cast

from arena.corpus.records import PSEUDONYM_PREFIX, pseudonymiser, resolve_salt
from arena.dialogue import Dialogue, UserInfo, UserKind, Vote, VoteChoice, new_id, utc_now
from arena.crowd.study import (
    KNOWN_ANSWER_KEY, STUDY_ID, STUDY_KEY, STUDY_VERSION_KEY, Study, StudyError, cell_systems, parse_study,
)
from arena.store import Participant
from arena.store.studies import COMPLETED
from webapp.protection.study_limits import admit_new_worker
from webapp.protection.vote_limits import LimitReached
from webapp.services import Services
from webapp.sessions.aspect_ratings import rate_dialogue
from webapp.sessions.known_answer_tasks import (
    judge, known_battle_dialogues, known_dialogue, known_turn, next_is_known,
)
from webapp.sessions.refusal import refuse
from webapp.sessions.study_ids import MAX_ID_CHARS, LinkIds, link_ids, mturk_submit_url
from webapp.sessions.session_base import PageView, as_stored, rate_conversation, send_turn
from webapp.sessions.turn_step import ChangedElsewhere, checked_message

VOTE_CHOICES = {"A": "System A was better", "B": "System B was better", "tie": "A tie",
                "both_bad": "Both were bad"}

FULL_FOR_GOOD = ("This study is full: every place has been taken, and no place will open again. Please "
                 "return the study on the platform (on Prolific: \"Return submission\"), so that it is not "
                 "counted as timed out. Thank you for your interest.")
FULL_FOR_NOW = ("Every place in this study is held by other workers right now; a place opens again when one "
                "of them stops. Choose Try again in a few minutes, or return the study on the platform (on "
                "Prolific: \"Return submission\").")
SYSTEMS_DOWN = ("No task can start right now: the systems of this study are not available at the moment (its "
                "places are free, not taken). Please try again in a few minutes; nothing you did is lost.")
ROOM_AGAIN = "A place is free again: choose Try again to start your task."
OTHER_SESSION = ("This worker id is already taking the study in another browser or platform session; please "
                 "continue there.")

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


def systems_problem(services: Services, study: Study) -> Optional[str]:
    """One line naming the first system of `study` this arena cannot run, and why (with the fix when there
    is one); None when every system can run. A study is saved only when this is None."""
    known = services.registry.names
    for name in study.systems:
        if name not in known:
            return f"study file: systems: {name!r} is not a system of this arena (known: {', '.join(known)})"
        problem = services.registry.problem(name)
        if problem is not None:
            fix = f"; to get it: {problem.fix}" if problem.fix else ""
            return f"study file: systems: {name} cannot run here: {problem.reason}{fix}"
    return None


def systems_status(services: Services) -> str:
    """Which systems a study may name now, and what the others need (for the Studies tab)."""
    ready = services.registry.available()
    missing = [n for n in services.registry.names if n not in ready]
    line = f"Systems a study can use here: {', '.join(ready) or 'none'}."
    if missing:
        line += f" Not available now: {', '.join(missing)} (see `python -m crs list` for what each needs)."
    return line


def worker_pseudonym(services: Services, study_id: str, worker_id: str) -> str:
    """The salted pseudonym that stands for the worker in this study (the raw id is never stored)."""
    salt = services.settings.pseudonym_salt
    pseudonym = pseudonymiser(resolve_salt(services.store, salt.get_secret_value() if salt else None))
    return pseudonym(f"study-worker:{study_id}:{worker_id}")


def _binding(services: Services, study_id: str, ids: LinkIds, browser: Optional[str]) -> str:
    """What the worker id is bound to: the platform's session id when the link has one, else the browser's
    token; kept only as a salted pseudonym. "" when neither is known (nothing to bind to)."""
    token = str(browser or "").strip()[:MAX_ID_CHARS]
    if ids.session:
        return "session:" + worker_pseudonym(services, study_id, "session:" + ids.session)
    if token:
        return "browser:" + worker_pseudonym(services, study_id, "browser:" + token)
    return ""


def enter(services: Services, params: Mapping[str, Any], request: Any = None, *,
          address: Optional[str] = None, browser: Optional[str] = None) -> tuple[Study, Participant]:
    """The study and the worker's row for a link's query parameters (a returning worker gets theirs, from
    the platform session or browser they started in). A new worker counts toward the new-worker limits of
    the `request`'s session and address, and toward the study's own limit per address and minute
    (`address` stands for the request's address where there is no request: a researcher's or a test's
    call); `browser`: the page's browser token."""
    study_id = str(params.get("study") or "").strip()
    version, study = load_study(services, study_id)
    if params.get("preview"):
        return _enter_preview(services, study, version, str(params["preview"]), browser)
    ids = link_ids(study, params)
    pseudonym = worker_pseudonym(services, study.id, ids.worker)
    bound = _binding(services, study.id, ids, browser)
    found = services.store.get_participant(study.id, pseudonym)
    if found is not None:
        kept = found.data.get("bound_to", "")
        if kept and kept != bound:
            raise refuse(OTHER_SESSION)
        if not kept and bound:
            with _lock(found.pseudonym):
                found = _fresh(services, found)
                found.data["bound_to"] = bound
                services.store.save_participant(found)
        return load_study(services, study.id, found.study_version)[1], found
    closed = study.open_at(utc_now()) or _state_notice(services, study)
    if closed:
        raise refuse(closed)
    no_task = start_notice(services, study)  # said before the consent page, not after it
    if no_task is not None:
        raise refuse(no_task)
    # Which platform study the worker came from (not the session id, which binds the worker, pseudonymised).
    platform = _platform_data(study, ids)
    with _admit_new_worker(services, request, study, address):  # a row not stored gives its places back
        joined = services.store.join_study(study.id, pseudonym, version, {
            "step": "consent", "served": [], "flags": [], "task_seconds": [], "platform": platform,
            "bound_to": bound})
        # The raw ids, in the researcher-only table the payment sheet reads (deleted when the study closes).
        services.store.keep_platform_ids(study.id, pseudonym, ids.worker, ids.session)
    return study, joined


def _platform_data(study: Study, ids: LinkIds) -> dict[str, str]:
    """What the worker's row keeps of the platform: the platform study (Prolific's STUDY_ID, MTurk's hitId)
    and, for MTurk, the host its submit form is on."""
    if study.platform == "mturk":
        return {"hitId": ids.platform_study, "turkSubmitTo": ids.submit_to}
    return {"STUDY_ID": ids.platform_study} if ids.platform_study else {}


def completion_address(services: Services, study: Study, p: Participant) -> str:
    """Where the finished worker's page goes: the study's redirect (Prolific), or MTurk's external-submit
    form for their assignment, with the completion code as a second field; "" for neither."""
    if study.platform != "mturk":
        return study.completion_url() or ""
    _, assignment = services.store.platform_ids(study.id).get(p.pseudonym, ("", ""))
    host = str((p.data.get("platform") or {}).get("turkSubmitTo", ""))
    return mturk_submit_url(host, assignment, completion=study.completion_code or "done")


def _admit_new_worker(services: Services, request: Any, study: Study, address: Optional[str]) -> Any:
    try:
        return admit_new_worker(services, request, study=study, address=address)
    except LimitReached as exc:
        raise refuse(str(exc)) from None


PREVIEW_CROWD_SUFFIX = "~preview"  # a preview's dialogues belong to no study's crowd, nor to the open arena


def preview_token(services: Services, study_id: str) -> str:
    """The key a preview link carries: only the researchers' Studies tab shows it (a worker cannot walk the
    study without quotas, or read its completion code, by adding `preview` to their link)."""
    secret = services.store.get_or_create_secret("study_preview")
    return worker_pseudonym(services, study_id, "preview:" + secret)


def _enter_preview(services: Services, study: Study, version: int, token: str,
                   browser: Optional[str]) -> tuple[Study, Participant]:
    """A researcher's walk through the whole flow: a row of its own (one per browser), marked as a preview,
    that takes no place, keeps no platform id, and whose dialogues count nowhere."""
    if token != preview_token(services, study.id):
        raise refuse("This preview link is not valid; open the preview from the Studies tab.")
    pseudonym = "preview-" + worker_pseudonym(services, study.id, "preview-walk:" + (browser or new_id()))
    found = services.store.get_participant(study.id, pseudonym)
    if found is not None:
        return load_study(services, study.id, found.study_version)[1], found
    return study, services.store.join_study(study.id, pseudonym, version, {
        "step": "consent", "served": [], "flags": [], "task_seconds": [], "platform": {}, "preview": True})


def is_preview(p: Participant) -> bool:
    return bool(p.data.get("preview"))


def _preview_cell(services: Services, study: Study, exclude: Sequence[str]) -> Optional[str]:
    """The cell a preview task shows: the least-filled one the walk has not seen (no place is taken)."""
    fill = services.store.cell_fill(study)
    cells = [c for c in study.cells() if c not in set(exclude)]
    return min(cells, key=lambda c: (fill[c]["done"] + fill[c]["reserved"]) / max(fill[c]["quota"], 1)) \
        if cells else None


PAUSED = "This study is paused for a moment; please try again in a few minutes."
CLOSED = "This study has closed. Thank you for your interest."


def _state_notice(services: Services, study: Study) -> Optional[str]:
    """Why the study takes no new worker or task now (paused or closed in the Studies tab), else None."""
    state = services.store.study_state(study.id)
    return PAUSED if state == "paused" else CLOSED if state == "closed" else None


def _down_cells(services: Services, study: Study) -> list[str]:
    """The cells with a system that cannot run here now (a task is never handed out on one)."""
    down = {name for name in study.systems if services.registry.problem(name) is not None}
    return [cell for cell in study.cells() if down & set(cell_systems(cell))]


def full_notice(services: Services, study: Study, p: Optional[Participant] = None) -> tuple[str, bool]:
    """Why the worker gets no task now, and whether trying again later may help: every place filled for
    good, the systems of every cell with room are down, every place is held by workers under way, or (a
    system back, a place freed since) a task may start again now (`ROOM_AGAIN`)."""
    state = _state_notice(services, study)
    if state:
        return state, state == PAUSED
    served = set() if p is None or study.repeat_systems else set(p.data.get("served", []))
    fill = {cell: n for cell, n in services.store.cell_fill(study).items() if cell not in served}
    if all(n["done"] >= n["quota"] for n in fill.values()):
        return FULL_FOR_GOOD, False
    down = set(_down_cells(services, study))
    room = [cell for cell, n in fill.items() if n["done"] + n["reserved"] < n["quota"]]
    if any(cell not in down for cell in room):
        return ROOM_AGAIN, True
    if room:  # places are free, but only on systems that cannot run now: that is the cause, not other workers
        return SYSTEMS_DOWN, True
    return FULL_FOR_NOW, True


def start_notice(services: Services, study: Study, p: Optional[Participant] = None) -> Optional[str]:
    """Why no task could start now for the worker (`p`; None: a new worker), else None: said on entering,
    before the consent page, so that nobody reads consent and instructions for a task that cannot start."""
    why, _ = full_notice(services, study, p)
    return None if why == ROOM_AGAIN else why


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
    # A paused or closed study hands out no task of either kind (the check below says so).
    if next_is_known(study, p) and (is_preview(p) or not _state_notice(services, study)):
        _hand_out_known(services, study, p)
        return
    if done >= study.tasks_per_participant:
        p.data["step"] = "done"
        p.data.pop("task", None)
        services.store.complete_participant(p)
        _mark_dialogues(services, p)
        return
    _mark_dialogues(services, p)
    exclude = _excluded(services, study, p)
    started = utc_now()
    if is_preview(p):
        held = (_preview_cell(services, study, exclude), new_id())
    elif _state_notice(services, study):
        held = None
    else:
        # The task takes its place now, held `start_hold_minutes` for the first message. Ties are broken the
        # same way for the same worker and hand-out, and a second Start (another app process) gets the place
        # the first one took, so both pick one cell and one set of conversations.
        tie = random.Random(f"{p.study_id}:{p.pseudonym}:{len(p.data.get('dialogues', []))}")
        held = services.store.reserve_cell(study, p.pseudonym, exclude, tie, started=started,
                                           minutes=study.start_hold_minutes)
    if held is None or held[0] is None:
        p.data["step"] = "full"
        services.store.save_participant(p)
        return
    _hand_out(services, study, p, held[0], held[1], held=not is_preview(p), started=started)


def _excluded(services: Services, study: Study, p: Participant) -> list[str]:
    """The cells the worker's next task may not take: those they did (unless the study repeats systems) and
    those with a system that is down."""
    return ([] if study.repeat_systems else list(p.data.get("served", []))) + _down_cells(services, study)


def _hand_out(services: Services, study: Study, p: Participant, cell: str, claim_id: str,
              held: bool = False, started: Optional[datetime] = None) -> None:
    """Give the worker a task on `cell`: its empty conversations, and the id its place is claimed under
    (`held`: the place is taken already; `started`: when the task began, which bounds its place)."""
    done = len(p.data.get("task_seconds", []))
    # A task's ids follow from the worker's row as read (who, how many conversations handed out so far, which
    # cell): the same worker pressing Start on two app processes at once makes the same conversations,
    # stored once (no orphan empty ones); a later hand-out has a larger count, so fresh ids.
    seed = f"{p.study_id}:{p.pseudonym}:{len(p.data.get('dialogues', []))}:{cell}"
    task_id = (lambda part: new_id()) if is_preview(p) else (lambda part: task_key(seed, part))
    battle_id = task_id("battle")
    dialogues = []
    for side, crs in zip(sides(study), cell_systems(cell), strict=True):
        dialogues.append(Dialogue(
            dialogue_id=task_id(side),
            crs_id=crs, user=UserInfo(kind=UserKind.HUMAN, id=PSEUDONYM_PREFIX + p.pseudonym),
            metadata={"source": "study",
                      STUDY_KEY: study.id + (PREVIEW_CROWD_SUFFIX if is_preview(p) else ""),
                      STUDY_VERSION_KEY: p.study_version, **({"preview": True} if is_preview(p) else {}),
                      "task": done + 1,
                      **({"battle_id": battle_id, "side": side} if study.mode == "battle" else {})},
        ))
    for d in dialogues:
        d.metadata.update(_standing(p))
    services.store.create_dialogues_once(dialogues)
    p.data.setdefault("dialogues", []).extend(d.dialogue_id for d in dialogues)
    p.data["step"] = "task"
    p.data["task"] = {"cell": cell, "claim": claim_id, "held": held, "battle_id": battle_id,
                      "started": (started or utc_now()).isoformat(),
                      "dialogues": {side: d.dialogue_id for side, d in zip(sides(study), dialogues)}}
    services.store.save_participant(p)


def _hand_out_known(services: Services, study: Study, p: Participant) -> None:
    """Give the worker their next known-answer task (a battle of the scripted systems in a battle study): no
    place is taken, and its dialogues count nowhere."""
    seed = f"{p.study_id}:{p.pseudonym}:{len(p.data.get('dialogues', []))}:known"
    task_id = (lambda part: new_id()) if is_preview(p) else (lambda part: task_key(seed, part))
    preview = {"preview": True} if is_preview(p) else {}
    battle_id = task_id("battle")
    if study.mode == "battle":
        ids = {side: task_id(side) for side in sides(study)}
        dialogues = known_battle_dialogues(study, p, ids, battle_id, preview)
    else:
        dialogues = [known_dialogue(services, study, p, task_id("A"), preview)]
    for d in dialogues:
        d.metadata.update(_standing(p))
    services.store.create_dialogues_once(dialogues)
    p.data.setdefault("dialogues", []).extend(d.dialogue_id for d in dialogues)
    p.data["step"] = "task"
    p.data["task"] = {"cell": None, "claim": None, "held": False, "battle_id": battle_id,
                      "known": dialogues[0].metadata[KNOWN_ANSWER_KEY]["kind"],
                      "started": utc_now().isoformat(),
                      "dialogues": {side: d.dialogue_id for side, d in zip(sides(study), dialogues)}}
    services.store.save_participant(p)


def task_key(seed: str, part: str) -> str:
    """The id of one part (a side's conversation, the battle) of the task handed out as `seed`."""
    return uuid.uuid5(uuid.NAMESPACE_URL, f"arena-study-task:{seed}:{part}").hex


def _standing(p: Participant) -> dict[str, Any]:
    """The worker's standing as each of their dialogues records it, so that every export marks it."""
    status = "flagged" if p.flags else ("completed" if p.data.get("step") == "done" else "in progress")
    return {"worker_status": status, "worker_flags": p.flags}


def _mark_dialogues(services: Services, p: Participant) -> None:
    """Write the worker's standing into every dialogue of theirs (after a task, a check, the completion)."""
    standing = _standing(p)
    for dialogue_id in p.data.get("dialogues", []):
        d = services.store.get_dialogue(dialogue_id)
        if d is not None and any(d.metadata.get(k) != v for k, v in standing.items()):
            d.metadata.update(standing)
            services.store.save_dialogue(d)


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


SWAPPED = "That system stopped working before you began, so you have a new task; please start again."


def _take_place(services: Services, study: Study, p: Participant) -> None:
    """At the worker's first message of a task, the task makes sure of its place. A task on a system that went
    down is given up for a task on another cell (and the message refused: the worker starts again). The place
    taken at the task's start is still held within `start_hold_minutes`; when it lapsed and its cell filled
    meanwhile, the task moves to another cell with room, which the message goes to (the worker saw no system
    answer yet); with no room anywhere the task goes on without a place: a worker who writes never loses
    it."""
    with _lock(p.pseudonym):
        p = _fresh(services, p)
        task = p.data.get("task")
        if p.data.get("step") != "task" or not task or is_preview(p) or task.get("known"):
            return
        if any(d.user_turns() for d in task_dialogues(services, p).values()):
            return  # under way: each message keeps the place (`_keep_place`)
        exclude = _excluded(services, study, p)
        if task["cell"] in exclude:  # its system went down
            services.store.release_cell(task["claim"])
            p.data.pop("task")
            _next(services, study, p)
            raise refuse(SWAPPED)
        held = services.store.reserve_cell(study, p.pseudonym, exclude, prefer=task["cell"],
                                           claim_id=task["claim"],
                                           started=datetime.fromisoformat(task["started"]))
        if held is None:
            return
        cell, claim_id = held
        if cell != task["cell"]:
            started = datetime.fromisoformat(task["started"])
            _hand_out(services, study, p, cell, claim_id, held=True, started=started)
        elif not task.get("held", True) or task["claim"] != claim_id:
            task.update(claim=claim_id, held=True)
            services.store.save_participant(p)


def _keep_place(services: Services, study: Study, p: Participant) -> None:
    task = p.data.get("task") or {}
    # A task holds no place before its first message.
    if task and task.get("held", True) and not is_preview(p):
        services.store.keep_cell(study, p.pseudonym, task["claim"], task["cell"],
                                 datetime.fromisoformat(task["started"]))


def send(services: Services, study: Study, p: Participant, side: str, text: str) -> None:
    _take_place(services, study, p)
    p = _fresh(services, p)  # the task may have moved to another cell
    with _lock(f"{p.pseudonym}:{side}"):
        d, text = check_send(services, p, side, text)
        if (p.data.get("task") or {}).get("known"):
            known_turn(services, study, d, text, as_stored(services, d).version)
            return
        reply = send_turn(services, d, text, version=as_stored(services, d).version,
                          unavailable="The system is unavailable right now; please try again in a moment.")
        _keep_place(services, study, p)
        if reply.error and not d.ended:
            raise refuse("The system had a problem answering; please send your message again.")


def rate(services: Services, study: Study, p: Participant, side: str, sentiment: str,
         shown: Optional[PageView] = None) -> None:
    """The worker's verdict on one conversation of their task; it may change until the task is submitted.

    `shown` is the conversation as the worker's page drew it: when the store has moved on since (a verdict
    given or changed on another app process, a turn taken there), the page is behind and gets
    `ChangedElsewhere` (it is then drawn again as stored), and nothing is written. Without `shown` (a caller
    with no page) the conversation as stored now is rated. Either way the verdict is written only over the
    version read, as the Chat and the Battle write theirs (`webapp.sessions.session_base`)."""
    with _lock(f"{p.pseudonym}:{side}"):
        stored = as_stored(services, _task_dialogue(services, p, side))
        if shown is not None and not shown.shows(stored):
            raise ChangedElsewhere()
        d = stored.dialogue
        turns = len(d.user_turns())
        if d.feedback is None and turns < study.min_user_turns:
            raise refuse(f"Please send at least {study.min_user_turns} messages before giving your verdict "
                         f"({turns} so far).")
        # A study's labels are bounded by its tasks and checks, not by the public label limits.
        rate_conversation(services, d, sentiment, limited=False, version=stored.version)
        _keep_place(services, study, p)


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
        if p.data["task"].get("known"):
            _submit_known(services, study, p, dialogues["A"], choice)
        else:
            _submit_own(services, study, p, dialogues, choice, attention, aspects)


def _submit_own(services: Services, study: Study, p: Participant, dialogues: dict[str, Dialogue],
                choice: Optional[str], attention: Optional[str], aspects: Sequence[Any]) -> None:
    """Finish one of the study's own tasks: its checks, its place settled, the battle's vote, the next
    step."""
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
    flagged_before = bool(flags)
    flags += _task_flags(study, number, seconds, attention if instructed else None)
    p.data.setdefault("task_seconds", []).append(round(seconds, 1))
    p.data.setdefault("served", []).append(task["cell"])
    p.data.pop("task")
    gold = check is not None and check.kind == "gold" and check.after_task == number
    p.data["step"] = "gold" if gold else "between"
    counts = study.flagged_counts or not flags
    if is_preview(p):  # nothing to count: the walk's row moves on, and its battle casts no vote
        services.store.save_participant(p)
    elif not services.store.finish_study_task(p, task["claim"], task["cell"], counts=counts):
        raise refuse("This task was already submitted.")
    if flags and not flagged_before and not study.flagged_counts and not is_preview(p):
        services.store.release_worker(study.id, p.pseudonym)  # their earlier tasks free their places too
    if study.mode == "battle" and not is_preview(p):
        # After the task is settled, so that a second submission casts no second vote.
        _cast_vote(services, study, p, task["battle_id"], dialogues, choice)
    if not gold:
        _next(services, study, p)


def _cast_vote(services: Services, study: Study, p: Participant, battle_id: str,
               dialogues: dict[str, Dialogue], choice: Optional[str]) -> None:
    a, b = dialogues["A"], dialogues["B"]
    services.store.save_battle(a, b, Vote(
        battle_id=battle_id, dialogue_a=a.dialogue_id, dialogue_b=b.dialogue_id, crs_a=a.crs_id,
        crs_b=b.crs_id, choice=cast(VoteChoice, choice), user_id=a.user.id, user_kind=UserKind.HUMAN,
        study=study.id, study_version=p.study_version))


def _task_flags(study: Study, number: int, seconds: float, attention: Optional[str]) -> list[str]:
    """The flags a finished task gives: too fast, or a wrong answer to the instructed check (`attention`:
    the answer, None when the task had no such check)."""
    flags = []
    if seconds < study.min_task_seconds:
        flags.append(f"task {number} took {seconds:.0f} s (minimum {study.min_task_seconds:.0f} s)")
    check = study.attention_check
    if attention is not None and check is not None and attention != check.answer:
        flags.append(f"attention check failed (answered {attention!r})")
    return flags


def _submit_known(services: Services, study: Study, p: Participant, d: Dialogue,
                  choice: Optional[str]) -> None:
    """Finish a known-answer task: its verdict (a battle's vote, `choice`) is judged against the known one (no
    place to settle, and no vote stored: the worker's row keeps it)."""
    flagged_before = bool(p.data.get("flags"))
    judge(study, p, d, choice)
    p.data.pop("task")
    p.data["step"] = "between"
    services.store.save_participant(p)
    if p.data.get("flags") and not flagged_before and not study.flagged_counts and not is_preview(p):
        services.store.release_worker(study.id, p.pseudonym)
    _next(services, study, p)


def answer_gold(services: Services, study: Study, p: Participant, answer: Optional[str]) -> None:
    with _lock(p.pseudonym):
        p = _fresh(services, p)
        check = study.attention_check
        if p.data.get("step") != "gold" or check is None:
            raise refuse("There is no question waiting.")
        if not answer:
            raise refuse("Please choose an answer.")
        if answer != check.answer:
            p.data.setdefault("flags", []).append(f"gold task failed (answered {answer!r})")
            if not study.flagged_counts:
                services.store.release_worker(study.id, p.pseudonym)
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
