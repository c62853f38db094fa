"""Scoring cost is bounded (issue 26): a per-dialogue cap on re-asking unreadable judges and an hourly
budget of endpoint calls (ARENA_SCORING_BUDGET) with one log line when it is reached."""

from __future__ import annotations

import logging
import time

from arena.runtime.config import Settings
from arena.dialogue import Dialogue, UserInfo
from arena.llm.budget import HourlyBudget, budget_of, budgeted_client
from arena.store import Store
from evaluators.core import CoreConfig, score_core
from webapp.runs.scorer import BackgroundScorer

from core_fakes import Script, is_retry, make_client, sample_dialogue

UNREADABLE = Script(judge=lambda factor, model, retry: "I am not sure.",
                    debate=lambda role, rnd, model: "no idea")


def test_retries_of_unreadable_judges_are_capped_per_dialogue():
    uncapped = make_client(UNREADABLE)  # as before the cap: every unreadable answer re-asked
    score_core(sample_dialogue(), uncapped, Settings(llm_provider="fake", judge_retries=10_000),
               config=CoreConfig(seed=1))
    retried_before = sum(is_retry(r) for r in uncapped.provider.requests)
    assert retried_before > 12  # every judge re-asked, and the debaters too

    capped = make_client(UNREADABLE)
    scores = score_core(sample_dialogue(), capped, Settings(llm_provider="fake", judge_retries=2),
                        config=CoreConfig(seed=1))
    assert sum(is_retry(r) for r in capped.provider.requests) == 2
    assert len(capped.provider.requests) == len(uncapped.provider.requests) - (retried_before - 2)
    assert all(s.value is None for s in scores.values())  # unscored, never 0
    assert scores["core.overall"].details["retries_refused"] > 0
    assert any("no retries left" in (s.error or "") or "no retries left" in str(s.details)
               for s in scores.values())


def test_hourly_budget_counts_a_moving_window_and_says_so_once(caplog):
    budget = HourlyBudget(3, window_s=1)  # the window shortened to one second; the hour works alike
    with caplog.at_level(logging.WARNING, logger="arena.llm.budget"):
        assert [budget.try_spend() for _ in range(5)] == [True, True, True, False, False]
    assert budget.exhausted()
    assert len([r for r in caplog.records if "scoring budget reached" in r.getMessage()]) == 1
    assert 0.0 < budget.seconds_until_free() <= 1.0
    time.sleep(budget.seconds_until_free() + 0.05)
    assert not budget.exhausted() and budget.try_spend()
    assert [budget.try_spend() for _ in range(3)] == [True, True, False]  # the moving window: three again
    assert HourlyBudget(3).seconds_until_free() == 0.0


def test_scoring_stops_at_the_budget(caplog):
    client = budgeted_client(make_client(UNREADABLE), 5)
    with caplog.at_level(logging.WARNING, logger="arena.llm.budget"):
        scores = score_core(sample_dialogue(), client, config=CoreConfig(seed=1))
    assert len(client.provider.requests) == 5  # the wrapped provider saw five calls, no more
    assert all(s.value is None for s in scores.values())
    assert any("scoring budget" in str(s.details) or "scoring budget" in (s.error or "") for s in scores.values())
    assert len([r for r in caplog.records if "scoring budget reached" in r.getMessage()]) == 1


def test_background_scorer_leaves_jobs_queued_while_the_budget_is_spent(tmp_path):
    store = Store(tmp_path / "arena.sqlite3")
    d = Dialogue(crs_id="alpha", user=UserInfo(id="u"))
    d.add_user("hi")
    d.add_agent("hello")
    d.end("feedback")
    store.save_dialogue(d)
    client = budgeted_client(make_client(UNREADABLE), 1)
    assert budget_of(client).try_spend()  # the hour's only call is gone
    scorer = BackgroundScorer(store, ["rdl"], client, poll_s=0.05)
    try:
        scorer.submit(d.dialogue_id)
        time.sleep(0.5)
        assert store.scoring_counts()["queued"] == 1 and scorer.completed == 0
    finally:
        scorer.shutdown()
        store.close()
