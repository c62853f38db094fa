import time

from evaluators.core import CoreConfig, score_core

from core_fakes import Script, SleepyProvider, make_client, role_of, sample_dialogue

DELAY = 0.15


def timed(config, concurrency=16, delay=DELAY):
    provider = SleepyProvider(Script(), delay)
    client = make_client(None, provider=provider, concurrency=concurrency)
    started = time.monotonic()
    scores = score_core(sample_dialogue(), client, config=config)
    return time.monotonic() - started, scores, provider


def test_factor_calls_and_debate_rounds_run_concurrently():
    wall, scores, provider = timed(CoreConfig())
    details = scores["core.overall"].details
    assert details["calls"] == 16
    assert provider.max_in_flight == 12  # all twelve factor judges at once
    # 12 judges in parallel, then one debate round of 4 in parallel: about 2 x DELAY,
    # far below the 16 x DELAY of one call after another.
    assert wall < 8 * DELAY
    assert details["judge_wall_s"] < 5 * DELAY
    assert details["debate_wall_s"] < 3 * DELAY


def test_sequential_is_much_slower():
    delay = 0.05
    wall_seq, _, provider = timed(CoreConfig(max_workers=1), delay=delay)
    assert provider.max_in_flight == 1
    assert wall_seq >= 16 * delay
    wall_par, _, _ = timed(CoreConfig(), delay=delay)
    assert wall_par * 2 < wall_seq


def test_the_client_limit_bounds_concurrency():
    wall, _, provider = timed(CoreConfig(), concurrency=4, delay=0.05)
    assert provider.max_in_flight == 4
    assert wall >= 4 * 0.05  # 12 judges in three waves of four, then the debate


def test_the_four_calls_of_each_debate_round_overlap():
    answers = {"common_user": 10, "domain_expert": 20, "linguist": 30, "hci_expert": 40}
    script = Script(debate=lambda role, rnd, model: '{"score": %d}' % answers[role])
    provider = SleepyProvider(script, DELAY)
    client = make_client(None, provider=provider)
    scores = score_core(sample_dialogue(), client, config=CoreConfig(max_rounds=3))
    assert len([r for r in provider.requests if role_of(r)]) == 12
    assert provider.max_in_flight_by_kind["debate"] == 4
    # Three rounds one after another, each round's four calls side by side.
    assert scores["core.overall"].details["debate_wall_s"] < 3 * DELAY + 3 * DELAY
