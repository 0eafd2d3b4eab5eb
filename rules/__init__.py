"""Pure game engines: Dition and Domination. No images, no I/O, no web."""
