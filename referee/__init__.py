"""The composition layer: match loop, match log, command line."""
