"""More training data: the IARD ReDial dialogues and the other dataset's dialogues, on hand-made data."""

from __future__ import annotations

import json
from types import MappingProxyType

import numpy as np

from arena.catalogs.catalog import Catalog, CatalogItem
from crs.recommender.context import read_context
from crs.recommender.elsewhere import ElsewhereSignal
from crs.recommender.extra_dialogues import TitleIndex, iard_turns, linked_item_sets
from crs.recommender.statistics import ItemStatistics


def _conversation(conversation_id, *utterances):
    return {"conversation_id": conversation_id,
            "conversation": [{"participant": who, "utterance": text, "dialogue_acts": []} for who, text in utterances]}


def test_titles_with_years_are_found_in_text(films):
    catalog, _ = films
    titles = TitleIndex(catalog)
    assert titles.in_text("Have you seen The Godfather (1972) or Heat (1995) ?") == ["2", "1"]
    assert titles.in_text("Heat (1996) is not in the catalog, nor is Godfather (1972)") == []
    assert titles.find("heat", 1995) == "1" and titles.find("Heat", None) == "1"
    assert titles.find("Heat", 2001) is None


def test_iard_dialogues_become_training_turns(films, tmp_path):
    catalog, _ = films
    path = tmp_path / "iard.json"
    path.write_text(json.dumps([
        _conversation("15", ("AGENT", "Hi!"), ("USER", "I want a crime film."), ("USER", "I loved Heat (1995)"),
                      ("AGENT", "Try Goodfellas (1990) or The Godfather (1972)"), ("USER", "Seen Goodfellas (1990)"),
                      ("AGENT", "Then Ocean's Eleven (2001)")),
        _conversation("16", ("USER", "hi"), ("AGENT", "Heat (1995) is great")),  # already in the iEvaLM files
        _conversation("20001", ("USER", "hi"), ("AGENT", "Saw (2004) then")),  # ReDial's test range
    ]))
    turns = iard_turns(path, catalog, skip_ids={"16"})
    assert [t.dialog_id for t in turns] == ["iard:15", "iard:15"]
    first, second = turns
    assert first.context == ["", "Hi!", "I want a crime film. I loved Heat (1995)"]
    assert first.targets == ["3", "2"] and first.named == ["1"]
    assert second.targets == ["8"] and second.named == ["1", "3", "2"]
    assert len(second.context) == 5 and second.context[-1] == "Seen Goodfellas (1990)"


def test_other_dataset_dialogues_are_linked_by_title_and_year(films, tmp_path):
    catalog, _ = films
    other_items = [
        CatalogItem(item_id=str(i), title=title, year=year, genres=(), people=MappingProxyType({}), plot="",
                    entity_id=None, dataset="opendialkg", name=title)
        for i, (title, year) in enumerate([("Heat", 1995), ("Goodfellas", 1990), ("Heat", 1986), ("Up", 2009)])
    ]
    other = Catalog("other", other_items, {}, {}, dataset="opendialkg")
    path = tmp_path / "train_data_processed.jsonl"
    rows = [{"dialog_id": 1, "context": ["x"], "entity": ["Heat", "Robert De Niro"], "rec": ["Goodfellas"]},
            {"dialog_id": 1, "context": ["x"], "entity": ["Goodfellas"], "rec": []},
            {"dialog_id": 2, "context": ["x"], "entity": ["Up"], "rec": ["Heat"]}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    # "Heat" names the 1995 film first in the other catalog; "Up" is not in this one.
    assert linked_item_sets([path], other, catalog) == [["1", "3"], ["1"]]


def test_elsewhere_counts_score_popularity_and_company(films, tmp_path):
    catalog, _ = films
    stats = ItemStatistics.from_dialogues([["4"]], [], elsewhere_sets=[["1", "3"], ["1", "3"], ["1", "8"], ["5"]])
    assert stats.elsewhere == {"1": 3, "3": 2, "8": 1, "5": 1} and stats.elsewhere_comention[("1", "3")] == 2
    stats.save(tmp_path / "s.json")
    assert ItemStatistics.load(tmp_path / "s.json") == stats
    row_of = {item.item_id: i for i, item in enumerate(catalog.items)}
    signal = ElsewhereSignal(stats, row_of, len(catalog.items))
    ctx = read_context(catalog, ["I loved Heat"], [True])
    popularity, company = signal.scores(ctx)
    assert popularity[row_of["1"]] == 1.0 and popularity[row_of["4"]] == 0  # Toy Story only in this dataset
    assert company[row_of["3"]] > company[row_of["8"]] > 0 and company[row_of["5"]] == 0
    nothing = ElsewhereSignal(ItemStatistics(), row_of, len(catalog.items)).scores(ctx)
    assert not any(np.any(v) for v in nothing)
