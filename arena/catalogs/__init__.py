"""The item catalogs, their checks, and search over them."""
