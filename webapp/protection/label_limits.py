"""Satisfied/frustrated labels protected like votes.

Votes were limited and flagged while the labels were not: 30 Chat
conversations rated "satisfied" in 19 s from one session moved a system's
satisfaction from 40/70 to 70/70 with nothing flagged. Each label now passes
`LabelGuard.admit` before it is stored:

* a hard limit of rated conversations per session and per address within
  `ARENA_LIMIT_WINDOW` (`ARENA_MAX_RATED_PER_USER`, `ARENA_MAX_RATED_PER_IP`),
  Chat and both Battle panes together; over it the label is refused;
* a flag (the label is stored, marked under `arena.crowd.counting.LABEL_FLAG`, and
  left out of satisfaction rates) when the session or the address rated more
  than `ARENA_BURST_LABELS` conversations within `ARENA_BURST_WINDOW`, or when
  the conversation has fewer than `ARENA_MIN_USER_TURNS` user turns.

Counting is in the store, as the vote limits' is (`webapp.protection.vote_limits`,
`arena.store.limits`): one transaction checks both caps and records the label, so
simultaneous labels, on any number of app processes, get exactly the configured
numbers through. The flags are durable, in the stored dialogue.
"""

from __future__ import annotations

from typing import Any, Optional

from arena.dialogue import Dialogue
from arena.crowd.counting import LABEL_FLAG
from arena.store import Cap, CapReached, Store
from webapp.protection.vote_limits import Admission, LimitReached, origin_keys_of


class LabelGuard:
    def __init__(self, settings: Any, store: Store):
        self.settings = settings
        self.store = store

    def admit(self, dialogue: Dialogue, user_key: str, ip_key: str) -> Admission:
        """Raise LimitReached when a limit is spent; else count the label for both keys, flag the dialogue
        (its metadata) when the label looks automated, and return the admission. The caller keeps it once
        the label is stored and gives it back when the store refused it (a full disk), so a label sent
        again counts once, toward the limits and the burst flag alike."""
        s = self.settings
        caps = [Cap("rated:user", user_key, max(0, s.max_rated_per_user), s.limit_window_s),
                Cap("rated:ip", ip_key, max(0, s.max_rated_per_ip), s.limit_window_s),
                # the same labels counted over the burst window, never refused: they flag
                Cap("rated:ip", ip_key, None, s.burst_window_s),
                Cap("rated:user", user_key, None, s.burst_window_s)]
        try:
            admission = Admission(self.store, self.store.admit_capped(caps))
        except CapReached as exc:
            minutes = max(1, round(s.limit_window_s / 60))
            where = " from this network" if exc.cap.scope.endswith(":ip") else ""
            raise LimitReached(
                f"You have reached the limit of {exc.cap.limit} rated conversations per {minutes} minutes"
                f"{where}. Thank you for taking part; please come back later."
            ) from None
        reasons = []
        for recent, who in zip(admission.counts[2:], ("address", "session")):
            if recent > s.burst_labels:  # this label included
                reasons.append(f"burst: {recent} rated conversations from one {who} "
                               f"within {max(1, int(round(s.burst_window_s)))} s")
        turns = len(dialogue.user_turns())
        if turns < s.min_user_turns:
            reasons.append(f"short: {turns} user turns (fewer than {s.min_user_turns})")
        if reasons:
            dialogue.metadata[LABEL_FLAG] = "; ".join(reasons)
        else:
            dialogue.metadata.pop(LABEL_FLAG, None)
        return admission


def admit_label(services: Any, dialogue: Dialogue, *, request: Any = None,
                keys: Optional[tuple[str, str]] = None) -> Admission:
    """`LabelGuard.admit` for a request (Chat) or known (user, IP) keys (a Battle session); keep the
    admission (`count`) once the label is stored, give it back (`take_back`) when it was not."""
    user_key, ip_key = keys if keys is not None else origin_keys_of(services, request)
    return services.label_guard.admit(dialogue, user_key, ip_key)


def flagged_labels(store: Any) -> list[dict[str, Any]]:
    """Every stored satisfaction label the public rates leave out, and why (for researchers)."""
    from arena.crowd.rater_check import flagged_raters
    from arena.crowd.counting import visibility

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
