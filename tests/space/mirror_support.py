"""Corpus rows for the mirror tests: people's dialogues with a battle vote, scores, moderation."""

from __future__ import annotations

from arena.dialogue import Dialogue, Feedback, Score, UserInfo, UserKind, Vote
from arena.store import Store

SALT = "a-long-random-secret-salt"


def person_dialogue(dialogue_id: str, user_id: str, crs_id: str = "alpha") -> Dialogue:
    d = Dialogue(dialogue_id=dialogue_id, crs_id=crs_id,
                 user=UserInfo(kind=UserKind.HUMAN, id=user_id, details={"email": "ada@example.org"}))
    d.add_user(f"hi, I am {user_id}, any thriller?")
    d.add_agent("Try Heat (1995).")
    d.feedback = Feedback(sentiment="satisfied")
    d.end("feedback")
    return d


def add_battle(store: Store, tag: str, user_id: str, *, flag_fast: bool = False) -> tuple[str, str, str]:
    """Two dialogues and a vote (flagged as too fast when `flag_fast`); returns (a, b, vote id)."""
    a, b = person_dialogue(f"{tag}-a", user_id), person_dialogue(f"{tag}-b", user_id, crs_id="beta")
    vote = Vote(vote_id=f"{tag}-vote", battle_id=f"{tag}-battle", dialogue_a=a.dialogue_id, dialogue_b=b.dialogue_id,
                crs_a="alpha", crs_b="beta", choice="A", comment=f"{user_id} liked A", user_id=user_id)
    store.save_battle_once(a, b, vote, user_key="u", ip_key="i", started_at=vote.timestamp if flag_fast else None,
                     burst_votes=100, burst_window_s=60, min_battle_s=10)
    store.save_scores(a.dialogue_id, {"rdl": Score(value=0.25, scorer="rdl", version="1", details={"n": 2})})
    return a.dialogue_id, b.dialogue_id, vote.vote_id


def corpus_view(store: Store) -> dict:
    """What must survive a restore, independent of row order and storage details."""

    dialogues = {d.dialogue_id: (d.crs_id, d.feedback.sentiment if d.feedback else None, len(d.utterances),
                                 tuple(sorted((m, s.value) for m, s in d.scores.items())))
                 for d in store.list_dialogues()}
    votes = {v.vote_id: (v.choice, v.dialogue_a, v.dialogue_b) for v in store.list_votes()}
    log = sorted((e["action"], e["target"], e["reason"]) for e in store.moderation_entries())
    return {"dialogues": dialogues, "votes": votes, "flags": set(store.flagged_votes()),
            "hidden": store.hidden_dialogue_ids(), "log": log}
