"""Refused input on the command line: one clear line, nothing lost, nothing half-written."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from safety_support import dialogue_record, write_records  # noqa: E402

from arena.corpus import cli as corpus_cli  # noqa: E402
from arena.store import Store  # noqa: E402
from evaluators import cli as evaluators_cli  # noqa: E402


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err
    assert len(err.splitlines()) == 1, err
    return err


def test_import_of_a_stored_id_is_refused_unless_replace(tmp_path, capsys):
    db = tmp_path / "arena.sqlite3"
    first = write_records(tmp_path / "a.json", [dialogue_record("conv-1", "satisfied")])
    tampered = write_records(tmp_path / "b.json", [dialogue_record("conv-1", "frustrated")])
    assert corpus_cli.main(["import", str(first), "--db", str(db)]) == 0
    capsys.readouterr()

    assert corpus_cli.main(["import", str(tampered), "--db", str(db)]) == 2
    assert "already stored" in _one_line_error(capsys)
    assert Store(db).get_dialogue("conv-1").feedback.sentiment == "satisfied"

    assert corpus_cli.main(["import", "--replace", str(tampered), "--db", str(db)]) == 0
    assert Store(db).get_dialogue("conv-1").feedback.sentiment == "frustrated"


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_numbers_are_refused(tmp_path, capsys, number):
    db = tmp_path / "arena.sqlite3"
    path = tmp_path / "bad.json"
    path.write_text(write_records(tmp_path / "x.json", [dialogue_record("conv-nan", score=0.5)])
                    .read_text().replace("0.5", number))
    assert corpus_cli.main(["import", str(path), "--db", str(db)]) == 2
    assert "non-finite" in _one_line_error(capsys)
    assert Store(db).count_dialogues() == 0


def test_non_finite_score_objects_are_refused(tmp_path):
    from arena.dialogue import Score
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        Score(value=float("inf"), scorer="rdl", version="1")


def test_deeply_nested_json_gives_one_line(tmp_path, capsys):
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    assert corpus_cli.main(["import", str(path), "--db", str(tmp_path / "db.sqlite3")]) == 2
    assert "nested too deeply" in _one_line_error(capsys)


def test_empty_input_file_is_refused(tmp_path, capsys):
    path = tmp_path / "empty.jsonl"
    path.write_text("\n")
    assert corpus_cli.main(["import", str(path), "--db", str(tmp_path / "db.sqlite3")]) == 2
    assert "empty" in _one_line_error(capsys)


def test_db_path_that_is_a_folder_gives_one_line(tmp_path, capsys):
    good = write_records(tmp_path / "a.json", [dialogue_record("conv-1")])
    assert corpus_cli.main(["import", str(good), "--db", str(tmp_path)]) == 2
    assert "is a directory" in _one_line_error(capsys)


def test_db_path_that_is_not_a_database_gives_one_line(tmp_path, capsys):
    good = write_records(tmp_path / "a.json", [dialogue_record("conv-1")])
    junk = tmp_path / "junk.sqlite3"
    junk.write_bytes(b"this is not sqlite at all" * 100)
    assert corpus_cli.main(["import", str(good), "--db", str(junk)]) == 2
    assert "not a usable database" in _one_line_error(capsys)
    out = tmp_path / "out"
    assert evaluators_cli.main(["export", "--db", str(junk), "--out", str(out)]) == 2
    _one_line_error(capsys)


def test_score_out_that_is_a_folder_gives_one_line(tmp_path, capsys):
    good = write_records(tmp_path / "a.json", [dialogue_record("conv-1")])
    assert evaluators_cli.main(["score", "--input", str(good), "--metrics", "sr", "--out", str(tmp_path),
                                "--annotator", "offline", "--quiet"]) == 2
    assert "is a folder" in _one_line_error(capsys)


def test_interrupt_leaves_no_partial_output(tmp_path, capsys, monkeypatch):
    records = [dialogue_record(f"conv-{i}") for i in range(3)]
    good = write_records(tmp_path / "in.json", records)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    calls = []

    def interrupted(dialogue, metrics, **kwargs):
        calls.append(dialogue.dialogue_id)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return {}

    import evaluators.scoring

    monkeypatch.setattr(evaluators.scoring, "score_dialogue", interrupted)
    code = evaluators_cli.main(["score", "--input", str(good), "--metrics", "sr",
                                "--out", str(out_dir / "scored.jsonl"), "--quiet"])
    assert code == 130
    assert list(out_dir.iterdir()) == []
    _one_line_error(capsys)


def test_refused_input_is_logged_in_one_line(tmp_path, caplog):
    path = tmp_path / "empty.json"
    path.write_text("")
    with caplog.at_level(logging.WARNING):
        assert corpus_cli.main(["import", str(path), "--db", str(tmp_path / "db.sqlite3")]) == 2
    refused = [r for r in caplog.records if r.name == "arena.refused"]
    assert len(refused) == 1
    assert refused[0].exc_info is None and "\n" not in refused[0].getMessage()


def test_score_with_a_failed_metric_exits_non_zero_and_names_the_dialogue(tmp_path, capsys):
    """A metric that cannot be computed is stored as unscored (never 0), but the command that stored it
    does not exit 0: one line per such dialogue, with the metric and why. Recall needs target items,
    which these dialogues do not carry."""
    good = write_records(tmp_path / "a.json", [dialogue_record("conv-1"), dialogue_record("conv-2")])
    scored = tmp_path / "scored.jsonl"
    code = evaluators_cli.main(["score", "--input", str(good), "--metrics", "recall", "--out", str(scored),
                                "--quiet"])
    err = capsys.readouterr().err
    assert code == 1, err
    assert len(scored.read_text().splitlines()) == 2  # written all the same
    lines = [line for line in err.splitlines() if line.startswith("error: ")]
    assert [line.split(":")[1].strip() for line in lines] == ["conv-1", "conv-2"], err
    assert all("recall: no target items" in line for line in lines), err
    db = tmp_path / "arena.sqlite3"
    assert corpus_cli.main(["import", str(good), "--db", str(db)]) == 0
    capsys.readouterr()
    assert evaluators_cli.main(["score", "--db", str(db), "--metrics", "recall", "--all", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert sum(line.startswith("error: conv-") for line in err.splitlines()) == 2, err
