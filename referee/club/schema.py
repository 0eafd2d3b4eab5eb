"""The club database's schema, as numbered migrations applied in order, each in one transaction.

`schema_version` holds one row per applied migration. `migrate(conn)` applies the missing ones
(`referee club init URL`); a database newer than this referee is refused, never touched. Two
inits at once are serialised by an advisory lock.

Version 1: tables, matches, events, positions, snapshots (JPEG bytes, at most `SNAPSHOT_CAP_BYTES`
each; a bigger one is not sent).
Version 2: players' names per match (the table's names, the organiser's corrections), rounds
(named time windows for the standings), and the indexes the club page's filters use.

JSON columns are `json`, not `jsonb`: they keep the text the referee wrote, so the club's
exports are the table's exports key for key.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referee.club.errors import ClubSchemaError

SNAPSHOT_CAP_BYTES = 1 << 20  # a referee's snapshot is ~100 kB at quality 80; 1 MiB is far above
NOTIFY_CHANNEL = "referee_club"
_LOCK_KEY = 720_2026  # pg_advisory_xact_lock key of `migrate`

MIGRATIONS: tuple[tuple[int, str, str], ...] = (
    (1, "tables, matches, events, positions, snapshots", f"""
CREATE TABLE tables (
    name text PRIMARY KEY,
    referee_id text NOT NULL,
    last_seen timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE matches (
    id bigserial PRIMARY KEY,
    referee_id text NOT NULL,
    local_id integer NOT NULL,
    table_name text NOT NULL REFERENCES tables(name),
    game text NOT NULL,
    variant text NOT NULL,
    players json NOT NULL,
    source text,
    started_at text NOT NULL,
    started timestamptz NOT NULL,
    ended_at text,
    result json,
    start_position json,
    UNIQUE (referee_id, local_id)
);
CREATE TABLE events (
    match_id bigint NOT NULL REFERENCES matches(id),
    seq integer NOT NULL,
    time text NOT NULL,
    type text NOT NULL,
    payload json NOT NULL,
    arrival bigserial NOT NULL,
    PRIMARY KEY (match_id, seq)
);
CREATE TABLE positions (
    match_id bigint NOT NULL,
    seq integer NOT NULL,
    position json NOT NULL,
    PRIMARY KEY (match_id, seq),
    FOREIGN KEY (match_id, seq) REFERENCES events(match_id, seq)
);
CREATE TABLE snapshots (
    match_id bigint NOT NULL,
    seq integer NOT NULL,
    jpeg bytea NOT NULL CHECK (octet_length(jpeg) <= {SNAPSHOT_CAP_BYTES}),
    PRIMARY KEY (match_id, seq),
    FOREIGN KEY (match_id, seq) REFERENCES events(match_id, seq)
);
"""),
    (2, "players' names, rounds, indexes for the club page", """
CREATE TABLE match_players (
    match_id bigint NOT NULL REFERENCES matches(id),
    colour text NOT NULL,
    name text,
    corrected_at timestamptz,
    PRIMARY KEY (match_id, colour)
);
INSERT INTO match_players (match_id, colour, name)
    SELECT m.id, p.colour, NULLIF(btrim(s.payload -> 'names' ->> p.colour), '')
    FROM matches m
    CROSS JOIN LATERAL json_array_elements_text(m.players) AS p(colour)
    LEFT JOIN LATERAL (SELECT e.payload FROM events e
                       WHERE e.match_id = m.id AND e.type = 'start'
                       ORDER BY e.seq LIMIT 1) s ON true;
CREATE INDEX match_players_name ON match_players (lower(name));
CREATE TABLE rounds (
    id bigserial PRIMARY KEY,
    name text NOT NULL,
    started timestamptz NOT NULL DEFAULT now(),
    UNIQUE (started)
);
CREATE INDEX matches_table_started ON matches (table_name, started DESC, id DESC);
CREATE INDEX matches_started ON matches (started DESC);
CREATE INDEX matches_game ON matches (game, started DESC);
"""),
)
LATEST = MIGRATIONS[-1][0]


def _has_version_table(conn: Any) -> bool:
    row = conn.execute("SELECT to_regclass('schema_version') IS NOT NULL").fetchone()
    return bool(row and row[0])


def version(conn: Any) -> int:
    """The schema version of the database (0: none yet)."""
    if not _has_version_table(conn):
        return 0
    row = conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_version").fetchone()
    return int(row[0])


def migrate(conn: Any, *, target: int = LATEST,
            migrations: Sequence[tuple[int, str, str]] = MIGRATIONS) -> list[int]:
    """Apply the migrations after the database's version up to `target`, each in its own
    transaction; returns the versions applied. `conn` must not be in a transaction."""
    applied: list[int] = []
    for number, _, sql in migrations:
        if number > target:
            break
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
            conn.execute("CREATE TABLE IF NOT EXISTS schema_version ("
                         " version integer PRIMARY KEY,"
                         " description text NOT NULL,"
                         " applied_at timestamptz NOT NULL DEFAULT now())")
            current = version(conn)
            if current > LATEST:
                raise ClubSchemaError(
                    f"the club database has schema version {current}, newer than this "
                    f"referee's {LATEST}: update the referee")
            if number <= current:
                continue
            conn.execute(sql)
            conn.execute("INSERT INTO schema_version (version, description) VALUES (%s, %s)",
                         (number, _description(number, migrations)))
            applied.append(number)
    return applied


def _description(number: int, migrations: Sequence[tuple[int, str, str]]) -> str:
    return next(d for n, d, _ in migrations if n == number)


def require(conn: Any, needed: int = LATEST) -> int:
    """The database's version when it is `needed`, else `ClubSchemaError` saying what to run."""
    current = version(conn)
    if current == 0:
        raise ClubSchemaError("the club database has no referee schema yet: run "
                              "`referee club init URL` once")
    if current < needed:
        raise ClubSchemaError(f"the club database has schema version {current}, this referee "
                              f"needs {needed}: run `referee club init URL` to migrate it")
    if current > LATEST:
        raise ClubSchemaError(f"the club database has schema version {current}, newer than "
                              f"this referee's {LATEST}: update the referee")
    return current
