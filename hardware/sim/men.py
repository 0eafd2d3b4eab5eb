"""Draughts men, poker chips and plain counters as Domination pieces (issue 19).

``Men`` is a frozen description of a set of pieces (hashable: it keys the renderer's caches):
``kind`` "draughts" (ridged rim on the side, embossed rings on the top, a crown on the kings'
side), "chip" (edge stripes across the side and the top's rim, a printed inner ring) or
"counter" (plain, a thin bevel); ``crown_share`` of the draughts men lie crown up. Each piece is
a `hardware.sim.pieces.Cylinder` carrying a `ManDecor`, which `draw_cylinders` calls to paint
the side and the top over the plain cylinder (in the pieces' depth order, so nearer stacks
hide it). Gloss is the renderer's glare (`RenderOptions.glare`) on every piece face.

``PIECE_COLOURS`` names the colours people own (black, white, red, ...), BGR;
``Men.random(rng)`` and ``random_men_colours(rng, n, board)`` draw a set: 2-4 colours,
black among them often, one close to a square's colour sometimes.
"""

from __future__ import annotations

import dataclasses
import math
import zlib
from dataclasses import dataclass
from typing import Any, Literal

import cv2
import numpy as np

from hardware.sim.camera import SimCamera
from hardware.sim.chessboard import ChessBoard, cut_grid_cells, description_dict
from hardware.sim.pieces import Cylinder, circle_world

Kind = Literal["draughts", "chip", "counter"]
KINDS: tuple[str, ...] = ("draughts", "chip", "counter")
BGR = tuple[int, int, int]

#: piece colours people own, BGR (letters as the tests and benchmark name them)
PIECE_COLOURS: dict[str, BGR] = {
    "K": (34, 34, 38),  # black
    "W": (206, 224, 232),  # white / cream
    "R": (42, 46, 178),  # red
    "B": (168, 86, 34),  # blue
    "G": (58, 136, 44),  # green
    "Y": (38, 184, 222),  # yellow
    "N": (48, 88, 150),  # brown (wood)
}

_SHIFT = 4
_N = 72


def _scaled(bgr: BGR, k: float, add: float = 0.0) -> tuple[int, int, int]:
    return tuple(int(np.clip(c * k + add, 0, 255)) for c in bgr)  # type: ignore[return-value]


def _fixed(px: np.ndarray) -> np.ndarray:
    return np.round(np.asarray(px) * (1 << _SHIFT)).astype(np.int32).reshape(-1, 1, 2)


@dataclass(frozen=True)
class ManDecor:
    """How one piece is painted beyond its plain cylinder (see the module)."""

    kind: Kind
    crown: bool = False
    ridges: int = 40
    stripes: int = 6
    stripe_bgr: BGR = (232, 234, 236)
    phase: float = 0.0  # rotation of the stripes and the crown, radians

    def _accent(self, bgr: BGR, k: float) -> BGR:
        """A darker shade of `bgr` on light pieces, a lighter one on dark pieces (a groove
        catches light on black plastic)."""
        if sum(bgr) < 240:
            return _scaled(bgr, 1.0 + (1.0 - k) * 2.5, 14.0)
        return _scaled(bgr, k)

    def draw_side(self, canvas: np.ndarray, camera: SimCamera, piece: Cylinder,
                  bottom_px: np.ndarray, top_px: np.ndarray) -> None:
        """Ridges (draughts) or stripes (chips) on the camera-facing part of the side."""
        if self.kind == "counter":
            return
        to_cam = camera.centre_world[:2] - np.array([piece.x, piece.y])
        norm = float(np.linalg.norm(to_cam)) or 1.0
        z_top = piece.z_base - piece.thickness
        if self.kind == "draughts":
            ang = self.phase + np.arange(self.ridges) * (2 * math.pi / self.ridges)
            facing = np.cos(ang) * to_cam[0] + np.sin(ang) * to_cam[1] > 0.25 * norm
            ang = ang[facing]
            if not ang.size:
                return
            r = piece.radius
            pts = np.concatenate([
                np.stack([piece.x + r * np.cos(ang), piece.y + r * np.sin(ang), np.full(ang.size, z)], 1)
                for z in (piece.z_base, z_top)
            ])
            px = camera.project(pts).reshape(2, -1, 2)
            colour = self._accent(piece.side_upper_bgr, 0.62)
            for a, b in zip(px[0], px[1]):
                cv2.line(canvas, tuple(_fixed(a)[0, 0]), tuple(_fixed(b)[0, 0]), colour, 1,
                         cv2.LINE_AA, _SHIFT)
            return
        width = 2 * math.pi / self.stripes * 0.32
        for k in range(self.stripes):
            a0 = self.phase + k * 2 * math.pi / self.stripes
            mid = a0 + width / 2
            if math.cos(mid) * to_cam[0] + math.sin(mid) * to_cam[1] <= 0.15 * norm:
                continue
            ang = np.linspace(a0, a0 + width, 5)
            ring = [np.stack([piece.x + piece.radius * np.cos(ang), piece.y + piece.radius * np.sin(ang),
                              np.full(ang.size, z)], 1) for z in (piece.z_base, z_top)]
            px = camera.project(np.concatenate([ring[0], ring[1][::-1]]))
            cv2.fillPoly(canvas, [_fixed(px)], _scaled(self.stripe_bgr, 0.86), cv2.LINE_AA, _SHIFT)

    def draw_top(self, canvas: np.ndarray, camera: SimCamera, piece: Cylinder) -> None:
        """Embossed rings and a crown (draughts), rim stripes and a printed ring (chips)."""
        if self.kind == "counter":
            return
        z = piece.z_base - piece.thickness
        top = piece.top_bgr

        def disc(frac: float, colour: BGR) -> None:
            px = camera.project(circle_world(piece.x, piece.y, piece.radius * frac, z))
            cv2.fillPoly(canvas, [_fixed(px)], colour, cv2.LINE_AA, _SHIFT)

        if self.kind == "draughts":
            for outer, inner, k in ((0.88, 0.81, 0.74), (0.58, 0.53, 1.12), (0.31, 0.27, 0.82)):
                disc(outer, self._accent(top, k) if k < 1 else _scaled(top, k, 6))
                disc(inner, top)
            if self.crown:
                self._crown(canvas, camera, piece, z)
            return
        for k in range(self.stripes):
            a0 = self.phase + k * 2 * math.pi / self.stripes
            ang = np.linspace(a0, a0 + 2 * math.pi / self.stripes * 0.32, 5)
            r = piece.radius
            pts = np.concatenate([
                np.stack([piece.x + r * np.cos(ang), piece.y + r * np.sin(ang), np.full(5, z)], 1),
                np.stack([piece.x + 0.8 * r * np.cos(ang[::-1]), piece.y + 0.8 * r * np.sin(ang[::-1]),
                          np.full(5, z)], 1),
            ])
            cv2.fillPoly(canvas, [_fixed(camera.project(pts))], self.stripe_bgr, cv2.LINE_AA, _SHIFT)
        disc(0.72, _scaled(self.stripe_bgr, 0.95))
        disc(0.68, top)

    def _crown(self, canvas: np.ndarray, camera: SimCamera, piece: Cylinder, z: float) -> None:
        """A five-pointed crown, 0.5 R wide, in the groove's shade."""
        xs = np.array([-1.0, -1.0, -0.5, 0.0, 0.5, 1.0, 1.0])
        ys = np.array([0.6, -0.5, 0.05, -0.7, 0.05, -0.5, 0.6])
        s = 0.36 * piece.radius
        c, sn = math.cos(self.phase), math.sin(self.phase)
        pts = np.stack([piece.x + s * (c * xs - sn * ys), piece.y + s * (sn * xs + c * ys),
                        np.full(xs.size, z)], 1)
        cv2.fillPoly(canvas, [_fixed(camera.project(pts))], self._accent(piece.top_bgr, 0.62),
                     cv2.LINE_AA, _SHIFT)


@dataclass(frozen=True)
class Men:
    """A set of pieces: their kind, size (board units), decoration and placement scatter."""

    kind: Kind = "draughts"
    diameter: float = 0.8
    crown_share: float = 0.0
    ridges: int = 40
    stripes: int = 6
    stripe_bgr: BGR = (232, 234, 236)
    #: how far off its cell's centre a piece lies (board units: normal sigma, clipped at 2.8 x)
    jitter: float = 0.018
    seed: int = 0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"Men.kind must be one of {KINDS}, got {self.kind!r}")
        if not 0.3 <= self.diameter <= 0.95:
            raise ValueError(f"Men.diameter must be in [0.3, 0.95] squares, got {self.diameter}")
        if not 0.0 <= self.crown_share <= 1.0:
            raise ValueError(f"Men.crown_share must be in [0, 1], got {self.crown_share}")
        if not 0.0 <= self.jitter <= 0.05:
            raise ValueError(f"Men.jitter must be in [0, 0.05] squares, got {self.jitter}")
        object.__setattr__(self, "stripe_bgr", tuple(int(c) for c in self.stripe_bgr))

    def piece(self, x: float, y: float, z_base: float, thickness: float, bgr: BGR, key: str) -> Cylinder:
        """One piece of colour `bgr`; `key` (stable per piece) picks its crown and rotation."""
        r = np.random.default_rng(zlib.crc32(f"{self.seed}:{key}".encode()))
        decor = ManDecor(
            self.kind,
            crown=bool(self.kind == "draughts" and r.random() < self.crown_share),
            ridges=self.ridges,
            stripes=self.stripes,
            stripe_bgr=self.stripe_bgr,
            phase=float(r.uniform(0, 2 * math.pi)),
        )
        side = _scaled(bgr, 0.8)
        rim = None if self.kind == "chip" else _scaled(bgr, 0.62 if sum(bgr) >= 240 else 1.5, 6)
        return Cylinder(x, y, self.diameter / 2, z_base, thickness, tuple(int(c) for c in bgr),  # type: ignore[arg-type]
                        side_upper_bgr=side, side_lower_bgr=side, rim_bgr=rim, decor=decor)

    def replace(self, **changes: Any) -> Men:
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return description_dict(self)

    @classmethod
    def random(cls, rng: np.random.Generator, **changes: Any) -> Men:
        kind = KINDS[int(rng.choice(3, p=[0.6, 0.25, 0.15]))]
        out = cls(
            kind=kind,  # type: ignore[arg-type]
            diameter=float(rng.uniform(0.74, 0.84)),
            crown_share=float(rng.uniform(0.0, 0.5)) if kind == "draughts" else 0.0,
            ridges=int(rng.integers(28, 48)),
            stripes=int(rng.choice([4, 6, 8])),
            stripe_bgr=(232, 234, 236) if rng.random() < 0.7 else (40, 40, 44),
            jitter=float(rng.uniform(0.012, 0.03)),
            seed=int(rng.integers(1 << 30)),
        )
        return out.replace(**changes) if changes else out


#: piece colours of one set differ at least this much (CIE76 delta E): players tell their men
#: apart at a glance (2 is barely visible side by side; black and charcoal grey are 5 apart)
MIN_PIECE_DELTA_E = 20.0


def delta_e(a_bgr: BGR, b_bgr: BGR) -> float:
    """CIE76 colour difference of two BGR colours (sRGB taken as is, L* 0-100)."""
    lab = cv2.cvtColor(np.array([[a_bgr, b_bgr]], np.float32) / 255.0, cv2.COLOR_BGR2LAB)[0]
    return float(np.linalg.norm(lab[0] - lab[1]))


def random_men_colours(rng: np.random.Generator, n: int, board: ChessBoard | None = None) -> dict[str, BGR]:
    """`n` (2-4) piece colours by letter: black and white half the time, else black or white
    with others; with `board`, one colour is sometimes replaced by one close to a square's (a
    little lighter or darker), as long as it stays `MIN_PIECE_DELTA_E` from the other colours
    (else the other square's, else none)."""
    if not 2 <= n <= 4:
        raise ValueError(f"number of piece colours must be 2..4, got {n}")
    letters = list(PIECE_COLOURS)
    first = ["K", "W"] if rng.random() < 0.5 else [["K", "W"][int(rng.integers(2))]]
    rest = [c for c in letters if c not in first]
    chosen = first + [str(c) for c in rng.choice(rest, size=n - len(first), replace=False)] \
        if n > len(first) else first[:n]
    out = {c: PIECE_COLOURS[c] for c in chosen}
    if board is not None and rng.random() < 0.35:
        light_first = rng.random() < 0.5
        u = float(rng.random())
        letter = chosen[-1]
        others = [v for c, v in out.items() if c != letter]
        for square in ((board.light_bgr, board.dark_bgr) if light_first else (board.dark_bgr, board.light_bgr)):
            lo, hi = (0.82, 0.92) if sum(square) > 300 else (1.15, 1.3)
            close = _scaled(square, lo + (hi - lo) * u)
            if all(delta_e(close, o) >= MIN_PIECE_DELTA_E for o in others):
                out[letter] = close
                break
    return out


def spare_pieces(board: ChessBoard, men: Men, colours: dict[str, BGR], thickness: float) -> list[list[Cylinder]]:
    """Pieces blocking the cut corners (`board.corners == "pieces"`): one or two spare men on
    each of the 12 cut squares, stacks in the `colours` given; [] for other boards."""
    if board.corners != "pieces" or not colours:
        return []
    r = np.random.default_rng(board.seed + 2)
    letters = sorted(colours)
    groups = []
    for col, row in cut_grid_cells():
        n = int(r.integers(1, 3))
        group = []
        for i in range(n):
            bgr = colours[letters[int(r.integers(len(letters)))]]
            off = r.normal(0, 0.03, 2).clip(-0.08, 0.08)
            group.append(men.piece(col + 0.5 + off[0], row + 0.5 + off[1], -i * thickness, thickness,
                                   bgr, f"spare:{col}:{row}:{i}"))
        groups.append(group)
    return groups


def random_chess_table(rng: np.random.Generator, drawn: bool = False) -> tuple[ChessBoard, Men, dict[str, BGR]]:
    """A chessboard (`drawn`: an 8x8 drawn as lines, `ChessBoard.random_drawn`), a set of men and
    their 2-4 colours, as `ChessBoard.random`, `Men.random` and `random_men_colours` draw them
    (for tests, the benchmark and demos)."""
    board = ChessBoard.random_drawn(rng) if drawn else ChessBoard.random(rng)
    men = Men.random(rng)
    return board, men, random_men_colours(rng, int(rng.integers(2, 5)), board)
