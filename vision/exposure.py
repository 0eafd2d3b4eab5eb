"""Over-exposure on the board: where the sensor clipped the board at its white (issue 21).

A white disc on board clipped at the sensor's white in all three channels keeps no face that
differs from the board: only its side band and its shadow's ring are left to read it by, and
where even those clip the disc leaves no trace at all. That is an exposure fault (a lamp's hot
spot, a camera exposing for a dark room), which the players can fix and the reader cannot:
`overexposure` measures it so that `referee detect` and the page can say where.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vision.camera import Intrinsics
from vision.dition import DiscParams
from vision.geometry import BoardFit, board_intrinsics, check_frame, rectify

#: the board is looked at this coarsely (pixels per board unit, a disc's diameter): the clipped
#: patches that matter are a disc wide or wider
SCALE_PX_PER_UNIT = 8.0


@dataclass(frozen=True)
class Overexposure:
    """`share`: of the board's area, the part clipped at the sensor's white in all three channels
    over at least a disc's width (paper a white disc could lie on unseen; a white face clipped
    alone on darker paper is no such patch); `box_board` (x0, y0, x1, y1): where, in board units
    (None when nothing is); `disc_areas`: that part's area in discs' areas."""

    share: float
    box_board: tuple[float, float, float, float] | None
    disc_areas: float

    @property
    def warning(self) -> str | None:
        """What to tell the players, or None when no patch of a disc's area is clipped."""
        if self.box_board is None or self.disc_areas < 1.0:
            return None
        x0, y0, x1, y1 = self.box_board
        return (f"over-exposed: {self.share:.0%} of the board is clipped at the sensor's white "
                f"(board x {x0:.1f}-{x1:.1f}, y {y0:.1f}-{y1:.1f}); white discs there may be missed: "
                f"dim the lamp or move it, or lower the camera's exposure")

    def to_dict(self) -> dict[str, object]:
        return {"share": round(self.share, 4), "disc_areas": round(self.disc_areas, 1),
                "box_board": None if self.box_board is None else [round(v, 2) for v in self.box_board]}


def overexposure(frame: np.ndarray, board: BoardFit, *, intrinsics: Intrinsics | None = None,
                 params: DiscParams | None = None) -> Overexposure:
    """How much of the board in `frame` (BGR uint8) is clipped at the sensor's white: pixels
    whose darkest channel is at `params.clip_level` or above (the reader's own test of a clipped
    face), kept where they fill a disc-wide round patch (a morphological opening by a disc; a
    single clipped white face on paper that is not clipped is read by its contrast). A grey frame
    is taken as its one channel. `params`: the reader's (its `clip_level`, its disc's diameter)."""
    import cv2

    params = params if params is not None else DiscParams()
    check_frame(frame)
    s = SCALE_PX_PER_UNIT
    rect = rectify(frame, board, s, 0.0, board_intrinsics(board, intrinsics))
    darkest = rect if rect.ndim == 2 else rect.min(axis=2)
    clipped = (darkest >= params.clip_level).astype(np.uint8)
    d = max(3, round(params.disc_diameter_board * s) | 1)
    patches = cv2.morphologyEx(clipped, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (d, d)))
    n = int(patches.sum())
    if n == 0:
        return Overexposure(0.0, None, 0.0)
    ys, xs = np.nonzero(patches)
    box = (float(xs.min()) / s, float(ys.min()) / s, float(xs.max() + 1) / s, float(ys.max() + 1) / s)
    disc_px = np.pi / 4 * (params.disc_diameter_board * s) ** 2
    return Overexposure(n / patches.size, box, n / disc_px)
