"""`python -m evaluators score --db`: the stored dialogues scored in place, on threads or Ray, resumable."""

import pytest

from arena.runtime.config import Settings
from arena.dialogue import Dialogue, RecommendedItem, UserInfo
from arena.store import Store
from evaluators.bulk_scoring import ScoringJob, pending
from evaluators.cli import main


def _dialogues(n):
    out = []
    for i in range(n):
        d = Dialogue(crs_id=f"crs-{i % 2}", user=UserInfo(id=f"user-{i}"))
        d.add_user("Hi! I'd like a funny movie from the nineties.")
        d.add_agent("Have you seen Groundhog Day (1993)?",
                    items=[RecommendedItem(item_id=str(100 + i), title="Groundhog Day (1993)")])
        d.add_user("Yes, I loved it. Something else?" if i % 2 else "No, that sounds great, thanks!")
        d.end("user_stopped")
        out.append(d)
    return out


# The Ray path stores through the same Store calls as the thread path, so one backend is enough for it.
@pytest.mark.parametrize("backend,engine", [("sqlite", "threads"), ("postgresql", "threads"), ("sqlite", "ray")])
def test_scores_every_unscored_dialogue_once_and_resumes(backend, engine, tmp_path, request):
    if engine == "ray":
        request.getfixturevalue("ray_local")
    if backend == "sqlite":
        db_location = str(tmp_path / "arena.sqlite3")
    else:
        db_location = request.getfixturevalue("postgres_server").create_database()
    with Store(db_location) as store:
        dialogues = _dialogues(6)
        store.save_dialogues(dialogues)
        empty = Dialogue(crs_id="crs-0", user=UserInfo(id="left-at-once"))
        store.save_dialogue(empty)
        job = ScoringJob(location=db_location, metrics=("acts", "rdl"), settings=Settings(db_path=db_location),
                         annotator="offline")
        first = pending(store, job, limit=2)
        assert first == [d.dialogue_id for d in dialogues[:2]]
    args = ["score", "--db", db_location, "--metrics", "acts,rdl", "--annotator", "offline", "--engine", engine,
            "--task-cpus", "0.5", "--quiet"]
    assert main(args + ["--limit", "2"]) == 0  # an interrupted first pass
    with Store(db_location) as store:
        assert pending(store, job) == [d.dialogue_id for d in dialogues[2:]]
        scored_at = {i: store.get_dialogue(i).scores["rdl"].timestamp for i in first}
    assert main(args) == 0
    with Store(db_location) as store:
        assert pending(store, job) == []
        for d in dialogues:
            got = store.get_dialogue(d.dialogue_id)
            assert got.scores["rdl"].value is not None and got.scores["rdl"].error is None
        # The dialogues of the first pass were not scored again.
        assert {i: store.get_dialogue(i).scores["rdl"].timestamp for i in first} == scored_at
        assert store.get_dialogue(empty.dialogue_id).scores == {}
