"""The one error base of `web/`; every leaf error also subclasses the builtin that fits.

Each leaf carries the HTTP `status` and the machine-readable `code` it is answered with; the
JSON error handlers in `web.json_errors` turn any `WebError` into `{"error": code, "message": text}`.
"""


class WebError(Exception):
    """Base of every error raised by `web/`."""

    status: int = 500
    code: str = "internal_error"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code


class BadRequestError(WebError, ValueError):
    """The request body or a parameter is malformed (400)."""

    status = 400
    code = "bad_request"


class UnsupportedMediaTypeError(WebError, ValueError):
    """A state-changing request without `Content-Type: application/json` (415)."""

    status = 415
    code = "json_required"


class PinRequiredError(WebError, PermissionError):
    """A control request without the owner's PIN (or with a wrong one) (401)."""

    status = 401
    code = "pin_required"


class CrossSiteRequestError(WebError, PermissionError):
    """A state-changing request whose Origin/Referer is not this server (403)."""

    status = 403
    code = "cross_site"


class TooManyAttemptsError(WebError, PermissionError):
    """Too many wrong PINs from one address in a short time (429)."""

    status = 429
    code = "too_many_attempts"


class PayloadTooLargeError(WebError, ValueError):
    """A request body over the server's small limit, refused before it is read (413)."""

    status = 413
    code = "too_large"


class MisdirectedRequestError(WebError, PermissionError):
    """A request whose `Host` is not a name of this machine: DNS rebinding (421)."""

    status = 421
    code = "unknown_host"


class TooManyStreamsError(WebError, ConnectionError):
    """More open event or picture streams than this client address or the server allows (503)."""

    status = 503
    code = "too_many_streams"


class NotFoundError(WebError, LookupError):
    """An unknown match, snapshot or route (404)."""

    status = 404
    code = "not_found"


class FrameUnavailableError(WebError, LookupError):
    """The service has no camera frame to show yet (503)."""

    status = 503
    code = "no_frame"


class ServerStartError(WebError, OSError):
    """The server cannot listen on the address it was given (port taken, no permission)."""

    code = "cannot_listen"
