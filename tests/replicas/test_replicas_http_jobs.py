"""Scoring jobs shared by two app servers (`python app.py`, each its own process and port) on one PostgreSQL
database, as deployed: each server's scorer calls an LLM judge endpoint over HTTP (an OpenAI-compatible
scripted server, one per server, so the test sees which server paid for which call). The first server's
judge holds every answer, so its jobs are mid-flight when the second server starts and when the first is
killed with `kill -9`."""

from __future__ import annotations

import json
import threading
import time
from types import SimpleNamespace

import pytest
import sqlalchemy as sa

from arena.store import Store
from arena.store import schema as t
from tests.acts.acts_helpers import make_dialogue
from tests.acts.test_acts_scoring import keyword_llm
from tests.replicas.app_servers import AppServer
from tests.replicas.replicas_support import scoring_jobs, wait_until
from tests.support.openai_stub_server import OpenAIStubServer, RecordedRequest

pytestmark = pytest.mark.slow  # two app servers and a PostgreSQL cluster

LEASE_S = 4.0
POLL_S = 2.0  # how often an idle scorer worker looks for jobs (webapp.runs.scorer.POLL_SECONDS)
JOBS = [f"job-{i}" for i in range(4)]
METRICS = ("rdl", "sr")


def env(judge: OpenAIStubServer) -> dict[str, str]:
    """A server whose scorer (two workers, the LLM act annotator) calls `judge`, once per call (no retry, no
    cache: every call the server pays for reaches the judge)."""
    return {"ARENA_LLM_PROVIDER": "openai", "OPENAI_BASE_URL": judge.base_url, "OPENAI_API_KEY": "sk-test",
            "ARENA_SCORE_METRICS": ",".join(METRICS), "ARENA_ACTS_ANNOTATOR": "llm",
            "ARENA_SCORER_WORKERS": "2",
            "ARENA_SCORING_LEASE_S": str(LEASE_S), "ARENA_LLM_RETRIES": "0", "ARENA_LLM_CACHE": "0",
            "ARENA_LLM_TIMEOUT": "600"}


def annotate(request: RecordedRequest) -> str:
    """The act annotator's answer to one prompt (the scripted model of the scoring tests)."""
    return keyword_llm(SimpleNamespace(messages=[(m["role"], m["content"]) for m in request.messages]))


def finished(dialogue_id: str):
    """An ended, rated dialogue whose every message names it (so each judge call shows which job paid)."""
    d = make_dialogue([("U", f"[{dialogue_id}] hi, any thriller?", None),
                       ("A", f"[{dialogue_id}] Try Heat (1995).", None),
                       ("U", f"[{dialogue_id}] great, I'll watch it", None)],
                      dialogue_id=dialogue_id, sentiment="satisfied")
    d.end("feedback")
    return d



def paid(judge: OpenAIStubServer, dialogue_id: str) -> int:
    """How many judge calls were about this dialogue."""
    return sum(1 for r in judge.chat_requests if f"[{dialogue_id}]" in json.dumps(r.json))


def score_rows(store: Store) -> dict[str, list[str]]:
    s = t.scores.c
    with store.read() as conn:
        rows = conn.execute(sa.select(s.dialogue_id, s.metric).order_by(s.dialogue_id, s.metric)).all()
    out: dict[str, list[str]] = {}
    for dialogue_id, metric in rows:
        out.setdefault(dialogue_id, []).append(metric)
    return out


def test_a_starting_server_leaves_live_jobs_alone_and_a_killed_servers_jobs_are_retaken_once(
        postgres_server, tmp_path):
    db = postgres_server.create_database("replicas_http_jobs")
    with Store(db) as store:  # four finished dialogues, never scored: the first server to start queues them
        store.save_dialogues([finished(i) for i in JOBS])
    release = threading.Event()  # the first server's judge answers nothing until the end of the test

    def held(request: RecordedRequest) -> str:
        release.wait(600)
        return annotate(request)

    with OpenAIStubServer(default=held) as judge1, OpenAIStubServer(default=annotate) as judge2:
        servers: list[AppServer] = []
        store = Store(db)
        try:
            r1 = AppServer("r1", db, tmp_path, env(judge1))
            servers.append(r1)
            r1.wait_ready()

            def r1_running() -> list[str]:
                now = scoring_jobs(store)
                held_ids = sorted(i for i, (s, o, _) in now.items() if s == "running"
                                  and (o or "").startswith(r1.owner_prefix))
                return held_ids if len(held_ids) == 2 else []

            held_ids = wait_until(r1_running, 120, "r1 running two jobs (its two workers)")
            wait_until(lambda: all(paid(judge1, i) for i in held_ids), 60, "r1's jobs waiting on its judge")
            rest = sorted(set(JOBS) - set(held_ids))

            # A second server starts while r1's jobs are mid-flight: it scores the other two, never r1's.
            r2 = AppServer("r2", db, tmp_path, env(judge2))
            servers.append(r2)
            r2.wait_ready()
            wait_until(lambda: all(scoring_jobs(store)[i][0] == "done" for i in rest), 120,
                       "r2 scoring the queued jobs")
            time.sleep(LEASE_S + POLL_S)  # longer than a lease: r1 renews its own, so they stay with it
            now = scoring_jobs(store)
            assert {i: (now[i][0], now[i][2]) for i in held_ids} == {i: ("running", 1) for i in held_ids}
            assert all(now[i][1].startswith(r1.owner_prefix) for i in held_ids)
            assert all(now[i][0] == "done" and now[i][1].startswith(r2.owner_prefix) and now[i][2] == 1
                       for i in rest), now
            assert [paid(judge2, i) for i in held_ids] == [0, 0]  # r2 paid nothing for r1's live jobs
            once = paid(judge2, rest[0])
            assert once >= 1 and paid(judge2, rest[1]) == once

            # kill -9 of r1 mid-scoring: r2 takes both jobs over once their lease ran out, scores each once.
            r1.kill()
            killed_at = time.monotonic()
            wait_until(lambda: all(scoring_jobs(store)[i][1].startswith(r2.owner_prefix) for i in held_ids),
                       LEASE_S + POLL_S + 30, "r2 taking r1's jobs over")
            taken_after = time.monotonic() - killed_at
            wait_until(lambda: all(scoring_jobs(store)[i][0] == "done" for i in held_ids), 120,
                       "r2 scoring r1's jobs")
            print(f"r1's jobs taken over {taken_after:.1f} s after kill -9 "
                  f"(lease {LEASE_S} s, poll {POLL_S} s)")
            assert taken_after <= LEASE_S + POLL_S + 3  # the documented bound: the lease plus a poll
            final = scoring_jobs(store)
            assert {i: final[i][2] for i in held_ids} == {i: 2 for i in held_ids}  # one try died with r1
            assert all(final[i][2] == 1 for i in rest)
            assert not [i for i, (state, _, _) in final.items() if state != "done"]  # nothing left running
            assert [paid(judge2, i) for i in JOBS] == [once] * len(JOBS)  # each job paid once on r2
            assert score_rows(store) == {i: sorted(METRICS) for i in JOBS}  # each result stored once
            for i in JOBS:
                assert store.get_dialogue(i).scores["sr"].value == 1.0
        finally:
            release.set()
            for server in servers:
                server.stop()
            store.close()
