"""Template NLG for the agenda-based user: dialogue acts -> one user message.

Several phrasings per act, picked by the user's seeded random generator, so
dialogues vary but replay identically for the same seed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Optional, Sequence

from simulators.goals import REQUEST_PHRASES, with_article


@dataclass(frozen=True)
class UserAct:
    intent: str
    slot: Optional[str] = None
    value: Optional[str] = None


PREFERENCE = {
    "genre": ["I'd like {value_article} movie.", "Something in the {value} genre would be great.",
              "I'm in the mood for {value_article} film."],
    "year": ["Ideally one that came out in {value}.", "I'd prefer something released in {value}."],
    "actor": ["I really enjoy films with {value}.", "Something starring {value} would be nice."],
    "director": ["I like movies directed by {value}.", "Maybe something by {value}?"],
}

TEMPLATES = {
    "IQU": ["Hi! I'm looking for a movie to watch.", "Hello, can you help me find a movie?",
            "Hey there, I need a movie recommendation."],
    "ACC": ["{title} sounds great, I'll watch it!", "Perfect, I'll go with {title}.",
            "I like the sound of {title}, I'll watch that one."],
    "REJ": ["Hmm, {title} is not really what I'm after.", "I don't think {title} is for me.",
            "No, {title} doesn't appeal to me."],
    "SEE": ["I've already seen {title}. Anything else?", "Oh, I saw {title} already. Something else?"],
    "CRI-F": ["That's not quite it.", "Close, but not what I had in mind."],
    "CRI-A": ["Do you have something similar, but different?", "Could you suggest something else along those lines?"],
    "CON": ["Do you have any suggestions?", "What would you recommend?", "Any title in mind?"],
    "NRE": ["I don't really mind, surprise me.", "No strong preference there."],
    "END": ["Thanks for the help, bye!", "Great, thank you. Bye!"],
}

INQUIRY = {
    "plot": ["What is {title} about?", "Can you tell me the plot of {title}?"],
    "director": ["Who directed {title}?", "Do you know who the director of {title} is?"],
    "rating": ["Is {title} well rated?", "How good are the reviews for {title}?"],
}


def realize(acts: Sequence[UserAct], rng: random.Random, title: str = "it") -> str:
    """One message for a sequence of acts, e.g. [REJ, PRO(genre=comedy)]."""
    parts = []
    for act in acts:
        if act.intent in ("PRO", "ANS") and act.slot in PREFERENCE:
            value = str(act.value)
            article = with_article(value.lower()) if act.slot == "genre" else value
            parts.append(rng.choice(PREFERENCE[act.slot]).format(value=value, value_article=article))
        elif act.intent == "INQ" and act.slot in INQUIRY:
            parts.append(rng.choice(INQUIRY[act.slot]).format(title=title))
        elif act.intent in TEMPLATES:
            parts.append(rng.choice(TEMPLATES[act.intent]).format(title=title))
    return " ".join(parts) or rng.choice(TEMPLATES["CON"])


def describe_acts(acts: Sequence[UserAct], title: str) -> str:
    """The acts in words, for the LLM that paraphrases them."""
    words = {
        "IQU": "greet and say you want a movie recommendation",
        "ACC": f'accept the suggestion "{title}"',
        "REJ": f'turn down "{title}"',
        "SEE": f'say you have already seen "{title}" and want another one',
        "CRI-F": "say the suggestion misses what you asked for",
        "CRI-A": "ask for something similar but different",
        "CON": "ask for a suggestion",
        "NRE": "say you have no particular preference",
        "END": "thank the recommender and say goodbye",
    }
    out = []
    for act in acts:
        if act.intent in ("PRO", "ANS") and act.slot:
            out.append(f"say you want a movie whose {act.slot} is {act.value}")
        elif act.intent == "INQ" and act.slot:
            out.append(f'ask {REQUEST_PHRASES.get(act.slot, act.slot)} for "{title}"')
        elif act.intent in words:
            out.append(words[act.intent])
    return "; ".join(out)
