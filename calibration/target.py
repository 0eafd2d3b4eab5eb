"""The ChArUco calibration target: its definition, its OpenCV board and its printed sheet.

The target uses `DICT_5X5_100`, a dictionary distinct from the board markers' `DICT_4X4_50`, so a
calibration target never looks like a board corner marker. The sheet is the target centred on an
A4 / Letter landscape page with a label and a 100 mm check bar below it; sheet coordinates are
mm from the page's top-left, y down.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from calibration.drawing import BLACK, GREY, Drawing, Item, Line, Rect, Text, marker_cells
from calibration.errors import PrintLayoutError

if TYPE_CHECKING:
    import cv2
    import numpy as np
    import numpy.typing as npt


@dataclass(frozen=True)
class CharucoSpec:
    """A ChArUco board: `squares` (columns, rows), square and marker sides in mm (the marker side
    includes its black border), the cv2.aruco dictionary by name. The defaults fit A4 and Letter
    landscape with 12 mm margins."""

    squares: tuple[int, int] = (9, 6)
    square_mm: float = 28.0
    marker_mm: float = 21.0
    dictionary: str = "DICT_5X5_100"

    def __post_init__(self) -> None:
        sx, sy = self.squares
        if not (3 <= sx <= 20 and 3 <= sy <= 20):
            raise PrintLayoutError(f"ChArUco squares must be 3..20 each, got {self.squares}")
        if not 0 < self.marker_mm < self.square_mm:
            raise PrintLayoutError(
                f"ChArUco marker_mm ({self.marker_mm}) must be positive and smaller than "
                f"square_mm ({self.square_mm})")
        if self.dictionary == "DICT_4X4_50":
            raise PrintLayoutError("the ChArUco target must not use DICT_4X4_50: the board "
                                   "corner markers use it")

    @property
    def size_mm(self) -> tuple[float, float]:
        return self.squares[0] * self.square_mm, self.squares[1] * self.square_mm

    def to_dict(self) -> dict[str, Any]:
        return {"squares": list(self.squares), "square_mm": self.square_mm,
                "marker_mm": self.marker_mm, "dictionary": self.dictionary}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CharucoSpec:
        return cls(tuple(data["squares"]), float(data["square_mm"]),  # type: ignore[arg-type]
                   float(data["marker_mm"]), str(data["dictionary"]))


def aruco_dictionary(name: str) -> cv2.aruco.Dictionary:
    import cv2

    try:
        return cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, name))
    except AttributeError:
        raise PrintLayoutError(f"unknown ArUco dictionary {name!r}") from None


def charuco_board(spec: CharucoSpec) -> cv2.aruco.CharucoBoard:
    """The OpenCV board, in mm, origin at the target's top-left corner, y down."""
    import cv2

    return cv2.aruco.CharucoBoard(spec.squares, spec.square_mm, spec.marker_mm,
                                  aruco_dictionary(spec.dictionary))


def target_items(spec: CharucoSpec, origin_mm: tuple[float, float] = (0.0, 0.0)) -> list[Item]:
    """The target as vector items: black squares, and ArUco markers centred in the others
    (exactly the layout `charuco_board(spec)` expects)."""
    import cv2
    import numpy as np

    board = charuco_board(spec)
    dictionary = aruco_dictionary(spec.dictionary)
    cells = dictionary.markerSize + 2
    ox, oy = origin_mm
    sx, sy = spec.squares
    s = spec.square_mm
    marked: set[tuple[int, int]] = set()
    items: list[Item] = []
    for marker_id, corners in zip(board.getIds().ravel(), board.getObjPoints()):
        c = np.asarray(corners, dtype=np.float64).reshape(4, 3)
        x0, y0 = float(c[:, 0].min()), float(c[:, 1].min())
        marked.add((int((x0 + spec.marker_mm / 2) // s), int((y0 + spec.marker_mm / 2) // s)))
        bits = cv2.aruco.generateImageMarker(dictionary, int(marker_id), cells)
        items += marker_cells(bits, (ox + x0, oy + y0), spec.marker_mm, tag=f"charuco:{marker_id}")
    squares: list[Item] = [
        Rect((ox + i * s, oy + j * s), (s, s), fill_bgr=BLACK, tag="charuco-square")
        for j in range(sy) for i in range(sx) if (i, j) not in marked
    ]
    return squares + items


def charuco_sheet(spec: CharucoSpec = CharucoSpec(), paper: str = "a4") -> Drawing:
    """The printable target on one landscape page (A4 or Letter)."""
    from calibration.pdf import PAPER_MM

    if paper not in PAPER_MM:
        raise PrintLayoutError(f"unknown paper {paper!r}: expected one of {sorted(PAPER_MM)}")
    ph, pw = PAPER_MM[paper]  # landscape
    tw, th = spec.size_mm
    if tw > pw - 16 or th > ph - 24:
        raise PrintLayoutError(f"a {tw:g} x {th:g} mm target does not fit {paper} landscape")
    ox, oy = (pw - tw) / 2, (ph - th) / 2 - 4
    items = target_items(spec, (ox, oy))
    base = oy + th + 8
    items += [
        Text((ox, base), f"ChArUco target {spec.squares[0]}x{spec.squares[1]}, squares "
             f"{spec.square_mm:g} mm, markers {spec.marker_mm:g} mm, {spec.dictionary}. Print at "
             "100%, glue flat on card.", 3.0, BLACK, tag="label"),
        Line((ox, base + 5), (ox + 100, base + 5), 0.3, BLACK, tag="scale-bar"),
        Line((ox, base + 3.5), (ox, base + 5), 0.3, BLACK),
        Line((ox + 100, base + 3.5), (ox + 100, base + 5), 0.3, BLACK),
        Text((ox + 103, base + 5), "100 mm", 2.5, GREY),
    ]
    return Drawing((pw, ph), tuple(items), title="ChArUco calibration target",
                   mm_per_unit=1.0, board_origin_mm=(ox, oy), page=True)


def target_texture(spec: CharucoSpec = CharucoSpec(), px_per_mm: float = 4.0,
                   quiet_mm: float = 10.0) -> npt.NDArray[np.uint8]:
    """The target alone with a white quiet border of `quiet_mm`, as a BGR image (for simulated
    frames; the target's top-left corner is at (quiet_mm, quiet_mm))."""
    from calibration.drawing import rasterize

    tw, th = spec.size_mm
    drawing = Drawing((tw + 2 * quiet_mm, th + 2 * quiet_mm),
                      tuple(target_items(spec, (quiet_mm, quiet_mm))), title="ChArUco target")
    return rasterize(drawing, px_per_mm)
