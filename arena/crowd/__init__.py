"""People in the arena: studies, aspect ratings, what counts, and the rater check."""
