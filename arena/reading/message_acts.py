"""What a user message does, read from its meaning rather than its words: a learnt back-up of the
act rules (`arena.reading.acts`).

The rules in `acts.py` know the wordings they were written from; a message worded otherwise ("is this
the film line?", "who does that have in it?") falls through them to "a request", and gets a list. This
reader places the message's all-MiniLM-L6-v2 sentence vector (the encoder the recommender already runs)
and scores each message act with one linear softmax: `request`, `chit_chat`, `about_system` (a question
about the system itself), `choice` (takes a shown or named item), `item_question` (asks about an item or
the list already shown), `closing`, `reject`, `seen`. `crs.dialogue_policy` asks it only where the rules
found no act but a request, and takes its act only when it is sure (`MIN_PROBABILITY`) and the state
allows it (a choice or a question needs something shown or named).

The weights are `assets/acts/message_acts_v1.json`, trained by `scripts/train_message_acts.py` on real
people's words (IARD and ReDial seekers) and a small written set; origin, split and held-out figures are
in the file itself. They are read on first use; a missing file or encoder leaves the rules alone.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Callable, Optional, Sequence

import numpy as np

log = logging.getLogger(__name__)

VERSION = 1
ACTS = ("request", "chit_chat", "about_system", "choice", "item_question", "closing", "reject", "seen")
ARTIFACT = Path(__file__).resolve().parents[2] / "assets" / "acts" / f"message_acts_v{VERSION}.json"
# Below this probability of its best act the reader says nothing and the rules' reading stands.
MIN_PROBABILITY = 0.55

CACHE_SIZE = 2048
Encoder = Callable[[Sequence[str]], np.ndarray]


class MessageActReader:
    """`probabilities(text)`: each message act's probability; `act(text)`: the sure act or None."""

    label = f"message-acts/{VERSION}"

    def __init__(self, encode: Optional[Encoder] = None, path: Path = ARTIFACT):
        self._encode = encode
        self.path = path
        self._weights: Optional[np.ndarray] = None
        self._bias: Optional[np.ndarray] = None
        self._min = MIN_PROBABILITY
        self._broken = False
        self._lock = threading.Lock()
        # A live dialogue repeats its earlier messages on every turn: each is encoded once.
        self._seen: OrderedDict[str, dict[str, float]] = OrderedDict()

    def _load(self) -> bool:
        if self._weights is not None:
            return True
        if self._broken:
            return False
        with self._lock:
            if self._weights is None and not self._broken:
                try:
                    spec = json.loads(self.path.read_text(encoding="utf-8"))
                    if tuple(spec["acts"]) != ACTS:
                        raise ValueError(f"acts {spec['acts']} are not {list(ACTS)}")
                    self._weights = np.asarray(spec["weights"], dtype=np.float32)
                    self._bias = np.asarray(spec["bias"], dtype=np.float32)
                    self._min = float(spec.get("min_probability", MIN_PROBABILITY))
                except (OSError, ValueError, KeyError) as exc:
                    log.warning("message-act reader unavailable (%s): the act rules read alone", exc)
                    self._broken = True
        return self._weights is not None

    def _vector(self, text: str) -> np.ndarray:
        if self._encode is None:
            from arena.catalogs.retrieval import encode

            self._encode = encode
        return np.asarray(self._encode([text]), dtype=np.float32)[0]

    def warm(self) -> None:
        """Read the weights and load the encoder now, so that no turn waits for them."""
        self.probabilities("hello")

    def probabilities(self, text: str) -> Optional[dict[str, float]]:
        """Each act's probability for one message, or None when the reader cannot run."""
        if not text.strip() or not self._load():
            return None
        if text in self._seen:
            self._seen.move_to_end(text)
            return self._seen[text]
        try:
            vector = self._vector(text)
        except Exception as exc:  # the encoder failing must not break the turn: the rules stand
            log.warning("message-act reader could not encode (%s): the act rules read alone", exc)
            self._broken = True
            return None
        assert self._weights is not None and self._bias is not None
        scores = self._weights @ vector + self._bias
        scores = np.exp(scores - scores.max())
        probs = dict(zip(ACTS, (scores / scores.sum()).tolist()))
        self._seen[text] = probs
        if len(self._seen) > CACHE_SIZE:
            self._seen.popitem(last=False)
        return probs

    def act(self, text: str) -> Optional[str]:
        """The act the reader is sure of, or None (unsure, or it cannot run)."""
        probs = self.probabilities(text)
        if not probs:
            return None
        best = max(probs, key=probs.__getitem__)
        return best if probs[best] >= self._min else None
