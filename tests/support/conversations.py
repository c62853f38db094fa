"""Conversations written turn by turn for tests of the reader and the dialogue policy."""

from __future__ import annotations

from arena.catalogs.catalog import Catalog
from arena.dialogue import Dialogue


def conversation(catalog: Catalog, *turns) -> Dialogue:
    """User and system turns alternate from the user; a system turn is a list of the labels it shows,
    each of which must be a catalog item."""
    d = Dialogue(crs_id="test")
    for n, turn in enumerate(turns):
        if n % 2 == 0:
            d.add_user(turn)
        else:
            shown = [catalog.find_title(label) for label in turn]
            assert all(shown), turn
            d.add_agent("Here: " + ", ".join(i.label for i in shown), items=[i.to_recommended() for i in shown])
    return d


def read(policy, catalog: Catalog, *turns):
    """The dialogue policy's reading (a `crs.dialogue_policy.UserMove`) of the last user turn of
    `conversation(catalog, *turns)`."""
    return policy.read(conversation(catalog, *turns))
