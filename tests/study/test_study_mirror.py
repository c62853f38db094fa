"""A Space restart restores a study from the Hub mirror: its files (every version), its workers' rows
(progress, flags, completion), its quota claims and its crowd's votes, so a worker resumes where they were
and cannot complete twice."""

from __future__ import annotations

import json

import sqlalchemy as sa
from test_study_flow import do_task, link, start

from arena.store import schema as t
from arena.corpus.hub_mirror import HubMirror
from study_support import pid, publish
from tests.battle.battle_support import FakeCatalogCRS, make_services
from tests.space.mirror_support import SALT
from tests.support.hub_server import HubServer
from webapp.sessions import study as flow

REPO = "researchers/arena-corpus"
SYSTEMS = ("alpha", "beta", "gamma")


def services_at(folder):
    return make_services(folder, [FakeCatalogCRS(s) for s in SYSTEMS], max_turns=6, pseudonym_salt=SALT)


def mirror(hub, services, replica):
    return HubMirror(services.store, REPO, salt=SALT, token="hf_test_token", endpoint=hub.url, replica=replica)


def table_rows(store, table):
    with store.read() as conn:
        return sorted(tuple(r) for r in conn.execute(sa.select(table)))


def without_platform(store):
    """The workers' rows, their platform ids aside (pseudonymised in the mirror)."""
    rows = []
    for row in table_rows(store, t.study_participants):
        data = json.loads(row[4])
        # The platform's study id only: the session id binds the worker as a pseudonym (`bound_to`) and is
        # kept raw only in the researcher-only table the payment sheet reads, which is never mirrored.
        assert set(data.pop("platform")) == {"STUDY_ID"}
        rows.append((*row[:4], data, *row[5:]))
    return rows


def test_a_restored_store_keeps_the_study_and_its_workers(tmp_path):
    before = services_at(tmp_path / "one")
    after = None
    try:
        with HubServer() as hub:
            first = mirror(hub, before, "r1")
            first.prepare()
            publish(before, tasks_per_participant=1)
            publish(before, mode="battle", tasks_per_participant=1)  # version 2: the battle study
            start(before, "DONE")
            study, p = do_task(before, "DONE", choice="A")
            assert p.status == "completed"
            study, p = start(before, "HALF")  # mid-task: a reserved place and a message sent
            flow.send(before, study, p, "A", "a space movie please")
            half = before.store.get_participant("pilot", p.pseudonym)
            assert first.push() > 0
            files = [f for f in hub.files(REPO) if f.startswith("shards/study_")]
            assert {f.split("/")[1] for f in files} == {"study_files", "study_participants", "study_claims"}
            pushed = b"".join(hub.files(REPO)[f] for f in files if "/study_participants/" in f)
            # the platform's own ids never leave: pseudonymised as user ids are
            assert pid("platform-study").encode() not in pushed and pid("s1").encode() not in pushed
            assert b"pseudonym:" in pushed

            after = services_at(tmp_path / "two")  # a new, empty disk
            counts = mirror(hub, after, "r2").prepare()
            assert counts["study_files"] == 2 and counts["study_participants"] == 2 and counts["study_claims"] == 2
            for table in (t.study_files, t.study_claims):
                assert table_rows(after.store, table) == table_rows(before.store, table)
            assert without_platform(after.store) == without_platform(before.store)
            assert after.store.study_ids() == [("pilot", 2)]
            assert after.store.study_text("pilot", 1) == before.store.study_text("pilot", 1)
            (vote,) = after.store.list_votes()
            assert (vote.study, vote.study_version) == ("pilot", 2)
            assert after.store.pair_counts() == {}  # still the study's crowd, not the open arena's
            assert after.store.cell_fill(study) == before.store.cell_fill(study)

            # The worker who finished cannot complete again; the one half way resumes the same task.
            done_study, done = flow.enter(after, link("DONE"))
            assert done.status == "completed" and flow.completed(done)
            flow.begin(after, done_study, done)
            assert after.store.get_participant("pilot", done.pseudonym).data["step"] == "done"
            study, back = flow.enter(after, link("HALF"))
            assert {**back.data, "platform": None} == {**half.data, "platform": None} and back.status == "active"
            assert len(flow.task_dialogues(after, back)["A"].user_turns()) == 1
            assert len(after.store.list_participants("pilot")) == 2
            assert mirror(hub, after, "r2").push() == 0  # what was restored is not pushed again
    finally:
        before.store.close()
        if after is not None:
            after.store.close()
