"""The club database's URL: checked, shown without its password, connected to with clear errors.

A club URL is a libpq URL, `postgresql://USER:PASSWORD@HOST:PORT/DB?sslmode=require`; every
query parameter (`sslmode`, `sslrootcert`, `connect_timeout`, ...) goes to libpq unchanged. Only
`redact(url)` is ever printed, logged or served: the password becomes `***`.
"""

from __future__ import annotations

import os
import re
from typing import Any
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from referee.club.errors import ClubAuthError, ClubUnreachableError, ClubUrlError

ENV_URL = "REFEREE_CLUB_URL"
SCHEMES = ("postgresql", "postgres")
CONNECT_TIMEOUT_S = 5
#: libpq's words for a refused login (wrong password or user, no such role, not allowed by
#: pg_hba.conf): the referee says "refused the credentials" for these and "cannot reach" otherwise
_AUTH_WORDS = ("password authentication failed", "no password supplied", "pg_hba.conf",
               "authentication failed")


def check_url(url: str) -> str:
    """`url` itself when it is a postgresql:// URL, else `ClubUrlError` naming what is wrong."""
    parts = urlsplit(url)
    if parts.scheme not in SCHEMES:
        raise ClubUrlError(f"the club URL must start with postgresql:// (got {redact(url)!r})")
    if not parts.hostname and "host=" not in parts.query:
        raise ClubUrlError(f"the club URL names no host: {redact(url)!r}")
    return url


def url_from(option: str | None) -> str | None:
    """The club URL from a `--club` option, else from $REFEREE_CLUB_URL, else None."""
    url = option or os.environ.get(ENV_URL) or None
    return check_url(url) if url else None


def password_of(url: str) -> str | None:
    parts = urlsplit(url)
    secret = parts.password
    query_pw = re.search(r"(?:^|&)password=([^&]*)", parts.query)
    if query_pw:
        secret = unquote(query_pw.group(1))
    return unquote(secret) if secret else None


def redact(url: str) -> str:
    """`url` with its password (in the authority or as `password=`) replaced by `***`."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unreadable club URL>"
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        if ":" in userinfo:
            userinfo = userinfo.split(":", 1)[0] + ":***"
        netloc = f"{userinfo}@{host}"
    query = re.sub(r"((?:^|&)password=)[^&]*", r"\1***", parts.query)
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def scrub(text: str, url: str) -> str:
    """`text` (an error message) with the URL's password taken out wherever it appears."""
    secret = password_of(url)
    if secret:
        for form in {secret, quote(secret, safe="")}:
            text = text.replace(form, "***")
    return text.replace(url, redact(url))


def club_key(url: str) -> str:
    """Which club a sent-up-to marker belongs to: host, port and database, no user or secret."""
    parts = urlsplit(url)
    return f"{parts.hostname or ''}:{parts.port or 5432}/{parts.path.lstrip('/')}"


def _is_auth_failure(message: str) -> bool:
    low = message.lower()
    return any(w in low for w in _AUTH_WORDS) or ("role" in low and "does not exist" in low)


def connect(url: str, *, autocommit: bool = False, timeout_s: float = CONNECT_TIMEOUT_S) -> Any:
    """A psycopg connection to the club database; `ClubAuthError` for refused credentials,
    `ClubUnreachableError` for everything else that stops the connection. Messages redacted."""
    import psycopg

    check_url(url)
    kwargs: dict[str, Any] = {"autocommit": autocommit}
    if "connect_timeout=" not in url:
        kwargs["connect_timeout"] = max(1, round(timeout_s))
    try:
        return psycopg.connect(url, **kwargs)
    except psycopg.OperationalError as exc:
        message = scrub(str(exc).strip(), url)
        where = redact(url)
        if _is_auth_failure(message):
            raise ClubAuthError(
                f"the club database {where} refused the credentials: {message}") from None
        raise ClubUnreachableError(f"cannot reach the club database {where}: {message}") from None
