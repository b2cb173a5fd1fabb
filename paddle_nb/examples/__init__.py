"""Complete models built and trained with paddle_nb (used by the tour, notebooks, tests)."""
