"""Small hand-made dialogues for the act and metric tests."""

from arena.dialogue import Dialogue, DialogueAct, RecommendedItem


def acts(*intents, titles=()):
    return [DialogueAct(intent=i, slot_values=[["TITLE", t] for t in titles]) for i in intents]


def make_dialogue(turns, crs_id="sys", dialogue_id=None, sentiment=None, targets=None):
    """`turns`: (role, text, intents or None, items) tuples; role "U" or "A"."""
    from arena.dialogue import Feedback

    d = Dialogue(crs_id=crs_id, **({"dialogue_id": dialogue_id} if dialogue_id else {}))
    for turn in turns:
        role, text, intents = turn[0], turn[1], turn[2]
        items = turn[3] if len(turn) > 3 else []
        titles = turn[4] if len(turn) > 4 else ()
        da = acts(*intents, titles=titles) if intents is not None else None
        if role == "U":
            d.add_user(text, dialogue_acts=da)
        else:
            d.add_agent(text, items=[RecommendedItem(item_id=i, title=t) for i, t in items], dialogue_acts=da)
    if sentiment:
        d.feedback = Feedback(sentiment=sentiment)
    if targets is not None:
        d.metadata["targets"] = targets
    return d


def three_rounds():
    """9 utterances, 5 user turns; rounds: rejected, accepted, undecided; one acceptance."""
    return make_dialogue([
        ("U", "hi", ["OTH"]),
        ("A", "Have you seen Heat (1995)?", ["REC-E"]),
        ("U", "yes, I didn't like it", ["SEE", "REJ"]),
        ("A", "How about Ronin (1998)?", ["REC-E"]),
        ("U", "what is it about?", ["INQ"]),
        ("A", "Former agents chase a briefcase.", ["R-ANS"]),
        ("U", "sounds good, I'll watch it", ["ACC"]),
        ("A", "Enjoy! Collateral (2004) is great too.", ["OTH", "REC-S"]),
        ("U", "thanks, bye", ["OTH"]),
    ])
