"""Camera intrinsics, board pose and colour models, stored as versioned JSON; the printable kit."""
