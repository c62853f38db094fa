"""What every simulated user shares: identity on the dialogue, LLM access, transcript.

One simulator object plays one user in one dialogue. `next_turn` is the
runner's interface (`arena.conversation.runner.Simulator`); `finalize` is called once the
dialogue is over to record the final metrics and, when the dialogue ran out
of turns before the user could say so, the user's verdict.
"""

from __future__ import annotations

import json

import random
import re
from abc import ABC, abstractmethod
from typing import Any, ClassVar, Optional, Sequence, Union

from arena.dialogue import Dialogue, Feedback, RecommendedItem, Role, UserInfo, UserKind, Utterance
from arena.llm import LLMClient
from arena.conversation.simulator_interface import SimulatorAction, StopDialogue, UserTurn
from simulators.grounding import ProfileFacts, preference_sentences, ungrounded
from simulators.ignored_turns import ignored_turns

MAX_UTTERANCE_CHARS = 600
# A label the model put before the message itself (the paraphrase prompt calls it the draft).
_SPEAKER_PREFIX = re.compile(r"^\s*(user|seeker|me|you|human|customer|draft|message|your message)\s*:\s*",
                             re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][)\"']))\s+")
_OTHER_SPEAKER = re.compile(r"\n\s*(recommender|system|assistant|agent|bot)\s*:", re.IGNORECASE)
# What a person never says: a role label or a piece of the prompt ("You: (The recommender
# suggested ...)", "Chat History:"), or the recommender's part ("I recommend ...").
_PROMPT_LEAK = re.compile(
    r"(\b(user|seeker|you|me|human|customer|recommender|system|assistant|agent|bot|chat history|history|"
    r"conversation|transcript|persona|profile|goal|instructions?|task|output|response)\s*:|"
    r"\(\s*the (recommender|system|assistant)\b|\bas an ai\b|\blanguage model\b|\byour (goal|persona|task)\b|"
    r"\b(draft|what to do( now)?)\s*:|\bwrite only\b|\bthe chat so far\b|\brole-?play|\byour general tastes\b|"
    r"\byou are the person\b|\bwhat you are after\b|\banswer in json\b|"
    r"\[/?(inst|system|user)\]|<\|)",
    re.IGNORECASE,
)
_RECOMMENDER_TALK = re.compile(
    r"\b(i (would )?(recommend|suggest) (you|that you)|you (might|may|would|will) (like|enjoy|love)|"
    r"here (are|is) (some|a few|my)|what kind of (movies?|films?) do you|how can i help|"
    r"do you have any (favou?rite|preference)|tell me (a|your) (favou?rite )?(genre|actor|movie))", re.IGNORECASE)
COPIED_WORDS = 6  # this many words in a row from a system reply is copying, not answering


def clean_generation(text: str, limit: int = MAX_UTTERANCE_CHARS, max_sentences: int = 4) -> str:
    """Keep only the user's own message from an LLM generation (first few sentences)."""
    text = (text or "").strip()
    text = _OTHER_SPEAKER.split(text)[0].strip()
    for _ in range(2):  # quotes around the message, before or after a speaker label
        if text[:1] in ("'", '"') and text.count(text[0]) % 2 == 1:
            text = text[1:].strip()
        if text[-1:] in ("'", '"') and text.count(text[-1]) % 2 == 1:
            text = text[:-1].strip()
        text = _SPEAKER_PREFIX.sub("", text).strip()
        if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
            text = text[1:-1].strip()
    text = " ".join(text.split())
    parts: list[str] = []
    for part in _SENTENCE_END.split(text):
        part = part.strip()
        if len(part) >= 2 and part[0] == "(" and part[-1] == ")":
            part = part[1:-1].strip()  # small models wrap whole sentences in brackets
        if part and part.lower() not in {p.lower() for p in parts}:  # and repeat themselves
            parts.append(part)
    text = " ".join(parts[:max_sentences])
    if len(text) > limit:
        cut = text[:limit]
        end = max(cut.rfind(". "), cut.rfind("? "), cut.rfind("! "))
        text = cut[: end + 1] if end > limit // 3 else cut
    return text.strip()


def unusable_user_text(text: str, dialogue: Optional[Dialogue] = None,
                       must_mention: Sequence[Union[str, Sequence[str]]] = ()) -> Optional[str]:
    """Why a generated user message cannot be said (None: it can): empty, a role label or a piece
    of the prompt, the recommender's part, a copy of a system sentence, a repeat of the user's own
    earlier message, or missing a value the turn must convey."""
    lowered = text.lower()
    if not text:
        return "empty"
    if _PROMPT_LEAK.search(text):
        return "holds a role label or a piece of the prompt"
    if _RECOMMENDER_TALK.search(text):
        return "speaks as the recommender"
    if dialogue is not None:
        if lowered in {" ".join(u.text.lower().split()) for u in dialogue.user_turns()}:
            return "repeats an earlier message"
        if copies_system(text, dialogue):
            return "copies a system sentence"
    if not all(_mentions(lowered, v) for v in must_mention if v):
        return "misses what the turn must say"
    return None


def copies_system(text: str, dialogue: Dialogue) -> bool:
    """Whether `text` repeats `COPIED_WORDS` words in a row from a system reply (titles aside,
    which the user may well repeat: they are cut from the reply first)."""
    words = re.findall(r"[a-z0-9']+", text.lower())
    grams = {tuple(words[i:i + COPIED_WORDS]) for i in range(len(words) - COPIED_WORDS + 1)}
    if not grams:
        return False
    for utterance in dialogue.agent_turns():
        reply = utterance.text.lower()
        for item in utterance.items:
            reply = reply.replace(item.title.lower(), " | ")
        reply_words = re.findall(r"[a-z0-9'|]+", reply)
        if grams & {tuple(reply_words[i:i + COPIED_WORDS]) for i in range(len(reply_words) - COPIED_WORDS + 1)}:
            return True
    return False


def _mentions(lowered: str, value: Union[str, Sequence[str]]) -> bool:
    options = [value] if isinstance(value, str) else list(value)
    return any(option.lower() in lowered for option in options)


def transcript(dialogue: Dialogue, max_items: int = 5, last: int = 16) -> str:
    """The dialogue as plain text, the items each reply showed in brackets."""
    lines = []
    for utt in dialogue.utterances[-last:]:
        if utt.role == Role.USER:
            lines.append(f"You: {utt.text}")
        else:
            line = f"Recommender: {utt.text}"
            if utt.items:
                shown = "; ".join(item.title for item in utt.items[:max_items])
                line += f" [shown: {shown}]"
            lines.append(line)
    return "\n".join(lines) if lines else "(nothing yet)"


def last_reply(dialogue: Dialogue) -> Optional[Utterance]:
    for utt in reversed(dialogue.utterances):
        if utt.role == Role.AGENT:
            return utt
        break
    return None


def shown_items(dialogue: Dialogue, k: Optional[int] = None) -> list[RecommendedItem]:
    reply = last_reply(dialogue)
    if reply is None:
        return []
    return list(reply.items[:k] if k else reply.items)


class SimulatedUser(ABC):
    kind: ClassVar[str] = "simulator"
    label: ClassVar[str] = "simulated user"

    def __init__(
        self,
        *,
        seed: int,
        llm: Optional[LLMClient] = None,
        temperature: float = 0.0,
        max_tokens: int = 160,
        rate_aspects: bool = False,
        rating_form: Optional[Any] = None,
    ):
        self.seed = int(seed)
        self.rng = random.Random(self.seed)
        self.llm = llm
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.fallbacks = 0  # generations that came back empty and were replaced by a template
        self.rejected: dict[str, int] = {}  # why generations were replaced, reason -> count
        # Fill the aspect rating form at the end (needs an LLM); rating_form: an AspectForm or its path.
        self.rate_aspects = rate_aspects
        self.rating_form = rating_form

    # -- identity -----------------------------------------------------------
    @property
    def model_label(self) -> str:
        return self.llm.describe() if self.llm is not None else "template"

    @abstractmethod
    def profile(self) -> dict[str, Any]:
        """The goal or profile that drives this user (JSON-serialisable)."""

    def profile_facts(self) -> Optional[ProfileFacts]:
        """The genres, titles and years this user may name when it says what it wants (None: unchecked)."""
        return None

    def ungrounded(self, text: str, dialogue: Optional[Dialogue] = None) -> list[str]:
        """What `text` states as a preference that is not in this user's profile."""
        catalog = getattr(self, "catalog", None)
        facts = self.profile_facts() if catalog is not None else None
        if facts is None:
            return []
        return ungrounded(text, facts, catalog, dialogue)

    def user_info(self) -> UserInfo:
        return UserInfo(
            kind=UserKind.SIMULATOR,
            id=f"sim-{self.kind}-{self.seed}",
            simulator=self.kind,
            details={"profile": self.profile(), "seed": self.seed, "model": self.model_label},
        )

    def attach(self, dialogue: Dialogue) -> None:
        dialogue.user = self.user_info()
        dialogue.metadata.setdefault("source", "simulation")

    # -- the runner's interface ----------------------------------------------
    def next_turn(self, dialogue: Dialogue) -> SimulatorAction:
        if dialogue.user.kind != UserKind.SIMULATOR or dialogue.user.simulator != self.kind:
            self.attach(dialogue)
        self.observe(dialogue)
        action = self.act(dialogue)
        if isinstance(action, UserTurn):
            return UserTurn(action.text.strip())
        return action

    def observe(self, dialogue: Dialogue) -> None:
        """Record per-turn measurements (called before every decision)."""

    @abstractmethod
    def act(self, dialogue: Dialogue) -> SimulatorAction:
        """The next utterance or the decision to stop."""

    def verdict(self, dialogue: Dialogue) -> Optional[StopDialogue]:
        """How the user feels if the dialogue ended without its own decision."""
        return None

    def finalize(self, dialogue: Dialogue) -> Dialogue:
        if dialogue.user.simulator != self.kind:
            self.attach(dialogue)
        self.observe(dialogue)
        dialogue.metadata["simulator_fallbacks"] = self.fallbacks
        dialogue.metadata["simulator_rejected"] = dict(self.rejected)
        if dialogue.end_reason == "simulator_error":
            # The simulator failed: a failed dialogue with its error, never a user's verdict.
            dialogue.feedback = None
            dialogue.metadata["simulator_failed"] = True
            return dialogue
        if dialogue.feedback is None:
            verdict = self.verdict(dialogue)
            if verdict is not None and verdict.sentiment in ("satisfied", "frustrated"):
                dialogue.feedback = Feedback(sentiment=verdict.sentiment, comment=verdict.comment)
        ignored = ignored_turns(dialogue)
        dialogue.metadata["ignored_user_turns"] = ignored
        if ignored and dialogue.feedback is not None and dialogue.feedback.sentiment == "satisfied":
            # Nobody leaves satisfied after being ignored: the verdict follows the conversation.
            dialogue.feedback = Feedback(sentiment="frustrated",
                                         comment=f"{dialogue.feedback.comment} But: {ignored[0]}.".strip())
        if self.rate_aspects and self.llm is not None and dialogue.utterances:
            self.rate(dialogue)
        return dialogue

    def rating_persona(self) -> str:
        """Who the simulator played, for the rating prompt."""
        return json.dumps(self.profile(), ensure_ascii=False, default=str)[:1500]

    def rate(self, dialogue: Dialogue) -> None:
        """Fill the aspect rating form for the dialogue (aspects it cannot answer stay unrated)."""
        from arena.crowd.aspects import AspectForm, load_form
        from arena.dialogue import replace_rating
        from simulators.aspect_rating import rate_dialogue

        form = self.rating_form if isinstance(self.rating_form, AspectForm) else load_form(self.rating_form)
        rating = rate_dialogue(
            dialogue, lambda system, user: self.ask_llm(system, user, max_tokens=120), form=form,
            persona=self.rating_persona(), transcript=transcript(dialogue, last=40),
            rater_id=dialogue.user.id, model=self.model_label,
        )
        replace_rating(dialogue.ratings, rating)

    # -- LLM access -------------------------------------------------------------
    def ask_llm(self, system: str, user: str, *, max_tokens: Optional[int] = None, json_mode: bool = False) -> str:
        """One completion; LLM errors propagate so the runner records them on the dialogue."""
        if self.llm is None:
            raise RuntimeError(f"the {self.kind} simulator needs an LLM client")
        response = self.llm.complete(
            [{"role": "system", "content": system}, {"role": "user", "content": user}],
            temperature=self.temperature,
            max_tokens=max_tokens or self.max_tokens,
            seed=self.seed,
            json_mode=json_mode,
        )
        return response.text

    def say(
        self,
        generated: str,
        fallback: str,
        dialogue: Optional[Dialogue] = None,
        must_mention: Sequence[str] = (),
    ) -> UserTurn:
        """The generated message, or `fallback` when the generation is unusable.

        Unusable: empty, a role label or prompt piece, a copy of a system sentence, a repeat
        of one of the user's earlier messages, missing a value the turn must convey (a wish
        being revealed, the title being accepted; an entry of `must_mention` may be a tuple
        of alternatives), or a preference outside the user's profile (`simulators.grounding`).
        """
        text = clean_generation(generated)
        reason = unusable_user_text(text, dialogue, must_mention)
        if reason is None and self.ungrounded(text, dialogue):
            reason = "states a preference outside the profile"
        if reason is not None:
            self.fallbacks += 1
            self.rejected[reason] = self.rejected.get(reason, 0) + 1
            text = self.grounded(fallback, dialogue)
        return UserTurn(text)

    def grounded(self, text: str, dialogue: Optional[Dialogue] = None,
                 default: str = "What else could you suggest?") -> str:
        """`text` without its preference sentences that name something outside the profile
        (a template may carry a reason an LLM wrote)."""
        bad = [s for s in preference_sentences(text) if self.ungrounded(s, dialogue)]
        for sentence in bad:
            text = text.replace(sentence, " ")
        return " ".join(text.split()) or default
