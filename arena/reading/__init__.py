"""The one reader of what people say: a user message read into IARD intents, the items it refers
to, and constraints with their scope (genre, era, person, kind of item, audience, intensity).

- `acts`: what a message does (closing, small talk, acceptance, question and its aspect, the item
  pointed at) and its IARD intents by rules;
- `scope`: how far a negation or "seen it" reaches;
- `constraints`: what the conversation rules in or out, turn by turn;
- `vocabulary`: the words for genres, intensity and kinds, and how catalog entries bear them out;
- `intents`: a coherent set of intents for one utterance.

The systems (`crs.dialogue_policy`), the recommender's reading of a dialogue, the simulators'
ignored-turn reading and the act scorer take their reading from here (docs/user-messages.md).
"""
