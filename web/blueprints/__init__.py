"""One blueprint per feature: pages, live view API, controls, match history."""
