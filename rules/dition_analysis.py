"""Analysis of Dition positions: the danger map and whether a (non-suicide) placement exists.

Danger map: a grid of candidate centres; every disc stamps the grid points within 1 (overlap) or
2 (range) of it, vectorised over all discs at once and accumulated with `np.bincount`. The
squared distances are computed with the same formula and float order as `judge_placement`, so
each grid code equals the verdict of placing there, bit for bit.

Existence (`find_legal_placement`, `find_safe_placement`) is the continuous problem, solved with
the arrangement of the rule circles (see `seeds/dition.md` for the proof sketch):

* Let S be the set of centres that are legal (closed: distance >= 1 from every disc, inside
  `[0.5, 19.5]^2`) and not suicide: at most 3 attackers (a closed condition, attackers being
  counted in open discs) or within the open range of a killable opponent (then the legal set
  meets that disc's *closed* range too, a closed set). These closed pieces are cut out by circles
  of radius 1 around every disc, circles of radius 2 around every opponent disc, and the four
  lines of the centre square. A non-empty closed bounded piece has a boundary point, and its boundary
  consists of arcs and segments of those curves; each such arc either ends at a vertex of the
  arrangement (an intersection of two curves, or a corner of the square), or is a whole circle.
  So S is non-empty iff it contains an arrangement vertex or a point of a whole circle.
* Candidates are therefore: all pairwise circle intersections (tangency included), circle/line
  intersections, the square's corners and four points on every circle. They are evaluated with a
  slack of `TOLERANCE_SQ` on squared distances (and `TOLERANCE_EDGE` on the square) in the
  direction that favours existence, which absorbs the rounding of the computed vertices.
* Answer: "no" is exact (no exactly-legal / exactly-safe point exists). "yes" means a point exists
  that violates no constraint by more than the slack; the returned `Placement` says whether it
  also passes `judge_placement` exactly (nudged candidates are tried to find such a witness).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import NamedTuple

import numpy as np

from rules.dition import (
    CENTRE_MAX,
    CENTRE_MIN,
    DISAPPEAR_COUNT,
    RANGE_DISTANCE,
    RANGE_SQ,
    TOUCH_DISTANCE,
    TOUCH_SQ,
    Colour,
    Danger,
    DangerMap,
    Outcome,
    Position,
    check_placement,
    judge_placement,
    opponent_counts,
    parse_colour,
    parse_coordinate,
)
from rules.errors import InvalidParameterError

TOLERANCE_SQ = 1e-9  #: slack on squared centre distances for the existence questions
TOLERANCE_EDGE = 1e-9  #: slack on the centre square for the existence questions
MIN_RESOLUTION = 0.01  #: finest danger-map grid (381 x 381 at the default 0.05)
_NUDGES = (1e-7, 1e-5, 1e-3)  #: distances tried around a vertex to find an exact witness
_NUDGE_DIRECTIONS = 16
_MAX_NUDGED = 256  #: how many slack-passing candidates are nudged at most
_CHUNK = 4096  #: candidates evaluated at once (early exit between chunks) ...
_FIRST_CHUNK = 128  #: ... starting small: in most positions an early candidate succeeds


class Placement(NamedTuple):
    """A witness placement. `exact`: it passes `check_placement`/`judge_placement` as is; if
    False it is within the documented slack of doing so (a degenerate, measure-zero spot)."""

    x: float
    y: float
    exact: bool


# --- danger map ---------------------------------------------------------------------------------
def grid_axis(resolution: float) -> np.ndarray:
    """Candidate centre coordinates 0.5, 0.5 + r, ... up to at most 19.5."""
    n = math.floor((CENTRE_MAX - CENTRE_MIN) / resolution + 1e-9) + 1
    axis = np.minimum(CENTRE_MIN + np.arange(n) * resolution, CENTRE_MAX)
    axis.setflags(write=False)
    return axis


def _count_within(
    axis: np.ndarray, resolution: float, centres: np.ndarray, radius: float, radius_sq: float
) -> np.ndarray:
    """`(n, n)` `[iy, ix]` for every grid point: how many centres have squared distance
    < `radius_sq` from it.

    For one disc and one grid row the hits form a run of columns (the squared distance is
    unimodal along the row, also in floats: rounded subtraction, squaring and addition are
    monotone). Its two ends are found by binary search with the exact test, vectorised over all
    (disc, row) pairs, and the runs are added with a difference array: O(discs x rows x log)."""
    n = len(axis)
    if not len(centres):
        return np.zeros((n, n), dtype=np.int64)
    cx, cy = centres[:, 0:1], centres[:, 1:2]
    reach = math.ceil(radius / resolution) + 2
    # the column nearest each disc (exactly: the smallest dx^2 among the 3 around the estimate)
    guess = np.clip(np.rint((centres[:, 0] - axis[0]) / resolution).astype(np.intp), 0, n - 1)
    near = np.clip(guess[:, None] + np.array([-1, 0, 1]), 0, n - 1)
    dx = cx - axis[near]
    centre = near[np.arange(len(near)), np.argmin(dx * dx, axis=1)][:, None]  # (M, 1)
    # every row that can hold a hit, with its dy^2 (inf outside the grid)
    rows = np.rint((centres[:, 1] - axis[0]) / resolution).astype(np.intp)[:, None]
    rows = rows + np.arange(-reach, reach + 1)  # (M, R)
    valid = (rows >= 0) & (rows < n)
    rows = np.clip(rows, 0, n - 1)
    dy = cy - axis[rows]
    dy2 = np.where(valid, dy * dy, np.inf)

    def hit(col: np.ndarray) -> np.ndarray:
        d = cx - axis[col]
        return d * d + dy2 < radius_sq  # == dx*dx + dy*dy of judge_placement (a + b == b + a)

    centre = np.broadcast_to(centre, rows.shape)
    inside = hit(centre)
    lo = np.maximum(centre - reach, 0)  # the first hit is in [lo, left_hi]; left_hi hits
    left_hi, right_lo = centre.copy(), centre.copy()
    right_hi = np.minimum(centre + reach, n - 1)  # last hit in [right_lo, right_hi]
    for _ in range(max(1, math.ceil(math.log2(reach + 1)) + 1)):
        mid = (lo + left_hi) // 2
        ok = hit(mid)
        left_hi = np.where(ok, mid, left_hi)
        lo = np.where(ok, lo, np.minimum(mid + 1, left_hi))
        mid = (right_lo + right_hi + 1) // 2
        ok = hit(mid)
        right_lo = np.where(ok, mid, right_lo)
        right_hi = np.where(ok, right_hi, np.maximum(mid - 1, right_lo))
    first, last = left_hi[inside], right_lo[inside]
    row = rows[inside]
    width = n + 1
    diff = np.bincount(row * width + first, minlength=n * width)
    diff -= np.bincount(row * width + last + 1, minlength=n * width)
    return np.cumsum(diff.reshape(n, width), axis=1)[:, :n]


def danger_map(
    position: Position, colour: Colour | None = None, resolution: float = 0.05
) -> DangerMap:
    """See `rules.dition.danger_map`."""
    side = position.to_move if colour is None else parse_colour(colour, "colour")
    res = parse_coordinate(resolution, "resolution", InvalidParameterError)
    if not MIN_RESOLUTION <= res <= CENTRE_MAX - CENTRE_MIN:
        raise InvalidParameterError(
            f"resolution must lie in [{MIN_RESOLUTION}, {CENTRE_MAX - CENTRE_MIN:g}] board "
            f"units, got {res!r}"
        )
    axis = grid_axis(res)
    n = len(axis)
    codes = np.full((n, n), Danger.SAFE, dtype=np.uint8)
    if position.winner is not None:
        codes[:] = Danger.ILLEGAL
    elif position.discs:
        centres = position.centres
        is_opponent = position.colour_mask(side.opponent)
        killable = is_opponent & (opponent_counts(position) >= DISAPPEAR_COUNT - 1)
        overlap = _count_within(axis, res, centres, TOUCH_DISTANCE, TOUCH_SQ) > 0
        dies = (
            _count_within(axis, res, centres[is_opponent], RANGE_DISTANCE, RANGE_SQ)
            >= DISAPPEAR_COUNT
        )
        kills = _count_within(axis, res, centres[killable], RANGE_DISTANCE, RANGE_SQ) > 0
        codes[kills] = Danger.CAPTURE
        codes[dies & kills] = Danger.SACRIFICE
        codes[dies & ~kills] = Danger.SUICIDE
        codes[overlap] = Danger.ILLEGAL
    codes.setflags(write=False)
    return DangerMap(codes, axis, axis, res, side)


# --- existence of placements ----------------------------------------------------------------------
class _Board(NamedTuple):
    """Disc data extended by a far-away sentinel (index N) for padded neighbour tables."""

    x: np.ndarray
    y: np.ndarray
    opponent: np.ndarray  #: counts towards the placed disc's attackers
    killable: np.ndarray  #: an opponent disc that a placement within range of it removes
    safe: bool  #: the question: True = legal and not suicide, False = legal


def _neighbour_table(centres: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """`(N, K)` row i: disc i and every disc paired with it, padded with the sentinel N."""
    n = len(centres)
    src = np.concatenate([pairs[:, 0], pairs[:, 1], np.arange(n)])
    dst = np.concatenate([pairs[:, 1], pairs[:, 0], np.arange(n)])
    order = np.argsort(src, kind="stable")
    src, dst = src[order], dst[order]
    counts = np.bincount(src, minlength=n)
    starts = np.cumsum(counts) - counts
    column = np.arange(len(src)) - starts[src]
    table = np.full((n, int(counts.max())), n, dtype=np.intp)
    table[src, column] = dst
    return table


def _circle_circle(
    c1: np.ndarray, r1: np.ndarray, c2: np.ndarray, r2: np.ndarray, anchor: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Intersection points (tangency included) of circle pairs, each with its anchor disc."""
    d = c2 - c1
    dist_sq = d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]
    ok = dist_sq > 0
    dist = np.sqrt(np.where(ok, dist_sq, 1.0))
    a = (dist_sq + r1 * r1 - r2 * r2) / (2 * dist)
    h_sq = r1 * r1 - a * a
    ok &= h_sq >= -1e-12
    h = np.sqrt(np.clip(h_sq, 0.0, None))
    u = d / dist[:, None]
    base = c1 + a[:, None] * u
    normal = np.stack([-u[:, 1], u[:, 0]], axis=1) * h[:, None]
    points = np.concatenate([(base + normal)[ok], (base - normal)[ok]])
    return points, np.concatenate([anchor[ok], anchor[ok]])


def _circle_lines(
    c: np.ndarray, r: np.ndarray, anchor: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Intersections of circles with the four lines of the centre square, and four points on
    every circle (for a whole circle that meets nothing)."""
    points, anchors = [], []
    for line in (CENTRE_MIN, CENTRE_MAX):
        for k in (0, 1):
            off = line - c[:, k]
            s_sq = r * r - off * off
            ok = s_sq >= 0
            s = np.sqrt(s_sq[ok])
            for sign in (1.0, -1.0):
                p = np.empty((int(ok.sum()), 2))
                p[:, k] = line
                p[:, 1 - k] = c[ok, 1 - k] + sign * s
                points.append(p)
                anchors.append(anchor[ok])
    for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        points.append(c + r[:, None] * np.array([dx, dy], dtype=np.float64))
        anchors.append(anchor)
    return np.concatenate(points), np.concatenate(anchors)


def _passes(
    board: _Board, px: np.ndarray, py: np.ndarray, neighbours: np.ndarray, slack: bool
) -> np.ndarray:
    """For candidate centres with their possible neighbours `(P, K)`: legal (and not suicide if
    `board.safe`), exactly (`slack=False`) or with the documented slack."""
    tol = TOLERANCE_SQ if slack else 0.0
    edge = TOLERANCE_EDGE if slack else 0.0
    dx = board.x[neighbours] - px[:, None]
    dy = board.y[neighbours] - py[:, None]
    d2 = dx * dx + dy * dy
    ok = (d2 >= TOUCH_SQ - tol).all(axis=1)
    ok &= (px >= CENTRE_MIN - edge) & (px <= CENTRE_MAX + edge)
    ok &= (py >= CENTRE_MIN - edge) & (py <= CENTRE_MAX + edge)
    if board.safe:
        attackers = np.count_nonzero((d2 < RANGE_SQ - tol) & board.opponent[neighbours], axis=1)
        kills = ((d2 < RANGE_SQ + tol) & board.killable[neighbours]).any(axis=1)
        ok &= (attackers < DISAPPEAR_COUNT) | kills
    return ok


def _candidate_groups(
    centres: np.ndarray, is_opponent: np.ndarray, pairs: np.ndarray, safe: bool
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The arrangement's vertices and circle points, as (points (P, 2), anchor discs (P,))
    groups, cheapest and most often successful first."""
    n = len(centres)
    circle_disc = np.concatenate([np.arange(n), np.flatnonzero(is_opponent)])
    circle_r = np.concatenate(
        [np.full(n, TOUCH_DISTANCE), np.full(int(is_opponent.sum()), RANGE_DISTANCE)]
    )
    yield _circle_lines(centres[circle_disc], circle_r, circle_disc)
    if len(pairs):
        i, j = pairs[:, 0], pairs[:, 1]
        everyone = np.ones(len(i), dtype=bool)
        combos = [(i, TOUCH_DISTANCE, j, TOUCH_DISTANCE, everyone)]
        if safe:
            combos += [
                (i, TOUCH_DISTANCE, j, RANGE_DISTANCE, is_opponent[j]),
                (j, TOUCH_DISTANCE, i, RANGE_DISTANCE, is_opponent[i]),
                (i, RANGE_DISTANCE, j, RANGE_DISTANCE, is_opponent[i] & is_opponent[j]),
            ]
        for first, r1, second, r2, use in combos:
            m = int(use.sum())
            yield _circle_circle(
                centres[first[use]],
                np.full(m, r1),
                centres[second[use]],
                np.full(m, r2),
                first[use],
            )


def _find(position: Position, side: Colour, safe: bool) -> Placement | None:
    if position.winner is not None:
        return None
    centres = position.centres
    n = len(centres)
    far = np.array([1e9])
    is_opponent = position.colour_mask(side.opponent) if safe else np.zeros(n, dtype=bool)
    killable = is_opponent
    if safe and is_opponent.any():
        killable = is_opponent & (opponent_counts(position) >= DISAPPEAR_COUNT - 1)
    board = _Board(
        np.concatenate([centres[:, 0], far]),
        np.concatenate([centres[:, 1], far]),
        np.concatenate([is_opponent, [False]]),
        np.concatenate([killable, [False]]),
        safe,
    )
    corners = np.array(
        [
            [CENTRE_MIN, CENTRE_MIN],
            [CENTRE_MAX, CENTRE_MIN],
            [CENTRE_MAX, CENTRE_MAX],
            [CENTRE_MIN, CENTRE_MAX],
        ]
    )
    every = np.broadcast_to(np.arange(n), (4, n))
    found = _passes(board, corners[:, 0], corners[:, 1], every, slack=False)
    if found.any():
        k = int(np.flatnonzero(found)[0])
        return Placement(float(corners[k, 0]), float(corners[k, 1]), True)
    if n == 0:
        return None
    # every disc within reach of a candidate is within this distance of its anchor disc
    reach = (RANGE_DISTANCE if safe else TOUCH_DISTANCE) * 2 + 2 * max(_NUDGES)
    pairs = np.empty((0, 2), dtype=np.intp)
    if n > 1:
        from scipy.spatial import cKDTree

        found_pairs = cKDTree(centres).query_pairs(reach, output_type="ndarray")
        pairs = found_pairs.astype(np.intp).reshape(-1, 2)
    table = _neighbour_table(centres, pairs)
    fallback: Placement | None = None
    for points, anchors in _candidate_groups(centres, is_opponent, pairs, safe):
        inside = (
            (points[:, 0] >= CENTRE_MIN - TOLERANCE_EDGE)
            & (points[:, 0] <= CENTRE_MAX + TOLERANCE_EDGE)
            & (points[:, 1] >= CENTRE_MIN - TOLERANCE_EDGE)
            & (points[:, 1] <= CENTRE_MAX + TOLERANCE_EDGE)
        )
        points, anchors = points[inside], anchors[inside]
        start, size = 0, _FIRST_CHUNK
        while start < len(points):
            chunk = points[start : start + size]
            neighbours = table[anchors[start : start + size]]
            start, size = start + size, min(size * 4, _CHUNK)
            relaxed = _passes(board, chunk[:, 0], chunk[:, 1], neighbours, slack=True)
            if not relaxed.any():
                continue
            hits = np.flatnonzero(relaxed)
            witness = _exact_witness(board, chunk[hits], neighbours[hits])
            if witness is not None:
                return _verified(position, side, safe, witness)
            if fallback is None:
                fallback = Placement(float(chunk[hits[0], 0]), float(chunk[hits[0], 1]), False)
    return fallback


def _exact_witness(board: _Board, points: np.ndarray, neighbours: np.ndarray) -> np.ndarray | None:
    """A slack-passing candidate that passes exactly, as is or nudged in some direction."""
    exact = _passes(board, points[:, 0], points[:, 1], neighbours, slack=False)
    if exact.any():
        return points[int(np.flatnonzero(exact)[0])]
    points, neighbours = points[:_MAX_NUDGED], neighbours[:_MAX_NUDGED]
    angle = np.arange(_NUDGE_DIRECTIONS) * (2 * np.pi / _NUDGE_DIRECTIONS)
    unit = np.stack([np.cos(angle), np.sin(angle)], axis=1)
    steps = np.concatenate([unit * e for e in _NUDGES])
    nudged = (points[:, None, :] + steps[None, :, :]).reshape(-1, 2)
    nudged_neighbours = np.repeat(neighbours, len(steps), axis=0)
    exact = _passes(board, nudged[:, 0], nudged[:, 1], nudged_neighbours, slack=False)
    if exact.any():
        return nudged[int(np.flatnonzero(exact)[0])]
    return None


def _verified(position: Position, side: Colour, safe: bool, point: np.ndarray) -> Placement:
    """Double-check an exact witness with the judging functions themselves."""
    x, y = float(point[0]), float(point[1])
    probe = Position(position.discs, side, position.move_number)
    ok = check_placement(probe, x, y).legal
    if ok and safe:
        ok = judge_placement(probe, x, y).outcome is not Outcome.SUICIDE
    return Placement(x, y, ok)


def find_legal_placement(position: Position) -> Placement | None:
    """A legal placement for the side to move, or None if no disc fits anywhere (a tie).

    None is exact; a returned `Placement` with `exact=False` fits only within the slack.
    A finished game (`position.winner` set) has no legal placement."""
    return _find(position, position.to_move, safe=False)


def find_safe_placement(position: Position, colour: Colour | None = None) -> Placement | None:
    """A legal placement for `colour` (default: side to move) that is not suicide, or None.

    Non-suicide means the placed disc has at most 3 opponent discs within range, or it removes at
    least one opponent disc (a sacrifice is not suicide). None is exact; see the module notes."""
    side = position.to_move if colour is None else parse_colour(colour, "colour")
    if _find(position, side, safe=False) is None:
        return None  # no legal placement at all (cheap to decide): none that is safe either
    return _find(position, side, safe=True)


def has_legal_placement(position: Position) -> bool:
    """Whether any disc can still be placed (the tie rule: if not, the game is a tie)."""
    return find_legal_placement(position) is not None


def has_safe_placement(position: Position, colour: Colour | None = None) -> bool:
    """Whether `colour` (default: the side to move) has a legal placement that is not suicide."""
    return find_safe_placement(position, colour) is not None
