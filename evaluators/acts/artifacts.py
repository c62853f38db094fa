"""Where the act annotators' run-time files live: the offline model and the LLM prompt in `assets/acts/`.

Kept apart from `evaluators.acts.data` (the labelled sets in `training_data/acts/` that train and
measure the annotators) so that annotating a dialogue never imports training or measuring code.
"""

from arena.runtime.config import ASSETS_DIR

ACTS_ASSETS = ASSETS_DIR / "acts"
