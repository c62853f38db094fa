"""Satisfied/frustrated labels protected like votes.

Votes were limited and flagged while the labels were not: 30 Chat
conversations rated "satisfied" in 19 s from one session moved a system's
satisfaction from 40/70 to 70/70 with nothing flagged. Each label now passes
`LabelGuard.admit` before it is stored:

* a hard limit of rated conversations per session and per address within
  `ARENA_LIMIT_WINDOW` (`ARENA_MAX_RATED_PER_USER`, `ARENA_MAX_RATED_PER_IP`),
  Chat and both Battle panes together; over it the label is refused;
* a flag (the label is stored, marked under `arena.counting.LABEL_FLAG`, and
  left out of satisfaction rates) when the session or the address rated more
  than `ARENA_BURST_LABELS` conversations within `ARENA_BURST_WINDOW`, or when
  the conversation has fewer than `ARENA_MIN_USER_TURNS` user turns.

Counting is in memory per process, as the vote limits are (`webapp.protection.vote_limits`);
the flags are durable, in the stored dialogue.
"""

from __future__ import annotations

from typing import Any, Optional

from limits import RateLimitItemPerSecond, storage, strategies

from arena.dialogue import Dialogue
from arena.counting import LABEL_FLAG
from webapp.protection.vote_limits import Admission, LimitReached, origin_keys_of

# The burst window counts every label up to this many per key (a moving window records a hit only
# while under its amount); far above any burst threshold, so the count is the true number.
BURST_COUNT_CAP = 10_000


class LabelGuard:
    def __init__(self, settings: Any):
        self.settings = settings
        window = max(1, int(round(settings.limit_window_s)))
        self._limiter = strategies.MovingWindowRateLimiter(storage.MemoryStorage())
        self._items = {
            "user": RateLimitItemPerSecond(max(0, settings.max_rated_per_user), window),
            "ip": RateLimitItemPerSecond(max(0, settings.max_rated_per_ip), window),
        }
        self._burst = RateLimitItemPerSecond(BURST_COUNT_CAP, max(1, int(round(settings.burst_window_s))))

    def admit(self, dialogue: Dialogue, user_key: str, ip_key: str) -> Admission:
        """Raise LimitReached when a limit is spent; else flag the dialogue (its metadata) when the label
        looks automated and return an admission whose `count` counts the label for both keys. The caller
        counts it once the label is stored, so a label the store refused (a full disk) and sent again
        counts once, toward the limits and the burst flag alike."""
        pairs = [(self._items["user"], user_key, ""), (self._items["ip"], ip_key, " from this network")]
        for item, key, where in pairs:
            if not self._limiter.test(item, "rated", key):
                minutes = max(1, round(self.settings.limit_window_s / 60))
                raise LimitReached(
                    f"You have reached the limit of {item.amount} rated conversations per {minutes} minutes"
                    f"{where}. Thank you for taking part; please come back later."
                )
        reasons = []
        for key, who in ((ip_key, "address"), (user_key, "session")):
            recent = BURST_COUNT_CAP - self._limiter.get_window_stats(self._burst, "burst", key).remaining
            if recent + 1 > self.settings.burst_labels:  # this label included
                reasons.append(f"burst: {recent + 1} rated conversations from one {who} "
                               f"within {self._burst.multiples} s")
        turns = len(dialogue.user_turns())
        if turns < self.settings.min_user_turns:
            reasons.append(f"short: {turns} user turns (fewer than {self.settings.min_user_turns})")
        if reasons:
            dialogue.metadata[LABEL_FLAG] = "; ".join(reasons)
        else:
            dialogue.metadata.pop(LABEL_FLAG, None)
        return Admission(lambda: self._count(pairs, (user_key, ip_key)))

    def _count(self, pairs: list, keys: tuple[str, str]) -> None:
        for item, key, _ in pairs:
            self._limiter.hit(item, "rated", key)
        for key in keys:
            self._limiter.hit(self._burst, "burst", key)


def admit_label(services: Any, dialogue: Dialogue, *, request: Any = None,
                keys: Optional[tuple[str, str]] = None) -> Admission:
    """`LabelGuard.admit` for a request (Chat) or known (user, IP) keys (a Battle session); call the
    admission's `count` once the label is stored."""
    user_key, ip_key = keys if keys is not None else origin_keys_of(services, request)
    return services.label_guard.admit(dialogue, user_key, ip_key)


def flagged_labels(store: Any) -> list[dict[str, Any]]:
    """Every stored satisfaction label the public rates leave out, and why (for researchers)."""
    from arena.rater_sequential_test import flagged_raters
    from arena.counting import visibility

    votes = store.list_votes()
    seen = visibility(store, votes)
    labelled = [d for d in seen.dialogues(store.list_dialogues(user_kind="human")) if d.feedback is not None]
    raters = flagged_raters([d for d in labelled if seen.counts_label(d)])
    rows = []
    for d in labelled:
        reasons = [d.metadata[LABEL_FLAG]] if d.metadata.get(LABEL_FLAG) else []
        if d.dialogue_id in seen.in_flagged_battle:
            reasons.append("its battle's vote is flagged")
        if d.user.id in raters:
            reasons.append("rater flagged by the sequential test")
        if reasons:
            rows.append({"dialogue_id": d.dialogue_id, "system": d.crs_id, "label": d.feedback.sentiment,
                         "rater": d.user.id, "given": d.feedback.timestamp.isoformat(),
                         "reason": "; ".join(reasons)})
    return rows
