"""The nine cases UserSimCRS's own tests check for SR, SRRR and RDL, each with the value this
project gives and, where it differs, UserSimCRS's value and the reason (docs/protocols.md has
the table). Intents as UserSimCRS writes them: REC-S/REC-E recommend, ACC accepts, REJ rejects.
Each case also runs UserSimCRS's reading (`srrr_usersimcrs`, `sr_usersimcrs`), which must give
UserSimCRS's own value on every one of them."""

import pytest

from evaluators import metrics as M
from evaluators import metrics_usersimcrs as U
from tests.acts.acts_helpers import make_dialogue


def _dialogue(*turns):
    return make_dialogue([(role, f"utterance {i}", intents) for i, (role, intents) in enumerate(turns)])


REC, REC_E, ACC, REJ = ("A", ["REC-S"]), ("A", ["REC-E"]), ("U", ["ACC"]), ("U", ["REJ"])

# (case, dialogue, UserSimCRS's SR, this project's SR)
SUCCESS_CASES = [
    ("one accepted round", (REC, ACC), 1.0, 1.0),
    # UserSimCRS: the user's last word in the round decides. Here the acceptance stands: RDL counts
    # it, and the user took the item before rejecting something (or second-guessing) after it.
    ("accepted, then rejected", (REC, ACC, REJ), 0.0, 1.0),
    ("rejected, then accepted", (REC, REJ, ACC), 1.0, 1.0),
    ("two rounds, the first accepted", (REC, REJ, ACC, REC, ACC, REJ), 1.0, 1.0),
    ("one rejected round", (REC, REJ), 0.0, 0.0),
]


@pytest.mark.parametrize("case, turns, theirs, ours", SUCCESS_CASES, ids=[c[0] for c in SUCCESS_CASES])
def test_success_rate_cases(case, turns, theirs, ours):
    d = _dialogue(*turns)
    assert M.success(d) == ours
    # Every acceptance that RDL counts inside a round makes the dialogue successful.
    assert (M.success(d) == 1.0) == any(r.decision == "accept" for r in M.recommendation_rounds(d))
    if ours != theirs:
        assert case == "accepted, then rejected"  # the one documented difference
    assert U.success_usersimcrs(d) == theirs


def test_srrr_without_recommendations_is_zero_in_both_readings():
    d = _dialogue(("U", []), ("A", []))
    # UserSimCRS counts the whole dialogue as one round (not accepted): 0 / 1.
    assert U.srrr_usersimcrs(d) == 0.0 and len(U.usersimcrs_rounds(d)) == 1


def test_srrr_two_rounds_one_successful_in_both_readings():
    assert U.srrr_usersimcrs(_dialogue(REC, ACC, REC_E, REJ)) == pytest.approx(1 / 2)


def test_usersimcrs_reading_refuses_a_dialogue_without_acts():
    d = make_dialogue([("A", "rec", None)])
    with pytest.raises(M.MissingActs):
        U.srrr_usersimcrs(d)
    with pytest.raises(M.MissingActs):
        U.success_usersimcrs(d)


def test_the_utterances_before_the_first_recommendation_are_a_round_for_usersimcrs():
    # A request, a recommendation, an acceptance: one round, accepted, for the arena; for UserSimCRS the
    # request is a round of its own (not accepted), so SRRR is 1/2. This is where IARD's figures part.
    d = _dialogue(("U", ["IQU"]), REC, ACC)
    assert M.srrr(d) == 1.0
    assert U.srrr_usersimcrs(d) == pytest.approx(1 / 2)
    assert [r.opening for r in U.usersimcrs_rounds(d)] == [True, False]
    assert M.success(d) == U.success_usersimcrs(d) == 1.0


def test_an_acceptance_before_any_recommendation_is_a_success_only_for_usersimcrs():
    d = _dialogue(("U", ["ACC"]), ("A", []))
    assert M.success(d) == 0.0 and M.srrr(d) == 0.0
    assert U.success_usersimcrs(d) == 1.0 and U.srrr_usersimcrs(d) == 1.0


def test_srrr_without_recommendations_is_zero():
    assert M.srrr(_dialogue(("U", []), ("A", []))) == 0.0


def test_srrr_two_rounds_one_successful():
    assert M.srrr(_dialogue(REC, ACC, REC_E, REJ)) == pytest.approx(1 / 2)


def test_srrr_refuses_a_dialogue_without_acts():
    # UserSimCRS raises RuntimeError("Dialogue must be annotated."); here MissingActs (a ValueError)
    # says how many utterances lack acts, and a scorer stores it as the score's error.
    d = make_dialogue([("A", "rec", None)])
    with pytest.raises(M.MissingActs, match="1 of 1 utterances have no dialogue acts"):
        M.srrr(d)


def test_rdl_counts_user_acceptances_over_utterances():
    d = _dialogue(REC, ACC, ("A", []), ACC)
    assert M.rdl(d) == pytest.approx(2 / 4)
    assert M.success(d) == 1.0 and M.srrr(d) == 1.0
    assert U.success_usersimcrs(d) == 1.0 and U.srrr_usersimcrs(d) == 1.0
