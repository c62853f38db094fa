"""End to end: the command line, through the real openai client, against a local test server."""

import pytest
from sim_fakes import AttributeCRS, BrokenCRS, spec

from arena.dialogue import UserKind
from arena.store import Store
from webapp.runs.cli import main
from tests.support.openai_stub_server import OpenAIStubServer, RecordedRequest


def stub_user(request: RecordedRequest) -> str:
    system = request.messages[0]["content"]
    if "judge conversations" in system:
        return "CONTINUE"
    guidance = request.last_user_message.split("What to do now:", 1)[-1].split("\n")[0]
    return f"User: {guidance.strip()}"


@pytest.fixture
def cli_env(isolated_env, monkeypatch, view):
    import webapp.services

    monkeypatch.setattr(webapp.services, "default_specs",
                        lambda settings, llm: [spec("attr", AttributeCRS(view)), spec("attr2", AttributeCRS(view)),
                                               spec("broken", BrokenCRS())])
    with OpenAIStubServer(default=stub_user) as server:
        monkeypatch.setenv("ARENA_LLM_PROVIDER", "openai")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("ARENA_LLM_MODEL", "stub-user-model")
        monkeypatch.setenv("ARENA_LLM_CACHE", "0")
        yield server, isolated_env / "arena.sqlite3"


def test_cli_run_through_the_openai_client(cli_env, capsys):
    server, db = cli_env
    rc = main(["run", "--crs", "attr,attr2", "--simulator", "llm_us", "-n", "3", "--max-turns", "3",
               "--seed", "7", "--concurrency", "4", "--no-score"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "status: finished; 6 dialogues stored, 0 with errors" in out
    assert "attr2" in out.split("status:")[0]  # the per-system summary table
    dialogues = Store(db).list_dialogues()
    assert len(dialogues) == 6
    for d in dialogues:
        assert d.user.kind == UserKind.SIMULATOR and d.user.details["model"] == "openai:stub-user-model"
        assert d.num_turns >= 1 and not d.user_turns()[0].text.startswith("User:")  # speaker label removed
    assert len(server.chat_requests) >= 6
    assert all(r.json["model"] == "stub-user-model" for r in server.chat_requests)
    runs = Store(db).list_runs()
    assert len(runs) == 1 and runs[0][1]["status"] == "finished"


def test_cli_run_with_an_errored_dialogue_exits_non_zero_and_says_which(cli_env, capsys):
    """Every dialogue is stored, the failed ones too, but a run whose dialogues ended in an error is not a
    run that worked: exit 1 and one line per such dialogue."""
    _, db = cli_env
    rc = main(["run", "--crs", "attr,broken", "--simulator", "abus", "--nlu", "llm", "-n", "2",
               "--max-turns", "2", "--no-score"])
    captured = capsys.readouterr()
    assert rc == 1, captured.out + captured.err
    assert "status: finished; 4 dialogues stored, 2 with errors" in captured.out
    lines = [line for line in captured.err.splitlines() if line.startswith("error: dialogue ")]
    assert len(lines) == 2, captured.err
    assert all("(broken)" in line and "model crashed" in line for line in lines), captured.err
    assert len(Store(db).list_dialogues()) == 4  # nothing lost


def test_cli_rejects_unknown_simulators_and_systems(cli_env, capsys):
    assert main(["run", "--crs", "attr", "--simulator", "nope", "-n", "1", "--no-score"]) == 2
    assert main(["run", "--crs", "missing", "--simulator", "abus", "-n", "1", "--no-score"]) == 2
    err = capsys.readouterr().err
    assert "unknown simulator" in err and "unknown CRS" in err


def test_cli_lists_simulators_systems_and_runs(cli_env, capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "llm_us" in out and "pepper" in out and "attr2" in out
    main(["run", "--crs", "attr", "--simulator", "abus", "--nlu", "llm", "-n", "1", "--max-turns", "2",
          "--no-score"])
    capsys.readouterr()
    assert main(["runs"]) == 0
    assert "finished" in capsys.readouterr().out
