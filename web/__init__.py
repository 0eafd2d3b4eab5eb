"""The Flask page and JSON API. Presents referee/, never the other way round."""

from web.app import create_app
from web.server import serve

__all__ = ["create_app", "serve"]
