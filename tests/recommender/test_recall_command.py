"""`python -m evaluators recall`: output format, order, counting, bad lines, unknown systems."""

from __future__ import annotations

import io
import json

from arena.dialogue import Role
from crs.recommender.recommender import Recommender, build_signals
from crs.recommender.statistics import ItemStatistics
from evaluators import cli
from evaluators.recall import dialogue_from_context, rank_file


class RankingSystem:
    """What the command needs of a system: `catalog` and `recommend(dialogue, k)`."""

    def __init__(self, recommender: Recommender):
        self.catalog = recommender.catalog
        self.recommender = recommender

    def recommend(self, dialogue, k):
        ctx = self.recommender.context_of(dialogue)
        return [r.item.to_recommended() for r in self.recommender.rank(ctx, k, leave_out_rejected=False)]


def system(films):
    catalog, kg_path = films
    stats = ItemStatistics.from_dialogues([["1", "3"], ["1", "3"], ["4"]])
    return RankingSystem(Recommender(catalog, build_signals(catalog, stats, None, None, kg_path)))


def test_one_line_per_input_line_in_order_with_catalog_names(films):
    lines = [
        json.dumps({"dialog_id": "a", "turn_id": 1, "context": ["a mafia family drama please"],
                    "rec": ["The Godfather (1972)"]}),
        "not json at all",
        json.dumps({"dialog_id": "b", "turn_id": 3,
                    "context": ["I love Heat (1995)", "Try Goodfellas (1990)", "Seen it, what else?"],
                    "rec": ["Goodfellas (1990)", "Toy Story (1995)"]}),
    ]
    out = io.StringIO()
    rankings, targets, seconds, bad = rank_file(system(films), lines, 8, out)
    written = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [w.get("dialog_id") for w in written] == ["a", None, "b"]
    assert written[1]["items"] == [] and "error" in written[1]
    names = {item.name for item in films[0].items}
    assert set(written[0]["items"]) <= names and len(written[0]["items"]) == 8
    assert written[0]["items"][0] == "The Godfather (1972)"
    # Items the user mentioned or has seen stay rankable in the offline protocol.
    assert "Goodfellas (1990)" in written[2]["items"] and "Heat (1995)" in written[2]["items"]
    assert bad == 1 and len(rankings) == 2 and targets[1] == ["Goodfellas (1990)", "Toy Story (1995)"]
    assert len(seconds) == 2


def test_dialogue_alternates_starting_with_the_user():
    d = dialogue_from_context(["hi", "hello", "a comedy"])
    assert [u.role for u in d.utterances] == [Role.USER, Role.AGENT, Role.USER]


def test_unknown_system_gets_one_clear_line(tmp_path, capsys, isolated_env):
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"context": ["hi"], "rec": []}) + "\n")
    code = cli.main(["recall", "--crs", "no_such_system", "--input", str(source), "--out", str(tmp_path / "o.jsonl")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "unknown system 'no_such_system'" in err[0]
