"""A conversation's turn loop, the interfaces of its two parties, and its state."""
