"""A battle whose reply names its own system (or its family) is voided: kept for researchers, out of the
leaderboard (issue 26)."""

from battle_support import FakeCatalogCRS, make_services

from arena.dialogue import Dialogue, UserInfo, UserKind
from arena.conversation.self_naming import family_of, names_itself, void_reason
from arena.crowd.counting import visibility
from webapp.ui.battle_tab import rate, send, start_battle, vote


class Boastful(FakeCatalogCRS):
    def respond(self, dialogue):
        text, items = super().respond(dialogue)
        return f"As UniCRS, I say: {text}", items


def reply(crs_id, text):
    d = Dialogue(crs_id=crs_id, user=UserInfo(kind=UserKind.HUMAN, id="u"))
    d.add_user("hi")
    d.add_agent(text)
    return d


def test_families_and_self_naming():
    assert family_of("unicrs_redial") == "unicrs" and family_of("crb_crs_redial") == "crb"
    assert family_of("alpha") is None
    assert names_itself(reply("kbrd_redial", "Hi, KBRD here. Try Jaws."))
    assert names_itself(reply("unicrs_opendialkg", "I am Uni-CRS"))
    assert names_itself(reply("chatcrs_redial", "chatcrs recommends Up"))
    assert names_itself(reply("crb_crs_redial", "This is CRB-CRS."))
    assert names_itself(reply("alpha", "alpha thinks so"))  # the id itself
    assert names_itself(reply("barcor_redial", "Try Jaws (1975), a barcorner classic")) is None
    assert names_itself(reply("kbrd_redial", "UniCRS would say Up")) is None  # a rival's name tells nothing
    user_said = reply("kbrd_redial", "Try Up")
    user_said.add_user("are you KBRD?")
    assert names_itself(user_said) is None  # only the system's own replies count
    assert void_reason(reply("kbrd_redial", "ok"), reply("unicrs_redial", "UniCRS here")).startswith("void:")


def test_self_naming_battle_is_voided_kept_and_left_out(tmp_path):
    services = make_services(tmp_path, [Boastful("unicrs_redial"), FakeCatalogCRS("kbrd_redial")])
    session = start_battle(services, "u1")
    for side in ("A", "B"):
        send(services, session, side, "a space movie please")
        rate(services, session, side, "satisfied")
    cast = vote(services, session, "A", "", "u1")
    assert session.flagged and session.flagged.startswith("void: reply names its own system (unicrs")
    assert services.store.flagged_votes()[cast.vote_id] == session.flagged
    stored = services.store.list_votes()
    assert [v.vote_id for v in stored] == [cast.vote_id]  # kept for researchers
    seen = visibility(services.store, stored)
    assert seen.votes(stored) == []  # out of the leaderboard
    assert not any(seen.counts_label(d) for d in services.store.list_dialogues())  # its labels too
