"""The Flask page and JSON API. Presents referee/, never the other way round."""
