"""A person's name is the person's: OpenDialKG links some people through the page that lists their work
("Jon Favreau filmography"), and a reply read "directed by Jon Favreau filmography"."""

from __future__ import annotations

import re

from arena.catalogs.catalog import Catalog


def test_no_credit_names_a_list_page(opendialkg: Catalog):
    listed = [(i.label, name) for i in opendialkg.items for names in i.people.values() for name in names
              if re.search(r"\b(filmography|discography|bibliography)$", name, re.I)]
    assert not listed, listed[:5]
    iron_man = opendialkg.find_title("Iron Man 2")
    assert iron_man.people["director"] == ("Jon Favreau",)
