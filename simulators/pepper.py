"""Target-free user with reflected preferences (PEPPER).

The user starts from general preferences derived from a real MovieLens
user's ratings (see `simulators.preferences`) and has no target in mind.
Every turn it looks at the top items the system shows and forms an opinion
on each: a movie it has seen is judged by its own past rating, an unseen
one by its general preferences (one LLM call for all unseen items, with a
genre-based judgement when the LLM's answer cannot be read). These reflected
likes and dislikes feed its next message. Preference Coverage of the
held-out liked movies (and its per-turn increase) is recorded per turn.
"""

from __future__ import annotations

from typing import Any, Optional

from arena.dialogue import Dialogue
from arena.llm import LLMClient
from arena.llm.json_output import json_object
from arena.conversation.simulator_interface import SimulatorAction, StopDialogue
from simulators.base import SimulatedUser, last_reply, transcript
from simulators.catalog_access import CatalogView
from simulators.grounding import ProfileFacts
from simulators.metrics import preference_coverage, target_ids
from simulators.movielens import MovieLens
from simulators.preferences import PreferenceProfile, build_profile
from arena.titles.names import split_year

PERSONA = (
    "Role-play a person chatting with a movie recommender to find something to watch. You do not have a "
    "particular movie in mind: you find out what you want as you see suggestions.\n"
    "Your general tastes: {narrative}\n"
    "You are the person, not an assistant: never recommend movies yourself. Casual style, two or three "
    "sentences. Do not mention numeric ratings."
)
OPENING = (
    "Start the conversation: greet the recommender and ask for a movie that suits your general tastes, "
    "mentioning one or two of them. Write only your message."
)
RESPOND = (
    "The chat so far:\n{transcript}\n\n"
    "Your impressions of the movies just shown:\n{impressions}\n\n"
    "Reply to the recommender: give honest feedback on the shown movies based on these impressions, and "
    "say a bit more about what you are looking for. Write only your message."
)
RESPOND_NO_ITEMS = (
    "The chat so far:\n{transcript}\n\n"
    "No movie was shown this time. Answer the recommender and share more about your tastes so it can "
    "suggest something. Write only your message."
)
REFLECT = (
    "Your general tastes: {narrative}\n\n"
    "For each movie below, decide whether you expect to like or dislike it, with a short reason in your "
    "own words.\n{items}\n\n"
    'Answer in JSON: {{"opinions": [{{"title": "...", "opinion": "like" or "dislike", "reason": "..."}}]}}'
)


class PepperSimulator(SimulatedUser):
    kind = "pepper"
    label = "Target-free user with reflected preferences (PEPPER)"

    def __init__(
        self,
        catalog: CatalogView,
        *,
        seed: int,
        llm: LLMClient,
        profile: Optional[PreferenceProfile] = None,
        movielens: Optional[MovieLens] = None,
        inspect_k: int = 4,  # items the user looks at per turn, as in PEPPER
        coverage_k: int = 5,
        **kwargs: Any,
    ):
        super().__init__(seed=seed, llm=llm, **kwargs)
        self.catalog = catalog
        if profile is None and movielens is None:
            raise ValueError("the PEPPER simulator needs a preference profile or the MovieLens histories")
        self.preferences = profile or build_profile(catalog, self.rng, movielens=movielens)
        self.inspect_k = inspect_k
        self.coverage_k = coverage_k
        self.reflections: list[dict[str, Any]] = []

    def profile(self) -> dict[str, Any]:
        return {**self.preferences.to_dict(), "catalog": self.catalog.dataset, "inspect_k": self.inspect_k}

    def profile_facts(self) -> ProfileFacts:
        p = self.preferences
        return ProfileFacts.of(genres=p.liked_genres + p.disliked_genres,
                               titles=p.favourites + p.disliked_titles + [m.title for m in p.seen],
                               years=[m.year for m in p.seen], decades=[p.era])

    def observe(self, dialogue: Dialogue) -> None:
        dialogue.metadata["targets"] = target_ids(self.preferences.targets)
        dialogue.metadata["target_items"] = self.preferences.targets
        dialogue.metadata["preference_coverage_k"] = self.coverage_k
        dialogue.metadata["preference_coverage"] = preference_coverage(
            dialogue, self.preferences.targets, k=self.coverage_k
        )
        dialogue.metadata["reflections"] = self.reflections

    def act(self, dialogue: Dialogue) -> SimulatorAction:
        persona = PERSONA.format(narrative=self.preferences.narrative())
        tastes = tuple(t.lower() for t in self.preferences.liked_genres + self.preferences.liked_people)
        reply = last_reply(dialogue)
        if reply is None:
            return self.say(self.ask_llm(persona, OPENING), f"Hi! Can you recommend a movie? {self._taste_line()}",
                            dialogue, [tastes])
        opinions = self.reflect(dialogue, reply.items[: self.inspect_k])
        if not opinions:
            prompt = RESPOND_NO_ITEMS.format(transcript=transcript(dialogue))
            return self.say(self.ask_llm(persona, prompt), f"Could you suggest a few titles? {self._taste_line()}",
                            dialogue, [tastes])
        impressions = "\n".join(
            f"- {o['title']}: {o['opinion']}" + (" (seen it)" if o["seen"] else "") + f" - {o['reason']}"
            for o in opinions
        )
        prompt = RESPOND.format(transcript=transcript(dialogue), impressions=impressions)
        shown = tuple(split_year(o["title"])[0].lower() for o in opinions)
        return self.say(self.ask_llm(persona, prompt), _feedback_template(opinions), dialogue, [shown])

    def _taste_line(self) -> str:
        genres = [g.lower() for g in self.preferences.liked_genres[:2]]
        if genres:
            return f"I usually enjoy {' and '.join(genres)} movies."
        return "I'm open to most genres if the story is good."

    # -- reflected preferences ---------------------------------------------------
    def reflect(self, dialogue: Dialogue, items: list) -> list[dict[str, Any]]:
        opinions: list[dict[str, Any]] = []
        unseen = []
        for item in items:
            facts = self.catalog.lookup(item)
            seen = self.preferences.seen_movie(facts, item.title)
            if seen is not None:
                opinion = seen.opinion()
                reason = {"like": "you enjoyed it when you watched it",
                          "dislike": "you did not enjoy it when you watched it",
                          "mixed": "you found it just okay when you watched it"}[seen.opinion()]
                opinions.append({"title": item.title, "seen": True, "opinion": opinion, "reason": reason,
                                 "source": "history"})
            else:
                entry = {"title": item.title, "seen": False, "facts": facts}
                opinions.append(entry)
                unseen.append(entry)
        if unseen:
            judged = self._judge_unseen(unseen)
            for entry in unseen:
                facts = entry.pop("facts")
                verdict = judged.get(entry["title"].lower())
                if verdict is not None:
                    entry.update(verdict, source="llm")
                else:
                    affinity = self.preferences.genre_affinity(facts.genres if facts else [])
                    entry.update(
                        opinion="like" if affinity > 0 else "dislike",
                        reason="it is close to the genres you enjoy" if affinity > 0
                        else "it is not the kind of genre you usually enjoy",
                        source="genres",
                    )
        if opinions:
            self.reflections.append({"turn": dialogue.num_turns, "items": opinions})
        return opinions

    def _judge_unseen(self, unseen: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
        lines = []
        for entry in unseen:
            facts = entry["facts"]
            lines.append(f"- {facts.describe() if facts else entry['title']}")
        raw = self.ask_llm(
            "You imagine how a particular person would judge movies.",
            REFLECT.format(narrative=self.preferences.narrative(), items="\n".join(lines)),
            max_tokens=60 * len(unseen) + 40,
            json_mode=True,
        )
        return _parse_opinions(raw, [e["title"] for e in unseen])

    def verdict(self, dialogue: Dialogue) -> Optional[StopDialogue]:
        found = [o["title"] for r in self.reflections for o in r["items"] if not o["seen"] and o["opinion"] == "like"]
        if found:
            return StopDialogue("out of turns", "satisfied", f"I found something I would watch: {found[0]}.")
        return StopDialogue("out of turns", "frustrated", "Nothing I was shown matched my tastes.")


_FIRST_PERSON = {
    "you enjoyed it when you watched it": "I enjoyed it when I watched it",
    "you did not enjoy it when you watched it": "I did not enjoy it when I watched it",
    "you found it just okay when you watched it": "I found it just okay",
    "it is close to the genres you enjoy": "it is close to the genres I enjoy",
    "it is not the kind of genre you usually enjoy": "it is not the kind of genre I usually enjoy",
}


def _feedback_template(opinions: list[dict[str, Any]]) -> str:
    """Feedback on the shown movies from the reflected opinions (used when the LLM's message is unusable)."""
    parts = []
    for o in opinions[:2]:
        name = split_year(o["title"])[0]
        # The reasons are written for the prompt, in the second person; the user says them in the first.
        reason = _FIRST_PERSON.get(o["reason"], o["reason"]).rstrip(".")
        if o["opinion"] == "like":
            parts.append(f"{name} sounds good to me, {reason}.")
        elif o["opinion"] == "dislike":
            parts.append(f"{name} is not for me, {reason}.")
        else:
            parts.append(f"I have seen {name}, {reason}.")
    return " ".join(parts) + " What else do you have?"


def _parse_opinions(raw: str, titles: list[str]) -> dict[str, dict[str, str]]:
    """Opinions keyed by lower-cased title; unreadable or unknown entries are left out."""
    data = json_object(raw)
    entries = data.get("opinions") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return {}
    wanted = {t.lower(): t for t in titles}
    out: dict[str, dict[str, str]] = {}
    for position, entry in enumerate(entries):
        if not isinstance(entry, dict):
            continue
        opinion = str(entry.get("opinion", "")).strip().lower()
        if opinion not in ("like", "dislike"):
            continue
        title = str(entry.get("title", "")).strip().lower()
        key = title if title in wanted else next((w for w in wanted if title and (title in w or w in title)), None)
        if key is None and position < len(titles) and not title:
            key = titles[position].lower()
        if key is not None and key not in out:
            out[key] = {"opinion": opinion, "reason": str(entry.get("reason", "")).strip()[:200] or "no reason given"}
    return out
