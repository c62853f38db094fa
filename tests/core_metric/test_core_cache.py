from evaluators.core import CoreConfig, score_core

from core_fakes import Script, make_client, sample_dialogue


def values(scores):
    return {name: score.value for name, score in scores.items()}


def test_rescoring_is_served_from_the_cache(tmp_path):
    def judge(factor, model, retry):
        if factor == "diversity" and not retry:
            return "unreadable"  # exercises the retry path too
        return f"<rating>{len(factor) % 5}</rating>"

    script = Script(judge=judge, debate=lambda role, rnd, model: (
        '{"evaluator": "x", "statement": "s", "score": %d}' % (50 if rnd > 1 else 40 + len(role))))
    first_client = make_client(script, cache_dir=tmp_path / "llm")
    first = score_core(sample_dialogue(), first_client, config=CoreConfig())
    made = len(first_client.provider.requests)
    assert made == 12 + 1 + 8  # one retry, two debate rounds
    assert first["core.overall"].details["provider_calls"] == made
    assert first["core.overall"].details["tokens"] > 0

    second_client = make_client(script, cache_dir=tmp_path / "llm")
    second = score_core(sample_dialogue(), second_client, config=CoreConfig())
    assert second_client.provider.requests == []  # zero provider calls
    assert values(second) == values(first)
    details = second["core.overall"].details
    assert details["cache_hits"] == details["calls"] == made
    assert details["provider_calls"] == 0 and details["tokens"] == 0


def test_changed_dialogue_is_not_served_from_the_cache(tmp_path):
    client = make_client(Script(), cache_dir=tmp_path / "llm")
    score_core(sample_dialogue(), client, config=CoreConfig())
    before = len(client.provider.requests)
    changed = sample_dialogue()
    changed.add_agent("One more suggestion: Hereditary.")
    score_core(changed, client, config=CoreConfig())
    assert len(client.provider.requests) == before * 2
