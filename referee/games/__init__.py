"""Each game the referee plays, described once (`base.Game`), looked up in `registry`."""
