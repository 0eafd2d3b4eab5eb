"""From a BGR frame to an observation of the board. Knows nothing of the rules."""
