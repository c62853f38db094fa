"""A UserSimCRS output file (DialogueKit's export of simulated dialogues) whose dialogues share a
conversation ID, as DialogueKit names a dialogue after the second it started in: refused with one
line per problem, or imported with `--rename-duplicates`, each renamed dialogue said on its line."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from dialoguekit_support import require_dialoguekit  # noqa: E402

from arena.corpus.cli import main as corpus_main  # noqa: E402
from arena.corpus.records import export_json  # noqa: E402
from arena.store import Store  # noqa: E402


@pytest.fixture(autouse=True)
def _dialoguekit():
    require_dialoguekit()


def _same_second_dialogues(count: int) -> list[dict]:
    """`count` simulated dialogues as UserSimCRS's run leaves them (DialogueKit's Dialogue, named by
    DialogueKit itself), all started within one second."""
    from dialoguekit.core.dialogue import Dialogue
    from dialoguekit.core.utterance import Utterance
    from dialoguekit.participant.participant import DialogueParticipant

    for _ in range(5):  # started across a second boundary: start again
        dialogues = [Dialogue("arena_agent", "simulated_user") for _ in range(count)]
        if len({d.conversation_id for d in dialogues}) == 1:
            break
        time.sleep(0.05)
    records = []
    for n, d in enumerate(dialogues):
        d.add_utterance(Utterance("Hello! What kind of movie are you looking for?",
                                  DialogueParticipant.AGENT))
        d.add_utterance(Utterance(f"Something with robots, take {n}", DialogueParticipant.USER))
        rec = d.to_dict()
        # as DialogueKit's connector writes the two participants beside the dialogue
        rec["agent"] = {"id": "arena_agent", "type": "AGENT"}
        rec["user"] = {"id": "simulated_user", "type": "USER"}
        records.append(rec)
    assert len({r["conversation ID"] for r in records}) == 1
    return records


def test_shared_conversation_ids_are_refused_with_one_line_per_problem(tmp_path, capsys):
    records = _same_second_dialogues(3)
    records.append({"conversation ID": "broken", "conversation": "not a list"})
    path = tmp_path / "arena_agent_simulated_user.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    db = tmp_path / "arena.sqlite3"
    assert corpus_main(["import", str(path), "--db", str(db)]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    shared = records[0]["conversation ID"]
    assert err[0] == f"error: cannot import dialogues from {path}: 3 problems; nothing was imported"
    assert err[1] == (f"  record 1, conversation ID {shared!r}, field 'conversation ID': duplicate of "
                      "record 0 (--rename-duplicates gives it another id)")
    assert err[2].startswith(f"  record 2, conversation ID {shared!r}, field 'conversation ID': duplicate of "
                             "record 0")
    assert err[3].startswith("  record 3, conversation ID 'broken'")
    assert len(err) == 4
    assert not db.exists() or Store(db).count_dialogues() == 0


def test_rename_duplicates_gives_distinct_ids_and_says_so_per_dialogue(tmp_path, capsys):
    records = _same_second_dialogues(3)
    shared = records[0]["conversation ID"]
    # An id the file already holds is never given to a renamed dialogue.
    taken = json.loads(json.dumps(records[0]))
    taken["conversation ID"] = f"{shared}-2"
    records.append(taken)
    path = tmp_path / "arena_agent_simulated_user.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    db = tmp_path / "arena.sqlite3"
    assert corpus_main(["import", str(path), "--db", str(db), "--rename-duplicates"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == [f"renamed: record 1: conversation ID {shared!r} is also record 0's; imported as "
                       f"{shared + '-3'!r}",
                       f"renamed: record 2: conversation ID {shared!r} is also record 0's; imported as "
                       f"{shared + '-4'!r}"]
    assert out[2] == f"imported 4 dialogues into {db} (2 under a new id)"
    with Store(db) as store:
        first, second, third = (store.get_dialogue(i) for i in (shared, f"{shared}-3", f"{shared}-4"))
        assert "renamed_from" not in first.metadata
        assert second.metadata["renamed_from"] == third.metadata["renamed_from"] == shared
        assert second.utterances[1].text == "Something with robots, take 1"
        assert store.get_dialogue(f"{shared}-2").metadata.get("renamed_from") is None
        out_file = tmp_path / "research.json"
        export_json(store, out_file, salt="s", source_ids=True)
    exported = {r["conversation ID"]: r for r in json.loads(out_file.read_text())}
    assert exported[f"{shared}-3"]["metadata"]["dialogue_metadata"]["renamed_from"] == shared
    # The public export keeps the user's id out of the renamed dialogue's source id as everywhere else.
    with Store(db) as store:
        export_json(store, tmp_path / "public.json", salt="s")
    assert "simulated_user" not in (tmp_path / "public.json").read_text()


def test_score_scores_such_a_file_with_rename_duplicates(tmp_path, capsys):
    from evaluators.cli import main as evaluators_main

    records = _same_second_dialogues(2)
    for rec in records:
        for utterance in rec["conversation"]:
            utterance["dialogue_acts"] = [{"intent": "OTH"}]
    path = tmp_path / "usersimcrs.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    out = tmp_path / "scored.jsonl"
    assert evaluators_main(["score", "--input", str(path), "--metrics", "srrr_usersimcrs", "--out", str(out),
                            "--quiet"]) == 2
    shared = records[0]["conversation ID"]
    assert capsys.readouterr().err.splitlines() == [
        f"error: cannot import dialogues from {path}: record 1, conversation ID {shared!r}, field "
        "'conversation ID': duplicate of record 0 (--rename-duplicates gives it another id); nothing was "
        "imported"]
    assert not out.exists()
    assert evaluators_main(["score", "--input", str(path), "--metrics", "srrr_usersimcrs", "--out", str(out),
                            "--quiet", "--rename-duplicates"]) == 0
    assert f"renamed: record 1: conversation ID {shared!r} is also record 0's" in capsys.readouterr().err
    scored = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["conversation ID"] for r in scored] == [shared, f"{shared}-2"]
