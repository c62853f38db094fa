"""Trimming long prompts to the local model's window (token counting is stubbed by a formula)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.llm import LLMError, LLMRequest
from arena.llm.local import fit_context


def count(messages):
    """Roughly what a chat template costs: 4 tokens per message plus 1 per 4 characters."""
    return 3 + sum(4 + len(m["content"]) // 4 for m in messages)


def request(messages, max_tokens=100):
    return LLMRequest(messages=tuple(messages), model="m", max_tokens=max_tokens)


def test_short_prompt_is_left_alone():
    req = request([("system", "be brief"), ("user", "hello")])
    assert fit_context(req, 1024, count) == req


def test_reply_may_take_at_most_half_the_window():
    fitted = fit_context(request([("user", "hi")], max_tokens=5000), 1024, count)
    assert fitted.max_tokens == 512


def test_oldest_turns_go_first_and_system_stays():
    turns = [("user" if i % 2 == 0 else "assistant", f"turn {i} " + "x" * 400) for i in range(30)]
    req = request([("system", "You are a movie recommender.")] + turns, max_tokens=200)
    fitted = fit_context(req, 1024, count)
    kept = list(fitted.messages)
    assert kept[0] == ("system", "You are a movie recommender.")
    assert kept[1:] == turns[-(len(kept) - 1):]  # a contiguous run of the newest turns
    assert 1 < len(kept) < len(req.messages)
    assert count([{"role": r, "content": c} for r, c in kept]) <= 1024 - 200 - 8


def test_single_huge_message_keeps_its_start_and_end():
    text = "INSTRUCTIONS: rate the dialogue. " + "filler " * 3000 + "Answer with a number."
    fitted = fit_context(request([("user", text)], max_tokens=100), 1024, count)
    ((role, content),) = fitted.messages
    assert role == "user" and "[...]" in content
    assert content.startswith("INSTRUCTIONS") and content.endswith("Answer with a number.")
    assert count([{"role": role, "content": content}]) <= 1024 - 100 - 8


def test_too_long_system_prompt_is_shortened_too():
    fitted = fit_context(request([("system", "s" * 20000), ("user", "q?")], max_tokens=64), 512, count)
    assert fitted.messages[-1] == ("user", "q?")
    assert count([{"role": r, "content": c} for r, c in fitted.messages]) <= 512 - 64 - 8


def test_impossible_window_is_a_clear_error():
    many = [("user", "a")] * 3

    def expensive(messages):
        return 1000 * len(messages) + 10_000

    with pytest.raises(LLMError, match="does not fit"):
        fit_context(request(many, max_tokens=10), 256, expensive)


messages_strategy = st.lists(
    st.tuples(st.sampled_from(["user", "assistant"]), st.text(max_size=3000)), min_size=1, max_size=25
)


@settings(max_examples=60, deadline=None)
@given(
    system=st.one_of(st.none(), st.text(max_size=2000)),
    turns=messages_strategy,
    n_ctx=st.integers(min_value=256, max_value=4096),
    max_tokens=st.integers(min_value=1, max_value=2048),
)
def test_fitted_prompt_always_fits(system, turns, n_ctx, max_tokens):
    messages = ([("system", system)] if system is not None else []) + turns
    fitted = fit_context(request(messages, max_tokens=max_tokens), n_ctx, count)
    used = count([{"role": r, "content": c} for r, c in fitted.messages])
    assert used + fitted.max_tokens <= n_ctx
    assert 1 <= fitted.max_tokens <= max_tokens
    assert fitted.messages[-1][0] == turns[-1][0]  # the newest turn is never dropped
    if system is not None:
        assert fitted.messages[0][0] == "system"
