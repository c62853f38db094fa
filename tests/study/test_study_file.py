"""A study file: parsed by pydantic, refused with one line naming the field, stored as versions."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from arena.crowd.study import StudyError, parse_study
from study_support import BASE, INSTRUCTED, study_yaml

EXAMPLE = Path(__file__).resolve().parents[2] / "assets" / "studies" / "example.yaml"


def test_the_example_study_file_parses():
    study = parse_study(EXAMPLE.read_text(encoding="utf-8"))
    assert study.mode == "chat" and study.tasks_per_participant == 2
    assert study.quota("chatcrs_redial") == 40 and study.quota("crb_crs_redial") == 30
    assert study.attention_check.kind == "instructed"


def test_battle_cells_are_pairs_with_their_own_quotas():
    study = parse_study(study_yaml(mode="battle", quotas={"alpha|beta": 2}))
    assert study.cells() == ["alpha|beta", "alpha|gamma", "beta|gamma"]
    assert study.quota("alpha|beta") == 2 and study.quota("beta|gamma") == 5


@pytest.mark.parametrize("changes, field", [
    ({"mode": "survey"}, "mode"),
    ({"tasks_per_participant": "two"}, "tasks_per_participant"),
    ({"tasks_per_participant": 4}, "tasks_per_participant"),  # 3 systems, no repeats
    ({"quotas": {"delta": 3}}, "quotas"),
    ({"completion_code": None}, "completion_code"),
    ({"redirect_url": "javascript:alert(1)", "completion_code": None}, "redirect_url"),
    ({"id": "Has Spaces"}, "id"),
    ({"completion_code": "<b>code</b>"}, "completion_code"),
    ({"id": "open"}, "id"),
    ({"attention_check": {**INSTRUCTED, "answer": "Always"}}, "attention_check"),
    ({"attention_check": {**INSTRUCTED, "after_task": 3}}, "attention_check"),
    ({"closes": "2020-01-01T00:00:00Z", "opens": "2021-01-01T00:00:00Z"}, "closes"),
    ({"colour": "blue"}, "colour"),
    ({"mode": "battle", "aspects": "default"}, "aspects"),
    ({"redirect_url": "https://"}, "redirect_url"),
    ({"redirect_url": "https://example.org/x'onload=1"}, "redirect_url"),
    ({"redirect_url": "https://example.org/done", "redirect_code_param": "c c"}, "redirect_code_param"),
    ({"redirect_code_param": "cc"}, "redirect_code_param"),  # no redirect_url to add it to
])
def test_a_bad_file_is_refused_with_one_line_naming_the_field(changes, field):
    with pytest.raises(StudyError) as caught:
        parse_study(study_yaml(**changes))
    message = str(caught.value)
    assert message.startswith(f"study file: {field}") and "\n" not in message


def test_the_completion_url_carries_the_code_only_when_the_file_asks():
    plain = parse_study(study_yaml(redirect_url="https://app.prolific.com/submissions/complete?cc=FIXED"))
    assert plain.completion_url() == "https://app.prolific.com/submissions/complete?cc=FIXED"
    coded = parse_study(study_yaml(redirect_url="https://app.prolific.com/submissions/complete?x=1&cc=old",
                                   redirect_code_param="cc"))
    assert coded.completion_url() == "https://app.prolific.com/submissions/complete?x=1&cc=CODE-7731"
    assert parse_study(study_yaml()).completion_url() is None


def test_a_file_that_is_not_yaml_or_not_a_mapping_is_one_line():
    for text in ("id: [unclosed", "- a list\n- of things"):
        with pytest.raises(StudyError) as caught:
            parse_study(text)
        assert "\n" not in str(caught.value)


def test_each_save_is_a_new_version_and_old_versions_stay(services):
    first = study_yaml()
    second = study_yaml(title="Movie chat pilot, second wave")
    assert services.store.save_study(parse_study(first), first, "ada") == 1
    assert services.store.save_study(parse_study(second), second, "ada") == 2
    assert services.store.study_text("pilot") == (2, second)
    assert services.store.study_text("pilot", 1) == (1, first)
    assert services.store.study_ids() == [("pilot", 2)]
    assert yaml.safe_load(services.store.study_text("pilot", 1)[1])["title"] == BASE["title"]
