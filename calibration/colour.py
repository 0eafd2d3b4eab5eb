"""The colour model: how each set of pieces looks through this camera in this light.

Samples come from pieces the players show the camera at known board positions (Dition: a black
and a white disc; Domination: one piece of each player, or the standard 2-player start, whose
layout `standard_start_cells` gives). `fit_colour_model(samples, game=...)` summarises each
piece's pixels in CIE Lab (median and robust spread) and refuses colours that are too close to
separate: Domination's reader compares chromaticity, so its colours must differ in a*b*; Dition's
black and white must differ in lightness.

`ColourModel.vision_colours()` is the `{letter: BGR}` mapping `vision.domination.read_tops`
takes as `colours=`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from calibration.errors import ColourSampleError, ColoursTooCloseError, MalformedCalibrationError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from vision.camera import Intrinsics
    from vision.geometry import BoardFit

Bgr = tuple[int, int, int]
GAMES = ("dition", "domination")
DITION_PIECES = ("black", "white")

#: Sackson's 2-player start, rank 7 down to rank 2 over files b..g; "A" = first player
#: (the same layout as rules.domination.STANDARD_ROWS; a test checks they agree)
STANDARD_ROWS: tuple[str, ...] = ("AABBAA", "BBAABB", "AABBAA", "BBAABB", "AABBAA", "BBAABB")


@dataclass(frozen=True)
class ColourParams:
    """Acceptance limits and sampling of the colour model (shipped tuning as defaults)."""

    #: smallest distance between two pieces' median colours (CIE Lab units, in the compared
    #: channels: a*b* for Domination, L*a*b* for Dition)
    min_distance_lab: float = 12.0
    #: the distance must also exceed this many combined robust spreads (sigma) of the two
    min_separation_sigma: float = 4.0
    #: pixels needed per piece
    min_pixels: int = 30
    #: sampled annulus around a piece centre, as fractions of the piece radius (Dition discs
    #: have a grey centre dot of a quarter diameter: stay outside it)
    inner_radius: float = 0.45
    outer_radius: float = 0.75


@dataclass(frozen=True)
class PieceColour:
    """One piece set: median BGR and Lab, robust spread (sigma) per Lab channel, pixel count."""

    name: str
    bgr: tuple[float, float, float]
    lab: tuple[float, float, float]
    sigma_lab: tuple[float, float, float]
    pixels: int

    def to_dict(self) -> dict[str, Any]:
        return {"bgr": [round(v, 2) for v in self.bgr], "lab": [round(v, 3) for v in self.lab],
                "sigma_lab": [round(v, 3) for v in self.sigma_lab], "pixels": self.pixels}


@dataclass(frozen=True)
class ColourModel(Mapping[str, Bgr]):
    """The colours of one game's pieces as this camera sees them.

    It is also a read-only mapping {piece name: median BGR}, so `dict(model)` is the `colours`
    argument of `vision.domination.read_tops` (same as `vision_colours()`).
    """

    game: str
    pieces: tuple[PieceColour, ...]
    min_distance_lab: float

    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.pieces)

    def __getitem__(self, name: str) -> Bgr:
        for p in self.pieces:
            if p.name == name:
                return (round(p.bgr[0]), round(p.bgr[1]), round(p.bgr[2]))
        raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.pieces)

    def vision_colours(self) -> dict[str, Bgr]:
        """{name: BGR} for `vision.domination.read_tops(..., colours=...)`."""
        return dict(self)

    def classify(self, bgr: npt.ArrayLike) -> list[str]:
        """Nearest piece (in the compared Lab channels) for each of (N, 3) BGR colours."""
        import numpy as np

        lab = _to_lab(np.asarray(bgr, np.float64).reshape(-1, 3))[:, _channels(self.game)]
        refs = np.array([p.lab for p in self.pieces])[:, _channels(self.game)]
        d = np.linalg.norm(lab[:, None, :] - refs[None, :, :], axis=2)
        return [self.pieces[i].name for i in np.argmin(d, axis=1)]

    def to_dict(self) -> dict[str, Any]:
        return {"game": self.game, "min_distance_lab": round(self.min_distance_lab, 3),
                "pieces": {p.name: p.to_dict() for p in self.pieces}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ColourModel:
        if not isinstance(data, Mapping):
            raise MalformedCalibrationError(f"'colours' must be an object, got {type(data).__name__}")
        unknown = set(data) - {"game", "min_distance_lab", "pieces"}
        if unknown:
            raise MalformedCalibrationError(f"unknown keys in 'colours': {sorted(unknown)}")
        try:
            game = str(data["game"])
            pieces = tuple(
                PieceColour(str(name), _triple(p["bgr"]), _triple(p["lab"]),
                            _triple(p["sigma_lab"]), int(p["pixels"]))
                for name, p in dict(data["pieces"]).items())
            min_distance = float(data.get("min_distance_lab", 0.0))
        except KeyError as exc:
            raise MalformedCalibrationError(f"'colours' lacks the key {exc.args[0]!r}") from None
        except (TypeError, ValueError) as exc:
            raise MalformedCalibrationError(f"'colours' has a malformed value: {exc}") from None
        if game not in GAMES:
            raise MalformedCalibrationError(f"'colours.game' must be one of {GAMES}, got {game!r}")
        if len(pieces) < 2:
            raise MalformedCalibrationError("'colours' needs at least two pieces")
        return cls(game, pieces, min_distance)


def _triple(v: Any) -> tuple[float, float, float]:
    a, b, c = (float(x) for x in v)
    if not all(math.isfinite(x) for x in (a, b, c)):
        raise ValueError(f"non-finite colour {v!r}")
    return a, b, c


def _channels(game: str) -> list[int]:
    return [1, 2] if game == "domination" else [0, 1, 2]


def _to_lab(bgr: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """(N, 3) BGR 0..255 -> (N, 3) CIE L*a*b* (L 0..100)."""
    import cv2
    import numpy as np

    img = (np.clip(bgr, 0, 255) / 255.0).astype(np.float32).reshape(-1, 1, 3)
    return cv2.cvtColor(img, cv2.COLOR_BGR2Lab).reshape(-1, 3).astype(np.float64)


def fit_colour_model(samples: Mapping[str, npt.ArrayLike], *, game: str,
                     params: ColourParams = ColourParams()) -> ColourModel:
    """The colour model from {piece name: (N, 3) BGR pixels}. Raises `ColoursTooCloseError`
    naming the two pieces when any pair cannot be told apart, `ColourSampleError` for unusable
    samples."""
    import numpy as np

    if game not in GAMES:
        raise ColourSampleError(f"unknown game {game!r}: expected one of {', '.join(GAMES)}")
    if len(samples) < 2:
        raise ColourSampleError(f"a colour model needs at least two pieces, got {list(samples)}")
    if game == "dition" and set(samples) != set(DITION_PIECES):
        raise ColourSampleError(f"Dition pieces are 'black' and 'white', got {sorted(samples)}")
    if game == "domination":
        for name in samples:
            if not (isinstance(name, str) and len(name) == 1 and name.isalpha()):
                raise ColourSampleError(f"Domination pieces are one letter (G, R, B, Y), got {name!r}")
    pieces = []
    for name, pixels in samples.items():
        arr = np.asarray(pixels, np.float64).reshape(-1, 3)
        if len(arr) < params.min_pixels:
            raise ColourSampleError(f"piece {name!r}: {len(arr)} pixels sampled, need "
                                    f"{params.min_pixels} (is the piece in view?)")
        lab = _to_lab(arr)
        med_lab = np.median(lab, axis=0)
        sigma = 1.4826 * np.median(np.abs(lab - med_lab), axis=0)  # robust (MAD) spread
        med_bgr = np.median(arr, axis=0)
        pieces.append(PieceColour(str(name), _triple(med_bgr), _triple(med_lab),
                                  _triple(sigma), len(arr)))
    ch = _channels(game)
    space = "a*b*" if game == "domination" else "L*a*b*"
    closest = math.inf
    for i in range(len(pieces)):
        for j in range(i + 1, len(pieces)):
            a, b = pieces[i], pieces[j]
            d = float(np.linalg.norm(np.array(a.lab)[ch] - np.array(b.lab)[ch]))
            spread = float(np.linalg.norm(np.array(a.sigma_lab)[ch]) +
                           np.linalg.norm(np.array(b.sigma_lab)[ch]))
            if d >= params.min_distance_lab and d < params.min_separation_sigma * spread:
                wide = a if np.linalg.norm(a.sigma_lab) >= np.linalg.norm(b.sigma_lab) else b
                raise ColoursTooCloseError(
                    f"pieces {a.name!r} and {b.name!r} overlap in colour: {d:.1f} {space} units "
                    f"apart but their pixels spread over {spread:.1f} (need "
                    f"{params.min_separation_sigma:g} x less); are all the positions given for "
                    f"{wide.name!r} really {wide.name!r} pieces, and is the light even?")
            if d < params.min_distance_lab:
                raise ColoursTooCloseError(
                    f"pieces {a.name!r} and {b.name!r} are too close in colour to tell apart: "
                    f"{d:.1f} {space} units apart (need {params.min_distance_lab:g}, and "
                    f"{params.min_separation_sigma:g} x their spread {spread:.1f}); use pieces "
                    "of more different colours or better light")
            closest = min(closest, d)
    return ColourModel(game, tuple(pieces), closest)


def standard_start_cells(players: Sequence[str] = ("G", "R")) -> dict[str, str]:
    """{cell: letter} of Domination's standard 2-player start (first player = "A" blocks)."""
    if len(players) != 2:
        raise ColourSampleError(f"the standard start is for 2 players, got {list(players)}")
    a, b = players
    return {f"{file}{rank}": (a if letter == "A" else b)
            for row, rank in zip(STANDARD_ROWS, "765432")
            for letter, file in zip(row, "bcdefg")}


def cell_centre_board(cell: str) -> tuple[float, float]:
    files = "abcdefgh"
    if len(cell) != 2 or cell[0] not in files or cell[1] not in "12345678":
        raise ColourSampleError(f"bad cell name {cell!r}: expected a file a-h and a rank 1-8")
    return files.index(cell[0]) + 0.5, 8 - int(cell[1]) + 0.5


def sample_pieces(
    frame: npt.NDArray[np.uint8],
    board: BoardFit,
    positions_board: Mapping[str, Sequence[tuple[float, float]]],
    *,
    piece_diameter_board: float,
    intrinsics: Intrinsics | None = None,
    params: ColourParams = ColourParams(),
) -> dict[str, npt.NDArray[np.float64]]:
    """{piece name: (N, 3) BGR pixels} sampled in an annulus around each given board position
    (the pieces' centres on the board)."""
    import numpy as np

    from vision.geometry import board_to_image

    if not isinstance(frame, np.ndarray) or frame.ndim != 3 or frame.shape[2] != 3:
        raise ColourSampleError("colours are sampled from a BGR frame (H, W, 3)")
    h, w = frame.shape[:2]
    r = piece_diameter_board / 2
    radii = np.linspace(params.inner_radius * r, params.outer_radius * r, 4)
    angles = np.linspace(0, 2 * np.pi, 48, endpoint=False)
    ring = np.array([(rr * np.cos(a), rr * np.sin(a)) for rr in radii for a in angles])
    out: dict[str, np.ndarray] = {}
    for name, centres in positions_board.items():
        pts = np.concatenate([ring + np.asarray(c, np.float64) for c in centres]) \
            if centres else np.zeros((0, 2))
        px = board_to_image(pts, board, intrinsics) if len(pts) else np.zeros((0, 2))
        inside = (px[:, 0] >= 0) & (px[:, 0] <= w - 1) & (px[:, 1] >= 0) & (px[:, 1] <= h - 1)
        if len(px) and not inside.all():
            raise ColourSampleError(f"piece {name!r}: a sampled position lies outside the image")
        out[name] = _bilinear(frame, px)
    return out


def _bilinear(frame: npt.NDArray[np.uint8], px: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    import cv2
    import numpy as np

    if len(px) == 0:
        return np.zeros((0, 3))
    m = px.astype(np.float32).reshape(1, -1, 2)
    vals = cv2.remap(frame, m[..., 0].copy(), m[..., 1].copy(), cv2.INTER_LINEAR,
                     borderMode=cv2.BORDER_REPLICATE)
    return vals.reshape(-1, 3).astype(np.float64)


def colours_from_start(frame: npt.NDArray[np.uint8], board: BoardFit, *,
                       players: Sequence[str] = ("G", "R"), intrinsics: Intrinsics | None = None,
                       params: ColourParams = ColourParams(),
                       piece_diameter_board: float = 0.8) -> ColourModel:
    """The Domination colour model from a frame of the standard 2-player start position."""
    cells = standard_start_cells(players)
    positions: dict[str, list[tuple[float, float]]] = {p: [] for p in players}
    for cell, letter in cells.items():
        positions[letter].append(cell_centre_board(cell))
    samples = sample_pieces(frame, board, positions, piece_diameter_board=piece_diameter_board,
                            intrinsics=intrinsics, params=params)
    return fit_colour_model(samples, game="domination", params=params)
