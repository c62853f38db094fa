import pytest

from evaluators.core.parsing import parse_debate_answer, parse_rating, reason_text


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Good flow.\n<rating>3</rating>", 3.0),
        ("<rating> 4 </rating>", 4.0),
        ("<Rating>2</Rating>", 2.0),
        ("<rating>0</rating>", 0.0),
        ("<rating>3.5</rating>", 3.5),
        ("<rating>3.</rating>", 3.0),
        ("<rating>{2}</rating>", 2.0),
        ("<rating>**1**</rating>", 1.0),
        ("<rating>3/4</rating>", 3.0),
        ("<rating>3 out of 4</rating>", 3.0),
        ("<rating>three</rating>", 3.0),
        ("&lt;rating&gt;2&lt;/rating&gt;", 2.0),
        # The format reminder echoed first, the real rating last.
        ("Format: <rating>N</rating>. Reasoning... <rating>1</rating>", 1.0),
        # Several tags: the last one counts.
        ("First I thought <rating>4</rating> but on reflection <rating>2</rating>", 2.0),
        # Unclosed tag (answer cut off).
        ("Reasoning...\n<rating>2", 2.0),
        ('{"reason": "ok", "rating": 3}', 3.0),
        ('{"score": "4"}', 4.0),
        ("Overall, my rating: 2", 2.0),
        ("**Final score:** 1/4", 1.0),
        ("Lots of reasoning\n\n3", 3.0),
        ("Lots of reasoning\n**4**", 4.0),
    ],
)
def test_rating_parsed(text, expected):
    assert parse_rating(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "I cannot evaluate this dialogue.",
        "<rating>N</rating>",
        "<rating>5</rating>",
        "<rating>-1</rating>",
        "<rating>4/5</rating>",
        "<rating>7 out of 10</rating>",
        "Rating: 8",
        "Score: 3/5",
        "The system recommended 12 movies over 5 turns.",
    ],
)
def test_unreadable_or_off_scale_rating_is_none(text):
    assert parse_rating(text) is None


def test_reason_text_drops_the_rating_tag():
    assert reason_text("Two turns miss the intent.\n<rating>2</rating>") == "Two turns miss the intent."


@pytest.mark.parametrize(
    "text, score, statement",
    [
        ('{"evaluator": "Linguist", "statement": "Fluent.", "score": 70}', 70.0, "Fluent."),
        ('```json\n{"evaluator": "Linguist", "statement": "Fluent.", "score": 70}\n```', 70.0, "Fluent."),
        ('Here is my view:\n{"evaluator": "HCI Expert", "statement": "Weak.", "score": "35"}\nThanks!',
         35.0, "Weak."),
        ("{'evaluator': 'Common User', 'statement': \"It's fine\", 'score': 55}", 55.0, "It's fine"),
        ("{“evaluator”: “Domain Expert”, “statement”: “Varied list.”, “score”: “62”}", 62.0,
         "Varied list."),
        ('{"evaluator": "Linguist", "statement": "Line one\nline two", "score": 40}', 40.0,
         "Line one\nline two"),
        ('{"evaluator": "Linguist", "statement": "ok", "score": 40,}', 40.0, "ok"),
        ('{"evaluator": "Linguist", "statement": "uses {braces} and } inside", "score": 45}', 45.0,
         "uses {braces} and } inside"),
        ('{"Evaluator": "Linguist", "Statement": "ok", "Overall_Score": "80/100"}', 80.0, "ok"),
        ('{"evaluator": "Linguist", "statement": "ok", "score": 0}', 0.0, "ok"),
        # Broken JSON (unescaped quote) still yields the score.
        ('{"evaluator": "Linguist", "statement": "the "best" system", "score": 90}', 90.0, None),
    ],
)
def test_debate_answer_parsed(text, score, statement):
    answer = parse_debate_answer(text)
    assert answer is not None
    assert answer.score == score
    if statement is not None:
        assert answer.statement == statement


@pytest.mark.parametrize(
    "text",
    [
        "",
        "I would give it a fair mark.",
        '{"evaluator": "Linguist", "statement": "no score here"}',
        '{"evaluator": "Linguist", "statement": "too high", "score": 150}',
        '{"evaluator": "Linguist", "statement": "negative", "score": -5}',
        '{"evaluator": "Linguist", "statement": "other scale", "score": "7/10"}',
        '{"evaluator": "Linguist", "statement": "bool", "score": true}',
    ],
)
def test_unreadable_debate_answer_is_none(text):
    assert parse_debate_answer(text) is None
