"""Two app servers (`python app.py`, each its own process and port) on one PostgreSQL database, driven over
HTTP through the app's API as a participant's requests would reach them behind a load balancer without
stickiness: a chat moved between them with a deletion in the middle, a battle started on one and finished on
the other, the same crowd worker pressing Start (and sending the first message) on both at once, an
evaluation run started on one and cancelled from the other, and a vote cap and a login lockout that hold
across both. The chat is also driven in a browser (Debian's Chromium), whose participant token moves with
it to the other server, where "Your data" deletes the conversation. Scoring jobs over two servers (one
killed with `kill -9`) are in test_replicas_http_jobs.py."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from typing import Any, Callable

import httpx
import pytest
import sqlalchemy as sa

from arena.store import Store
from arena.store import schema as t
from arena.crowd.study import parse_study
from tests.replicas.app_servers import start_servers
from tests.replicas.replicas_support import wait_until
from tests.study.study_support import pid, study_yaml
from webapp.protection.admin_auth import hash_password
from webapp.ui.parts.participant import STORAGE_KEY

pytestmark = pytest.mark.slow  # two app servers and a PostgreSQL cluster

SYSTEM = "chatcrs_redial"
STUDY_SYSTEMS = ["chatcrs_redial", "chatcrs_opendialkg"]
STUDY_SIDES = ["A"]  # a chat study: one conversation per task
VOTES_PER_ADDRESS = 2
LOGIN_TRIES = 4
PASSWORD = "correct horse battery staple"
ENV = {"ARENA_SCORE_METRICS": "", "ARENA_MIN_BATTLE_SECONDS": "0", "ARENA_MIN_USER_TURNS": "1",
       "ARENA_MAX_VOTES_PER_IP": str(VOTES_PER_ADDRESS), "ARENA_ADMIN_USERS": "ada",
       "ARENA_ADMIN_PASSWORD_HASH": hash_password(PASSWORD, iterations=20_000),
       "ARENA_LOGIN_MAX_FAILURES": str(LOGIN_TRIES)}
CHANGED = "This conversation changed elsewhere; reloading."


@pytest.fixture(scope="module")
def servers(postgres_server, tmp_path_factory):
    db = postgres_server.create_database("replicas_http")
    r1, r2 = start_servers(db, tmp_path_factory.mktemp("servers"), ENV)
    yield db, r1, r2
    r1.stop()
    r2.stop()


def texts(chatbot) -> list[str]:
    """The messages a Chatbot output shows, in order."""
    out = []
    for message in chatbot:
        parts = message if isinstance(message, list) else message.get("content", [])
        out.append(" ".join(p["text"] if isinstance(p, dict) else str(p) for p in parts))
    return out


def box_text(update: Any) -> str:
    """The text a message box shows after an answer (the API gives the box's update, with its value)."""
    return update.get("value") if isinstance(update, dict) else update


def stored_with(db: str, marker: str) -> list[list[str]]:
    """The stored conversations in which some message contains `marker`."""
    with Store(db) as store:
        return [[u.text for u in d.utterances] for d in store.list_dialogues()
                if any(marker in u.text for u in d.utterances)]


def session() -> str:
    return uuid.uuid4().hex[:11]


def test_a_chat_moves_between_servers_and_a_deletion_in_the_middle_is_never_undone(servers):
    db, r1, r2 = servers
    tag = session()
    page1, page2 = r1.client(tag), r2.client(tag)  # one participant; the balancer picks either server
    page1.predict(SYSTEM, api_name="/chat_start")
    page1.predict(f"{tag} t1 a comedy", SYSTEM, "m1", api_name="/chat_send")
    page1.predict(f"{tag} t2 something older", SYSTEM, "m2", api_name="/chat_send")
    shown = texts(page2.predict(f"{tag} t3 with a dog", SYSTEM, "m3", api_name="/chat_send")[0])
    assert shown[::2] == [f"{tag} t1 a comedy", f"{tag} t2 something older", f"{tag} t3 with a dog"]
    assert [turns[::2] for turns in stored_with(db, tag)] == [shown[::2]]

    # The participant deletes the conversation ("Your data") while a page on r1 still shows it.
    with Store(db) as store:
        ids = [d.dialogue_id for d in store.list_dialogues() if any(tag in u.text for u in d.utterances)]
        assert store.delete_dialogues(ids, actor="participant", reason="your data")["dialogues"] == 1
    assert stored_with(db, tag) == []
    chatbot, _, status, box = page1.predict(f"{tag} t4 anything", SYSTEM, "m4", api_name="/chat_send")
    assert status == CHANGED and not any("t1" in text for text in texts(chatbot))
    assert box_text(box) == f"{tag} t4 anything"  # the message was not sent: it stays in its box
    page1.predict(f"{tag} t5 once more", SYSTEM, "m5", api_name="/chat_send")  # the page goes on afresh
    page2.predict(f"{tag} t6 and here", SYSTEM, "m6", api_name="/chat_send")
    stored = stored_with(db, tag)
    assert stored and not any(f"{tag} t{i}" in text for turns in stored for text in turns for i in (1, 2, 3))


@pytest.mark.browser
def test_in_a_browser_a_conversation_deleted_on_one_server_stays_deleted_on_the_other(servers, browser):
    from tests.support.browser import assert_no_toasts, chat_send, expect

    db, r1, r2 = servers
    tag = session()
    page1 = browser.page()
    page1.goto(r1.url)
    page1.get_by_role("tab", name="Chat").click()
    chat_send(page1, f"{tag} t1 a comedy")
    chat_send(page1, f"{tag} t2 something older")
    # The same browser reaches the other server (behind one balancer both have one origin; here the
    # participant's stored token is carried over to the other server's origin).
    token = page1.evaluate(f"() => localStorage.getItem({STORAGE_KEY!r})")
    assert token
    page2 = browser.page(context=page1.context)
    page2.goto(r2.url)
    page2.evaluate(f"(token) => localStorage.setItem({STORAGE_KEY!r}, token)", token)
    page2.reload()
    page2.get_by_role("tab", name="Chat").click()
    page2.locator("#chat-chatbot").get_by_text(f"{tag} t2 something older", exact=True).wait_for()  # resumed
    chat_send(page2, f"{tag} t3 with a dog")
    page2.get_by_role("tab", name="Your data").click()
    page2.locator("#yourdata-delete").click()
    page2.locator("#yourdata-confirm-yes").click()
    page2.locator("#yourdata-status").get_by_text("Deleted 1 conversation").wait_for()
    assert stored_with(db, tag) == []

    # The first server's page still shows the conversation: its next message brings nothing back.
    page1.locator("#chat-msg textarea").fill(f"{tag} t4 anything")
    page1.locator("#chat-send").click()
    page1.locator("#chat-status").get_by_text(CHANGED).wait_for()
    expect(page1.locator("#chat-chatbot")).not_to_contain_text(f"{tag} t1", use_inner_text=True)
    assert stored_with(db, tag) == []
    page1.reload()
    page1.get_by_role("tab", name="Chat").click()
    chat_send(page1, f"{tag} t5 afresh")
    stored = stored_with(db, tag)
    assert [[text for text in turns if tag in text] for turns in stored] == [[f"{tag} t5 afresh"]]
    assert_no_toasts(page1, "a message on a deleted conversation")


def test_a_battle_started_on_one_server_is_rated_and_voted_on_the_other(servers):
    db, r1, r2 = servers
    tag = session()
    page1, page2 = r1.client(tag), r2.client(tag)
    page1.predict(api_name="/battle_start")
    page1.predict(f"{tag} a comedy please", api_name="/battle_send_a")
    page1.predict(f"{tag} a comedy please", api_name="/battle_send_b")
    assert "satisfied" in page2.predict(api_name="/battle_satisfied_a")[0]
    assert "frustrated" in page2.predict(api_name="/battle_frustrated_b")[0]
    assert "your vote was saved" in page2.predict("", api_name="/battle_vote_a")[0]
    # r1's page still shows the battle under way: a message there changes nothing stored, says so, and the
    # pane shows the battle as stored now (none under way), with the message still in its box.
    chatbot, _, status, box, _ = page1.predict(f"{tag} one more", api_name="/battle_send_a")
    assert status.endswith(CHANGED) and texts(chatbot) == [] and box_text(box) == f"{tag} one more"
    with Store(db) as store:
        sides = [d for d in store.list_dialogues() if any(tag in u.text for u in d.utterances)]
        ids = {d.dialogue_id for d in sides}
        votes = [v for v in store.list_votes() if {v.dialogue_a, v.dialogue_b} == ids]
    assert len(sides) == 2 and all(d.num_turns == 1 for d in sides)
    by_side = {d.metadata.get("side"): d for d in sides}
    assert by_side["A"].feedback.sentiment == "satisfied" and by_side["B"].feedback.sentiment == "frustrated"
    assert len(votes) == 1 and votes[0].choice == "A"
    assert not any("one more" in u.text for d in sides for u in d.utterances)


def at_once(*calls: Callable[[], Any]) -> list[Any]:
    """Run the calls in threads released together (one request to each server at the same moment)."""
    start, answers, errors = threading.Barrier(len(calls)), [None] * len(calls), []

    def run(n: int) -> None:
        start.wait()
        try:
            answers[n] = calls[n]()
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(n,)) for n in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    return answers


def test_a_first_message_reaching_both_servers_at_once_stores_one_conversation(servers):
    """A client retrying its first message through a balancer: the same request (session, message id) reaches
    both servers at the same moment, three times over."""
    db, r1, r2 = servers
    for n in range(3):
        tag = session()
        pages = (r1.client(tag), r2.client(tag))
        answers = at_once(*(lambda page=page, tag=tag: page.predict(f"{tag} hello", SYSTEM, "m1",
                                                                    api_name="/chat_send")
                            for page in pages))
        stored = stored_with(db, tag)
        assert len(stored) == 1 and stored[0][0] == f"{tag} hello", stored  # not one per server
        assert all(texts(chatbot)[::2] == stored[0][::2] for chatbot, *_ in answers)


def study_page(server):
    from gradio_client import Client

    return Client(server.url + "study/", verbose=False, httpx_kwargs={"timeout": 120})


def test_the_same_worker_pressing_start_on_both_servers_at_once_holds_one_place(servers):
    """Each worker opens the study link on both servers (the same worker id and browser), and each Start and
    each first message reaches both at the same moment: one place per worker, one set of conversations, no
    conversation left over from the second Start."""
    db, r1, r2 = servers
    with Store(db) as store:
        text = study_yaml(systems=STUDY_SYSTEMS, quota_per_cell=5, tasks_per_participant=1,
                          new_workers_per_minute=60)
        store.save_study(parse_study(text), text, "ada")
    workers = [f"w{n}-{session()}" for n in range(4)]
    for worker in workers:
        pages = [study_page(r1), study_page(r2)]
        for page in pages:
            page.predict("pilot", pid(worker), f"browser-of-{worker}", api_name="/study_enter")
            page.predict(api_name="/study_consent")
        at_once(*(lambda page=page: page.predict(api_name="/study_start") for page in pages))
        at_once(*(lambda page=page, n=n: page.predict(f"hello {n} from {worker}", api_name="/study_send_a")
                  for n, page in enumerate(pages)))
    with Store(db) as store, store.read() as conn:
        places = conn.execute(sa.select(t.study_claims.c.pseudonym)).scalars().all()
        tasks = {p.pseudonym: p.data.get("task") or {} for p in store.list_participants("pilot")}
        stored = {d.dialogue_id for d in store.list_dialogues() if d.metadata.get("source") == "study"}
    assert len(tasks) == len(workers) and sorted(places) == sorted(tasks)  # one place per worker
    handed_out = {d for task in tasks.values() for d in task["dialogues"].values()}
    assert len(handed_out) == len(workers) * len(STUDY_SIDES)
    assert stored == handed_out  # every task conversation stored once, none left over from a second Start


def researcher(server):
    """The researcher pages of `server`, logged in there (Gradio's login holds on the server that made it)."""
    from gradio_client import Client

    with httpx.Client(timeout=60) as http:
        login = http.post(server.url + "admin/login", data={"username": "ada", "password": PASSWORD})
        assert login.status_code == 200
        cookie = "; ".join(f"{name}={value}" for name, value in http.cookies.items())
    return Client(server.url + "admin/", verbose=False, headers={"Cookie": cookie},
                  httpx_kwargs={"timeout": 120})


def test_a_run_started_on_one_server_is_cancelled_from_the_other(servers):
    db, r1, r2 = servers
    page1, page2 = researcher(r1), researcher(r2)
    # 1000 dialogues of up to 20 turns, one at a time: still running when the cancel comes
    run_box, _, _ = page1.predict([SYSTEM], "llm_us", 1000, 20, 0, 1, False, False,
                                  api_name="/evaluate_start")
    run_id = run_box if isinstance(run_box, str) else run_box["value"]
    with Store(db) as store:
        wait_until(lambda: (store.get_run(run_id) or {}).get("status") == "running", 60, "r1 running the run")
        assert store.run_lease(run_id)[0].startswith(r1.owner_prefix)
        # The researcher's page on the other server lists the runs as the store has them (what opening the
        # page does), and its cancel goes there.
        page2.predict(None, api_name="/evaluate_refresh")
        progress, _ = page2.predict(run_id, api_name="/evaluate_cancel")
        assert "cancel" in progress
        wait_until(lambda: store.get_run(run_id)["status"] == "cancelled", 30, "r1 ending the cancelled run")
        state = store.get_run(run_id)
        assert state["done"] < state["total"] and store.run_lease(run_id)[1] is None  # released by r1
        stored = store.dialogue_ids([f"{run_id}-{SYSTEM}-{i:04d}" for i in range(1000)])
        time.sleep(2)  # nothing more of it is run or stored
        assert store.dialogue_ids([f"{run_id}-{SYSTEM}-{i:04d}" for i in range(1000)]) == stored
    _, progress, _ = page2.predict(run_id, api_name="/evaluate_refresh")
    assert "cancelled" in progress
    with pytest.raises(Exception, match="not running"):
        page1.predict(run_id, api_name="/evaluate_cancel")


def test_the_vote_cap_of_an_address_holds_across_both_servers(servers):
    db, r1, r2 = servers
    with Store(db) as store:
        before = len(store.list_votes())
    answers = []
    for n in range(2 * VOTES_PER_ADDRESS):  # fresh sessions, one address, alternating servers
        page = (r1, r2)[n % 2].client(session())
        page.predict(api_name="/battle_start")
        page.predict("any thriller?", api_name="/battle_send_a")
        page.predict("any thriller?", api_name="/battle_send_b")
        page.predict(api_name="/battle_satisfied_a")
        page.predict(api_name="/battle_satisfied_b")
        answers.append(page.predict("", api_name="/battle_vote_b")[0])
    with Store(db) as store:
        stored = len(store.list_votes()) - before
    saved = [a for a in answers if "your vote was saved" in a]
    allowed = VOTES_PER_ADDRESS - before  # a vote of an earlier test here came from this address too
    assert allowed >= 1 and stored == len(saved) == allowed, answers  # not twice the cap with two servers


def test_a_burst_of_wrong_logins_over_both_servers_gets_the_configured_tries_in_all(servers):
    """32 simultaneous wrong passwords from one address, half to each server: the two together check exactly
    `ARENA_LOGIN_MAX_FAILURES` of them (the last of those starts the lockout and says so: 429), then the
    address is locked out on both, even with the right password."""
    _, r1, r2 = servers

    async def burst(password: str, count: int) -> list[int]:
        async with httpx.AsyncClient(timeout=120) as client:
            answers = await asyncio.gather(*(
                client.post((r1, r2)[n % 2].url + "admin/login", data={"username": "ada", "password": password})
                for n in range(count)))
        return [a.status_code for a in answers]

    answers = asyncio.run(burst("wrong", 32))
    assert answers.count(400) == LOGIN_TRIES - 1 and answers.count(429) == 32 - (LOGIN_TRIES - 1), answers
    assert asyncio.run(burst(PASSWORD, 2)) == [429, 429]  # locked out on both servers
