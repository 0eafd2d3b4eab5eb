"""Dition rules: hypothesis properties (symmetry, translation, locality, no cascade, text forms).

Positions come from random play (so they are settled, as on a real board) inside a small window,
so that discs interact a lot. Coordinates are multiples of 1/16: then mirroring (20 - x),
transposing and translating by multiples of 1/16 are exact in float64, and so is every squared
distance, which makes exact-threshold cases as likely as any other and the properties exact.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from hypothesis import event, given, settings
from hypothesis import strategies as st

from rules import dition as rd

B, W = rd.Colour.BLACK, rd.Colour.WHITE
STEP = 1 / 16
SPAN = 6.0  # side of the play window, board units
N_SPAN = int(SPAN / STEP)

Transform = Callable[[float, float], tuple[float, float]]

#: the 8 symmetries of the board square [0, 20]^2
SYMMETRIES: list[Transform] = [
    lambda x, y: (x, y),
    lambda x, y: (20.0 - x, y),
    lambda x, y: (x, 20.0 - y),
    lambda x, y: (20.0 - x, 20.0 - y),
    lambda x, y: (y, x),
    lambda x, y: (20.0 - y, x),
    lambda x, y: (y, 20.0 - x),
    lambda x, y: (20.0 - y, 20.0 - x),
]


@st.composite
def windows(draw: st.DrawFn, margin: float = 0.0) -> tuple[float, float]:
    lo = int((rd.CENTRE_MIN + margin) / STEP)
    hi = int((rd.CENTRE_MAX - margin - SPAN) / STEP)
    return draw(st.integers(lo, hi)) * STEP, draw(st.integers(lo, hi)) * STEP


@st.composite
def lattice_boards(draw: st.DrawFn, margin: float = 0.0) -> tuple[rd.Position, tuple[float, float]]:
    """A settled position from a jittered lattice cluster (each site empty, black or white; then
    every disc with 4+ opponents in range removed at once), the side to move, and a point: a
    free lattice site or a point near a disc, where the verdicts are interesting."""
    ox, oy = draw(windows(margin))
    pitch = draw(st.sampled_from([16, 17, 18, 20, 24]))  # in 1/16 units: 1 .. 1.5
    sites = (N_SPAN // pitch) + 1
    block = draw(st.sampled_from([1, 2, 3]))  # colours come in blocks: fronts between them
    blocks = (sites + block - 1) // block
    colours = draw(st.lists(st.sampled_from("bw"), min_size=blocks**2, max_size=blocks**2))
    holes = draw(
        st.lists(st.sampled_from([True, False, False]), min_size=sites**2, max_size=sites**2)
    )
    kinds = [
        "." if holes[k] else colours[(k // sites // block) * blocks + (k % sites) // block]
        for k in range(sites * sites)
    ]
    jitter = st.integers(-2, 2)
    discs: list[rd.Disc] = []
    free: list[tuple[float, float]] = []
    for k, kind in enumerate(kinds):
        x = ox + (k % sites) * pitch * STEP
        y = oy + (k // sites) * pitch * STEP
        if kind == ".":
            free.append((x, y))
            continue
        x += draw(jitter) * STEP
        y += draw(jitter) * STEP
        if rd.on_board(x, y) and all(math.dist((x, y), (d.x, d.y)) >= 1.0 for d in discs):
            discs.append(rd.Disc(x, y, B if kind == "b" else W))
    doomed = set(rd.status(discs).should_have_disappeared)
    kept = tuple(d for i, d in enumerate(discs) if i not in doomed)
    position = rd.Position(kept, draw(st.sampled_from([B, W])), draw(st.integers(1, 99)))
    choice = draw(st.integers(0, 3))
    if choice >= 2 and free:
        return position, free[draw(st.integers(0, len(free) - 1))]
    if choice == 1 and kept:
        anchor = kept[draw(st.integers(0, len(kept) - 1))]
        point = (
            anchor.x + draw(st.integers(-36, 36)) * STEP,
            anchor.y + draw(st.integers(-36, 36)) * STEP,
        )
        if margin == 0.0 or (ox <= point[0] <= ox + SPAN and oy <= point[1] <= oy + SPAN):
            return position, point
    return position, (
        ox + draw(st.integers(0, N_SPAN)) * STEP,
        oy + draw(st.integers(0, N_SPAN)) * STEP,
    )


@st.composite
def random_play(draw: st.DrawFn, margin: float = 0.0) -> tuple[rd.Position, tuple[float, float]]:
    """A position from random alternating play in a window, and a further point in it."""
    ox, oy = draw(windows(margin))
    cells = st.tuples(st.integers(0, N_SPAN), st.integers(0, N_SPAN))
    position = rd.Position.empty()
    for i, j in draw(st.lists(cells, max_size=40)):
        x, y = ox + i * STEP, oy + j * STEP
        if rd.check_placement(position, x, y).legal:
            after, verdict = rd.apply_placement(position, x, y)
            if verdict.outcome is not rd.Outcome.SUICIDE:  # keep the game going
                position = after
    i, j = draw(cells)
    return position, (ox + i * STEP, oy + j * STEP)


#: dyadic offsets (in 1/16 units) at distance 1 .. 2.0625: where range and touching are decided
RING = [(i, j) for i in range(-33, 34) for j in range(-33, 34) if 256 <= i * i + j * j <= 33 * 33]


@st.composite
def motifs(draw: st.DrawFn, margin: float = 0.0) -> tuple[rd.Position, tuple[float, float]]:
    """A tactical scene round a placement point P: opponent discs near P, discs of the mover
    near those (supporters), settled; P is the window centre."""
    ox, oy = draw(windows(margin))
    px, py = ox + SPAN / 2, oy + SPAN / 2
    mover = draw(st.sampled_from([B, W]))
    offsets = st.sampled_from(RING)
    discs: list[rd.Disc] = []

    def add(x: float, y: float, colour: rd.Colour) -> None:
        if (
            rd.on_board(x, y)
            and math.dist((x, y), (px, py)) >= 1.0
            and all(math.dist((x, y), (d.x, d.y)) >= 1.0 for d in discs)
        ):
            discs.append(rd.Disc(x, y, colour))

    for _ in range(draw(st.sampled_from([6, 5, 7, 8, 3]))):
        i, j = draw(offsets)
        add(px + i * STEP, py + j * STEP, mover.opponent)
    targets = tuple(discs)  # supporters are added to `discs` in the loop
    for target in targets:
        for _ in range(draw(st.sampled_from([3, 4, 2, 5, 0]))):
            i, j = draw(offsets)
            add(target.x + i * STEP, target.y + j * STEP, mover)
    doomed = set(rd.status(discs).should_have_disappeared)
    kept = tuple(d for i, d in enumerate(discs) if i not in doomed)
    return rd.Position(kept, mover, draw(st.integers(1, 99))), (px, py)


def played(margin: float = 0.0) -> st.SearchStrategy[tuple[rd.Position, tuple[float, float]]]:
    return st.one_of(motifs(margin), motifs(margin), lattice_boards(margin), random_play(margin))


def transformed(position: rd.Position, f: Transform) -> rd.Position:
    return position.with_discs(rd.Disc(*f(d.x, d.y), d.colour) for d in position.discs)


def summary(position: rd.Position, x: float, y: float) -> tuple:
    legality = rd.check_placement(position, x, y)
    if not legality.legal:
        return ("illegal", legality.reason, legality.conflicts)
    v = rd.judge_placement(position, x, y)
    return (v.outcome, v.removed, v.placed_removed, v.winner, v.opponents_in_range)


def naive_disappearing(discs: list[rd.Disc]) -> set[int]:
    """The rule read literally on the whole board: every disc with 4+ opponents within range."""
    out = set()
    for i, a in enumerate(discs):
        near = sum(
            1
            for j, b in enumerate(discs)
            if j != i and b.colour is not a.colour and math.dist((a.x, a.y), (b.x, b.y)) < 2.0
        )
        if near >= 4:
            out.add(i)
    return out


@settings(max_examples=150, deadline=None)
@given(played())
def test_invariant_under_the_8_symmetries(case: tuple[rd.Position, tuple[float, float]]) -> None:
    position, (x, y) = case
    expected = summary(position, x, y)
    for f in SYMMETRIES[1:]:
        assert summary(transformed(position, f), *f(x, y)) == expected


def near_a_threshold(position: rd.Position, x: float, y: float) -> bool:
    """Whether some distance (between discs or to the placement) is within 1e-9 of 1 or 2."""
    points = [(d.x, d.y) for d in position.discs] + [(x, y)]
    for k, p in enumerate(points):
        for q in points[k + 1 :]:
            d2 = (p[0] - q[0]) ** 2 + (p[1] - q[1]) ** 2
            if abs(d2 - 1.0) < 1e-9 or abs(d2 - 4.0) < 1e-9:
                return True
    return False


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(5.0, 9.0), st.floats(5.0, 9.0), st.sampled_from([B, W])), max_size=14
    ),
    st.floats(5.0, 9.0),
    st.floats(5.0, 9.0),
    st.sampled_from([B, W]),
)
def test_symmetries_with_arbitrary_floats(items, x: float, y: float, to_move) -> None:
    """Off the 1/16 grid, mirroring rounds (20 - x): verdicts agree unless a distance lies within
    1e-9 of a threshold, where the rounding may legitimately tip it."""
    position = rd.Position(tuple(rd.Disc(a, b, c) for a, b, c in items), to_move)
    expected = summary(position, x, y)
    for f in SYMMETRIES[1:]:
        image = transformed(position, f)
        fx, fy = f(x, y)
        if near_a_threshold(position, x, y) or near_a_threshold(image, fx, fy):
            continue
        assert summary(image, fx, fy) == expected


@settings(max_examples=150, deadline=None)
@given(played(margin=2.0), st.integers(-32, 32), st.integers(-32, 32))
def test_invariant_under_translation_away_from_edges(
    case: tuple[rd.Position, tuple[float, float]], tx: int, ty: int
) -> None:
    position, (x, y) = case
    dx, dy = tx * STEP, ty * STEP  # |shift| <= 2 keeps the window on the board
    moved = transformed(position, lambda a, b: (a + dx, b + dy))
    assert summary(moved, x + dx, y + dy) == summary(position, x, y)


@settings(max_examples=250, deadline=None)
@given(played())
def test_removed_discs_are_near_opponents_or_the_placed_disc(
    case: tuple[rd.Position, tuple[float, float]],
) -> None:
    position, (x, y) = case
    if not rd.check_placement(position, x, y).legal:
        return
    verdict = rd.judge_placement(position, x, y)
    for i in verdict.removed:
        disc = position.discs[i]
        assert disc.colour is position.to_move.opponent
        assert math.dist((disc.x, disc.y), (x, y)) < 2.0
    assert verdict.placed_removed is (len(verdict.opponents_in_range) >= 4)
    assert set(verdict.removed) <= set(verdict.opponents_in_range)


@settings(max_examples=250, deadline=None)
@given(played())
def test_no_cascade_simultaneous_removal_matches_the_literal_rule(
    case: tuple[rd.Position, tuple[float, float]],
) -> None:
    """On a settled board, the verdict is the literal rule evaluated once on the board with the
    new disc, and the board after removal is settled again: nothing further disappears."""
    position, (x, y) = case
    assert rd.status(position).valid
    if not rd.check_placement(position, x, y).legal:
        return
    after, verdict = rd.apply_placement(position, x, y)
    event(f"outcome {verdict.outcome.value}")
    board = list(position.discs) + [rd.Disc(x, y, position.to_move)]
    literal = naive_disappearing(board)
    placed = len(position.discs)
    assert set(verdict.removed) == literal - {placed}
    assert verdict.placed_removed is (placed in literal)
    assert not rd.status(after).should_have_disappeared
    assert len(after.discs) == len(board) - len(literal)
    kinds = {
        (False, False): rd.Outcome.PLACED,
        (False, True): rd.Outcome.CAPTURE,
        (True, True): rd.Outcome.SACRIFICE,
        (True, False): rd.Outcome.SUICIDE,
    }
    assert verdict.outcome is kinds[(verdict.placed_removed, bool(verdict.removed))]


finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6)
discs = st.builds(rd.Disc, finite, finite, st.sampled_from([B, W]))


@given(
    st.lists(discs, max_size=30),
    st.sampled_from([B, W]),
    st.integers(1, 10_000),
    st.sampled_from([None, B, W]),
)
def test_text_round_trip(items: list[rd.Disc], to_move: rd.Colour, move: int, winner) -> None:
    position = rd.Position(tuple(items), to_move, move, winner)
    text = position.to_text()
    again = rd.Position.from_text(text)
    assert again == position
    assert again.to_text() == text


@settings(max_examples=100, deadline=None)
@given(played())
def test_arrays_carried_over_by_apply_equal_rebuilt_ones(
    case: tuple[rd.Position, tuple[float, float]],
) -> None:
    position, (x, y) = case
    position.centres, position.is_black  # noqa: B018 - build the caches that apply carries over
    if not rd.check_placement(position, x, y).legal:
        return
    after, _ = rd.apply_placement(position, x, y)
    rebuilt = rd.Position(after.discs)
    assert (after.centres == rebuilt.centres).all() and after.centres.shape == rebuilt.centres.shape
    assert (after.is_black == rebuilt.is_black).all() and after.is_black.dtype == bool
