"""Titles in text: how a title is written, and finding catalog titles in what people and systems say.

- `phrases`: tokens, folding and the phrase index that matches names in free text
- `names`: one title's forms (year split off, article moved, variants) and plain-text checks
- `linking`: mentions of catalog items in an utterance (the one title linker every part uses)
"""
