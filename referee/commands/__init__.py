"""One module per `referee` sub-command: each has `add_arguments(parser)` and `run(args) -> int`."""
