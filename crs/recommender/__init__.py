"""The offline recommender every system in the arena can rank items with.

See `recommender.py` for the API (`load_recommender`, `Recommender.recommend`),
`signals.py` for the evidence it combines and `combination.py` for how the
weights are learnt (`scripts/train_recommender.py`).
"""

from crs.recommender.recommender import Ranked, Recommender, load_recommender

__all__ = ["Ranked", "Recommender", "load_recommender"]
