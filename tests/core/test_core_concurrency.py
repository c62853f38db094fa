import time

from evaluators.core import CoreConfig, score_core

from core_fakes import Script, SleepyProvider, make_client, role_of, sample_dialogue

DELAY = 0.1


def timed(config, concurrency=16):
    provider = SleepyProvider(Script(), DELAY)
    client = make_client(None, provider=provider, concurrency=concurrency)
    started = time.monotonic()
    scores = score_core(sample_dialogue(), client, config=config)
    return time.monotonic() - started, scores, provider


def test_factor_calls_and_debate_rounds_run_concurrently():
    wall, scores, provider = timed(CoreConfig())
    details = scores["core.overall"].details
    assert details["calls"] == 16
    # 12 judges in parallel, then one debate round of 4 in parallel: about 2 x DELAY.
    assert wall < 6 * DELAY
    assert details["judge_wall_s"] < 3 * DELAY
    assert details["debate_wall_s"] < 3 * DELAY
    assert provider.max_in_flight == 12


def test_sequential_is_much_slower():
    wall_seq, _, provider = timed(CoreConfig(max_workers=1))
    assert provider.max_in_flight == 1
    assert wall_seq >= 16 * DELAY
    wall_par, _, _ = timed(CoreConfig())
    assert wall_par * 3 < wall_seq


def test_the_client_limit_bounds_concurrency():
    wall, _, provider = timed(CoreConfig(), concurrency=4)
    assert provider.max_in_flight == 4
    assert wall >= 4 * DELAY  # 12 judges in three waves of four, then the debate


def test_debate_round_calls_overlap():
    provider = SleepyProvider(Script(), DELAY)
    client = make_client(None, provider=provider)
    score_core(sample_dialogue(), client, config=CoreConfig())
    debate = [r for r in provider.requests if role_of(r)]
    assert len(debate) == 4
    assert provider.max_in_flight >= 4
