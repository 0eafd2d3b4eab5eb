"""Read every Domination stack: the colour on top (or empty) and how tall it is.

Stage function: `read_tops(frame, board, params=TopsParams(), *, colours=None, intrinsics=None)`.

How it works. A stack of k discs has its top face `k * thickness` above the board, so in a
perspective view the top appears displaced away from the camera's nadir and slightly enlarged.
For every cell the module projects, through a camera model, the top-face circle a stack of height
1..5 would show and samples the frame along normals of those circles. Each hypothesis (height, and
a small image shift because real pieces never sit exactly centred) is scored by how strongly a
colour edge lies on its circle while none lies inside it. The best one is refined by robust least
squares on the sub-pixel edge positions around the circle. The predicted outline along each
sampling line is where the projected circle crosses that line (a top displaced sideways crosses a
line nearer its middle than its rim point does). On the far side, where the top face is the stack's
outline, the edge is the centroid of the edge strength 2.5 px either side of the innermost edge
(stable where a rim line splits it in two), expected further out the more the rim's outer flank
(rim to what lies beyond) weighs against its inner one (the stack's median share, which depends on
the top's colour against the board); on the near side, where the top meets its own side
band, the edge is where the colour first darkens off the top's own colour (the side band's shading
and what lies beyond it do not move that). Unknowns: height, shift (held by the prior of how far
pieces sit off-centre) and the near side's offset (held near its shipped value). This gives the
height and its uncertainty; an edge offset common to the whole frame (blur, light), which near the
camera's nadir would read as height, is fitted jointly over the occupied cells and taken off.
The top colour is read inside the chosen top face, after white-balancing the frame on the board's
light squares, as the nearest hue angle; a cell is empty when the patch at its floor is as grey as
the board.
Everything that depends only on the board fit, camera model, frame size and parameters is cached
(`_geometry`): the referee reads every settled frame on the same board fit.

Camera model: with `intrinsics` the board pose comes from `cv2.solvePnP` on the four board corners
(heights are then reported). Without, and when the board fit carries the camera measured on its
own grid (`vision.board_camera.with_grid_camera`, extra["lens"] == "grid"), that camera is posed
on the lattice points measured, and every projection follows them (the measured minus modelled
lattice, bilinear between the points, at the ray's foot on the board); its focal length, which
one view of a plane fixes only as far as the view is not head on and the principal point is at
the centre, is refined on the stacks themselves (`height_scale`: heights are whole pieces), and
the heights' sigmas carry what is left of its uncertainty. Without either, a nominal pinhole
camera (principal point at the image centre, focal length from `TopsParams.nominal_hfov_deg`) is
posed on the corners: good enough to know where a tall top appears, not to measure the height,
so `heights` is then None.

Arrays: frames are BGR `uint8 (H, W, 3)`; points in px are `(N, 2) float32/float64 (x, y)`.
Board frame (DESIGN.md): unit = one cell, x right, y down, z into the table (height = -z).
Run as `python -m vision.domination IMAGE --corners x0,y0,...` to print the reading.
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from vision.camera import distort_pixels
from vision.errors import (
    BoardPoseError,
    ColourModelError,
    InvalidImageError,
    InvalidIntrinsicsError,
)
from vision.geometry import PI_V2_HFOV_DEG, focal_from_hfov, row_median, sample_points

if TYPE_CHECKING:  # pragma: no cover - typing only
    from vision.camera import Intrinsics
    from vision.geometry import BoardFit

# --- vocabulary -------------------------------------------------------------------------------
FILES = "abcdefgh"
#: the 12 cut corner cells of the 8x8 square
CUT_CELLS: frozenset[str] = frozenset(
    {"a1", "b1", "a2", "g1", "h1", "h2", "a7", "a8", "b8", "g8", "h8", "h7"}
)
#: the 52 playable cells, file-major (a3, a4, ..., h6)
CELLS: tuple[str, ...] = tuple(
    f"{f}{r}" for f in FILES for r in range(1, 9) if f"{f}{r}" not in CUT_CELLS
)
EMPTY = "."
#: default piece colours (BGR), as in docs/INTERFACES.md
DEFAULT_COLOURS: Mapping[str, tuple[int, int, int]] = {
    "G": (60, 160, 40),
    "R": (40, 40, 200),
    "B": (200, 90, 30),
    "Y": (30, 200, 230),
}
MAX_STACK = 5


def cell_centre_board(cell: str) -> tuple[float, float]:
    """Centre of `cell` ("d4") in the board frame (cells): (f + 0.5, 8 - r + 0.5)."""
    if cell not in CELLS:
        raise ValueError(f"not a playable Domination cell: {cell!r}")
    f = FILES.index(cell[0])
    r = int(cell[1:])
    return (f + 0.5, 8 - r + 0.5)


CELL_CENTRES_BOARD: np.ndarray = np.array([cell_centre_board(c) for c in CELLS], dtype=np.float64)
BOARD_CORNERS_BOARD: np.ndarray = np.array([[0, 0], [8, 0], [8, 8], [0, 8]], dtype=np.float64)


# --- parameters and result --------------------------------------------------------------------
@dataclass(frozen=True)
class TopsParams:
    """Tuning of `read_tops` (shipped defaults). Lengths in cells unless the name says px."""

    disc_diameter: float = 0.8
    disc_thickness: float = 0.12
    max_height: int = MAX_STACK
    #: horizontal field of view assumed when no intrinsics are given (Pi camera v2: 62.2 deg)
    nominal_hfov_deg: float = PI_V2_HFOV_DEG
    #: with the camera from the board's own grid: readings at most, each refining the focal
    #: length on the stacks (heights are whole pieces; `height_scale`)
    height_scale_passes: int = 8
    #: directions sampled around each candidate top circle
    n_directions: int = 32
    #: the coarse fit (which only picks the height level) uses every this-many-th direction
    coarse_direction_step: int = 2
    #: profile step along the normal, px
    profile_step_px: float = 0.5
    #: half-width of the edge operator (central difference) along the normal, px
    edge_halfwidth_px: float = 1.0
    #: extra profile length beyond the extreme hypotheses, px
    profile_margin_px: float = 4.0
    #: tolerance of the coarse edge score around each predicted edge, px
    coarse_window_px: float = 1.0
    #: radius (cells) of the floor patch tested for "empty"
    floor_radius: float = 0.2
    #: fraction of the top radius sampled for the colour
    colour_radius_frac: float = 0.55
    #: offset (cells) of the board reference samples from each cell centre (both axes)
    reference_offset: float = 0.38
    #: hypothesis score: penalty weight of an edge inside the candidate top face
    inner_penalty: float = 1.0
    #: distance inside the candidate circle from which edges count as "inside", px
    inner_gap_px: float = 2.5
    #: added to each profile's strongest edge when normalising (BGR levels)
    edge_floor: float = 10.0
    #: refinement: the far side (the top face is the stack's outline) is where the edge moves
    #: outward with height by at least this, px/cell; the rest is the near side
    min_far_ds: float = 0.0
    #: coarse search of the top's image shift (pieces sit off-centre): half-range and step, px
    max_shift_px: float = 2.0
    shift_step_px: float = 2.0
    #: how far pieces sit off their cell centre (standard deviation, cells)
    jitter_sigma: float = 0.02
    #: coarse score penalty per squared shift in units of the jitter
    shift_penalty: float = 0.02
    #: refinement: candidate edges are local maxima above this fraction of the strongest
    candidate_fraction: float = 0.12
    #: ... but at most this fraction of the top's own colour (its white-balanced BGR norm): where a
    #: lower piece of the same colour sticks out, only the top's thin rim line lies between them,
    #: whose flanks can fall below `candidate_fraction` of the lower piece's outer edge (the outline
    #: then read too far out: such stacks near the nadir read 0.12 pieces high); 0 turns it off
    candidate_top_fraction: float = 0.075
    #: refinement: only the innermost candidate edge along each direction (the top's outline)
    first_edge_only: bool = True
    #: the outline's position along a direction: the centroid of the edge strength from this far
    #: before to `outline_after_px` after the innermost edge (a thin rim line or bevel at the
    #: outline splits its edge in two, whichever flank is met first; the centroid of both is
    #: stable); outline_after_px <= 0 takes the innermost edge's own peak
    outline_before_px: float = 2.5
    outline_after_px: float = 2.5
    #: refinement passes, each linearised at the level the previous one rounded to (more than
    #: one did not help: a start one piece off is mostly a stack whose edges are ambiguous)
    refine_passes: int = 1
    #: refinement iterations, robust scale shrinking from start to robust_scale_px
    refine_iterations: int = 6
    robust_scale_start_px: float = 3.0
    #: expected sub-pixel error of one edge position, px
    edge_sigma_px: float = 1.0
    #: where the visible edge of a top lies outside its nominal outline, px (blur, bevel)
    edge_offset_px: float = 0.3
    #: the same on the near side (where the top meets its own side band), px: there the edge is
    #: where the colour first darkens by `near_darkening` off the top's own colour (inside the
    #: outline: a rim line or bevel, then the side band, are darker than the top)
    near_edge_offset_px: float = -1.25
    #: near side: the darkening (fraction of the top's brightness along its own colour) that
    #: marks the top's edge; 0 takes the edge centroid as on the far side
    near_darkening: float = 0.1
    #: weight of the near side's edges (they locate the top, at an offset unknown per stack)
    near_side_weight: float = 1.0
    #: prior standard deviation of that offset around near_edge_offset_px, px
    near_offset_sigma_px: float = 0.1
    #: floor-patch chromaticity distance from the board above which a cell is occupied
    empty_saturation: float = 0.15
    #: far side: the outline's edge centroid (over the rim line's two flanks) lies further out
    #: the more the outer flank (rim to what lies beyond) weighs against the inner one (top to
    #: rim), which depends on the top's colour against the board. Per stack, the median share of
    #: the outer flank over its far-side directions, less `flank_fraction_ref`, times this, px,
    #: is where its far-side edges are expected further out (0: off)
    flank_gain_px: float = 0.5
    flank_fraction_ref: float = 0.7
    #: refinement: each edge weighs its relative strength (0..1) to this power (0: all alike)
    edge_strength_power: float = 0.25
    #: robust (Tukey) scale of edge residuals, px
    robust_scale_px: float = 0.7
    #: floor of the edges' residual scatter when the height's sigma is computed, px
    min_residual_px: float = 0.74
    #: floor-of-sigma for the height estimate, in pieces
    min_height_sigma: float = 0.05
    #: prior standard deviation of an edge offset common to all stacks of a frame (blur, light,
    #: JPEG move every outline alike), px; fitted jointly over the occupied cells and taken off
    #: each stack's height; 0: not fitted
    frame_offset_sigma_px: float = 0.06
    #: prior standard deviation of a second frame-common offset, of the near side's edges only
    #: (where the colour first darkens: blur moves that point inwards on every stack of a
    #: frame), fitted jointly with the first; 0: not fitted
    frame_near_offset_sigma_px: float = 0.2
    #: near side: the darker the colour gets beyond the darkening crossing (the deepest
    #: darkening within `near_depth_reach_px` after it, as a fraction of the top's brightness;
    #: median over the stack's near side), the further inside the outline the blur puts the
    #: crossing: the near side's edges are expected `near_depth_gain_px x (depth -
    #: near_depth_ref)` further out (negative gain: further in; 0: off)
    near_depth_gain_px: float = -1.0
    near_depth_ref: float = 0.34
    near_depth_reach_px: float = 3.0
    #: a top whose colour (raw frame, median of its innermost profile samples) reaches this level
    #: in a channel is saturated there (overexposure, glare): the near side's darkening is
    #: measured without that channel (it does not show how much darker the rim is), and the near
    #: side's edges of such a top are expected `saturated_near_offset_px` further out (glare and
    #: clipping keep the top's brightness beyond its outline), plus
    #: `saturated_near_glare_gain_px` per 100 grey levels of its glare (fitted as below: on a
    #: saturated top it cannot be taken off, and the more glare the less the unclipped channels
    #: darken as a fraction of the top). A saturated top with fewer than
    #: `saturated_min_channels` channels below the clip has no near-side measure (one channel
    #: left, the top's weakest, carries mostly glare); 0: off
    saturation_level: float = 253.0
    saturated_near_offset_px: float = 0.2
    saturated_near_glare_gain_px: float = 0.4
    saturated_min_channels: int = 2
    #: glare (light added alike to every channel of a glossy piece, e.g. below a lamp) per stack:
    #: its white-balanced top colour is L x (its colour in the model, picked by hue) + g x (the
    #: white balance's gains), fitted on the channels it does not saturate; where g exceeds
    #: `glare_min` grey levels, the near side's darkening is measured again with g taken off the
    #: colours (not on a saturated top) and against the top's own brightness next to each
    #: direction's first crossing (glare and light vary across a top): the mean from
    #: `near_reference_far_px` to `near_reference_near_px` before it, within
    #: `near_reference_max_change` of the top's centre. 0: off
    glare_min: float = 5.0
    near_reference_far_px: float = 5.0
    near_reference_near_px: float = 2.0
    near_reference_max_change: float = 0.05

    def __post_init__(self) -> None:
        if not 0 < self.disc_diameter < 1:
            raise ValueError(f"disc_diameter must be in (0, 1) cells, got {self.disc_diameter}")
        if not 0 < self.disc_thickness < 1:
            raise ValueError(f"disc_thickness must be in (0, 1) cells, got {self.disc_thickness}")
        if not 1 <= self.max_height <= 10:
            raise ValueError(f"max_height must be in 1..10, got {self.max_height}")
        if self.n_directions < 8:
            raise ValueError(f"n_directions must be >= 8, got {self.n_directions}")
        if not 1 <= self.coarse_direction_step <= self.n_directions // 8:
            raise ValueError(
                "coarse_direction_step must be in 1..n_directions // 8, got "
                f"{self.coarse_direction_step}"
            )
        if self.near_side_weight < 0 or self.near_offset_sigma_px <= 0:
            raise ValueError(
                "near_side_weight must be >= 0 and near_offset_sigma_px > 0, got "
                f"{self.near_side_weight} and {self.near_offset_sigma_px}"
            )
        if not 0 <= self.edge_strength_power <= 2:
            raise ValueError(f"edge_strength_power must be in [0, 2], got {self.edge_strength_power}")
        if not 0 <= self.near_darkening < 1:
            raise ValueError(f"near_darkening must be in [0, 1), got {self.near_darkening}")
        if self.refine_passes < 1 or self.refine_iterations < 1 or self.min_residual_px <= 0:
            raise ValueError(
                "refine_passes and refine_iterations must be >= 1 and min_residual_px > 0, got "
                f"{self.refine_passes}, {self.refine_iterations} and {self.min_residual_px}"
            )
        if not 0 <= self.candidate_top_fraction < 1:
            raise ValueError(
                f"candidate_top_fraction must be in [0, 1), got {self.candidate_top_fraction}"
            )
        if self.frame_offset_sigma_px < 0 or self.frame_near_offset_sigma_px < 0:
            raise ValueError(
                "frame_offset_sigma_px and frame_near_offset_sigma_px must be >= 0, got "
                f"{self.frame_offset_sigma_px} and {self.frame_near_offset_sigma_px}"
            )
        if (
            not -5 <= self.near_depth_gain_px <= 5
            or not 0 <= self.near_depth_ref < 1
            or not 0 < self.near_depth_reach_px <= 10
        ):
            raise ValueError(
                "near_depth_gain_px must be in [-5, 5] px, near_depth_ref in [0, 1) and "
                f"near_depth_reach_px in (0, 10], got {self.near_depth_gain_px}, "
                f"{self.near_depth_ref} and {self.near_depth_reach_px}"
            )
        if not 0 <= self.saturation_level <= 255 or not -5 <= self.saturated_near_offset_px <= 5:
            raise ValueError(
                "saturation_level must be in [0, 255] and saturated_near_offset_px in [-5, 5] px, "
                f"got {self.saturation_level} and {self.saturated_near_offset_px}"
            )
        if not -5 <= self.saturated_near_glare_gain_px <= 5 or self.saturated_min_channels not in (0, 1, 2, 3):
            raise ValueError(
                "saturated_near_glare_gain_px must be in [-5, 5] px per 100 grey levels and "
                f"saturated_min_channels in 0..3, got {self.saturated_near_glare_gain_px} and "
                f"{self.saturated_min_channels}"
            )
        if (
            not 0 <= self.glare_min <= 255
            or not 0 < self.near_reference_near_px < self.near_reference_far_px <= 10
            or not 0 <= self.near_reference_max_change < 1
        ):
            raise ValueError(
                "glare_min must be in [0, 255], 0 < near_reference_near_px < near_reference_far_px "
                "<= 10 px and near_reference_max_change in [0, 1), got "
                f"{self.glare_min}, {self.near_reference_near_px}, {self.near_reference_far_px} and "
                f"{self.near_reference_max_change}"
            )
        if not -5 <= self.flank_gain_px <= 5 or not 0 < self.flank_fraction_ref < 1:
            raise ValueError(
                "flank_gain_px must be in [-5, 5] px and flank_fraction_ref in (0, 1), got "
                f"{self.flank_gain_px} and {self.flank_fraction_ref}"
            )
        if not 10 <= self.nominal_hfov_deg <= 170:
            raise ValueError(f"nominal_hfov_deg must be in [10, 170], got {self.nominal_hfov_deg}")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TopsParams:
        """Build from a mapping, rejecting unknown keys by name."""
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown TopsParams keys: {', '.join(unknown)}")
        return cls(**dict(data))


@dataclass(frozen=True)
class TopsReading:
    """What `read_tops` saw. All mappings have the 52 cells as keys.

    `tops[cell]` is a colour letter or "." (empty); `confidence[cell]` in 0..1; `heights[cell]`
    is 0 for empty cells and 1..max_height otherwise, `height_sigma[cell]` its standard deviation
    in pieces (both None without a camera model).
    """

    tops: Mapping[str, str]
    confidence: Mapping[str, float]
    heights: Mapping[str, int] | None = None
    height_sigma: Mapping[str, float] | None = None
    #: continuous height estimate in pieces (diagnostic), None without a camera model
    height_estimate: Mapping[str, float] | None = field(default=None, repr=False)
    #: with the camera from the board's own grid: the factor its focal length was divided by for
    #: this reading (`read_tops`' `focal_scale` for the next frame of the same fit), else None
    focal_scale: float | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form: {"tops", "confidence", "heights"?, "height_sigma"?}."""
        out: dict[str, Any] = {
            "tops": dict(self.tops),
            "confidence": {c: round(float(v), 4) for c, v in self.confidence.items()},
        }
        if self.heights is not None:
            out["heights"] = dict(self.heights)
        if self.height_sigma is not None:
            out["height_sigma"] = {c: round(float(v), 4) for c, v in self.height_sigma.items()}
        return out


# --- camera model -----------------------------------------------------------------------------
@dataclass(frozen=True)
class _Camera:
    camera_matrix: np.ndarray
    dist_coeffs: np.ndarray
    rvec: np.ndarray
    tvec: np.ndarray
    #: (9, 9, 2) px: where the board's lattice point (i, j) was measured, less where the model
    #: puts it (`camera_from_board` with grid points), or None
    lattice_residual_px: np.ndarray | None = None

    def project(self, points_board_xyh: np.ndarray) -> np.ndarray:
        """(N, 3) board points (x, y, height up) -> (N, 2) float32 px of the raw frame.

        The pinhole part in numpy, the lens through `distort_pixels`: the same numbers as
        `cv2.projectPoints`, about five times faster for the ~12 000 points of a board. With
        a lattice residual, a point is seen along the ray that meets the board where the
        model's residual there is known: that residual (bilinear between lattice points) is
        added, so the picture of every cell follows its measured corners.
        """
        import cv2

        obj = np.asarray(points_board_xyh, dtype=np.float64).reshape(-1, 3).copy()
        obj[:, 2] = -obj[:, 2]
        rmat, _ = cv2.Rodrigues(np.asarray(self.rvec, dtype=np.float64))
        cam = obj @ rmat.T + np.asarray(self.tvec, dtype=np.float64).reshape(1, 3)
        undistorted = (cam / cam[:, 2:3]) @ self.camera_matrix.T
        px = distort_pixels(undistorted[:, :2], self.camera_matrix, self.dist_coeffs)
        if self.lattice_residual_px is not None:
            centre = -rmat.T @ np.asarray(self.tvec, dtype=np.float64).ravel()
            # the ray's foot on the board plane (z = 0): centre + (P - centre) * cz / (cz - pz)
            t = centre[2] / (centre[2] - obj[:, 2])
            foot = centre[None, :2] + (obj[:, :2] - centre[None, :2]) * t[:, None]
            px = px + _bilinear(self.lattice_residual_px, foot)
        return px.astype(np.float32)


def _bilinear(grid: np.ndarray, xy: np.ndarray) -> np.ndarray:
    """(G, G, 2) values at integer lattice points (i, j) -> (N, 2) at board points (x, y)."""
    n = grid.shape[0] - 1
    x = np.clip(xy[:, 0], 0.0, n)
    y = np.clip(xy[:, 1], 0.0, n)
    i = np.minimum(np.floor(x).astype(int), n - 1)
    j = np.minimum(np.floor(y).astype(int), n - 1)
    fx, fy = (x - i)[:, None], (y - j)[:, None]
    return ((1 - fx) * (1 - fy) * grid[i, j] + fx * (1 - fy) * grid[i + 1, j]
            + (1 - fx) * fy * grid[i, j + 1] + fx * fy * grid[i + 1, j + 1])


def _lattice_residual(cam: _Camera, grid_px: np.ndarray, grid_board: np.ndarray) -> np.ndarray:
    """(9, 9, 2) measured minus modelled px at the lattice points; a point not measured gets
    the mean of its measured neighbours (repeatedly), 0 where none is near."""
    res = np.full((9, 9, 2), np.nan)
    model = cam.project(np.c_[grid_board, np.zeros(len(grid_board))]).astype(np.float64)
    ij = np.rint(grid_board).astype(int)
    res[ij[:, 0], ij[:, 1]] = grid_px - model
    for _ in range(9):
        missing = np.isnan(res[..., 0])
        if not missing.any():
            break
        padded = np.pad(res, ((1, 1), (1, 1), (0, 0)), constant_values=np.nan)
        neigh = np.stack([padded[1 + di:10 + di, 1 + dj:10 + dj] for di, dj in ((-1, 0), (1, 0), (0, -1), (0, 1))])
        with np.errstate(invalid="ignore"):
            cnt = (~np.isnan(neigh[..., 0])).sum(axis=0)
            mean = np.nansum(neigh, axis=0) / np.maximum(cnt, 1)[..., None]
        fill = missing & (cnt > 0)
        res[fill] = mean[fill]
    return np.nan_to_num(res)


def camera_from_board(
    board: BoardFit,
    image_size: tuple[int, int],
    params: TopsParams = TopsParams(),
    intrinsics: Intrinsics | None = None,
    grid: tuple[np.ndarray, np.ndarray] | None = None,
) -> _Camera:
    """Pose a camera on the board's four corners (`cv2.solvePnP`, IPPE).

    With `intrinsics` the pose is the real one; without, a nominal pinhole camera is assumed.
    With `grid` (lattice points measured in the frame: (N, 2) px, (N, 2) board) the pose is
    refined on them and their residual carried (`_Camera.lattice_residual_px`).
    """
    import cv2

    corners_px = np.asarray(board.corners_px, dtype=np.float64).reshape(4, 2)
    if intrinsics is not None:
        k = np.asarray(intrinsics.camera_matrix, dtype=np.float64).reshape(3, 3)
        d = np.asarray(intrinsics.dist_coeffs, dtype=np.float64).ravel()
    else:
        w, h = image_size
        f = focal_from_hfov(w, params.nominal_hfov_deg)
        k = np.array([[f, 0, (w - 1) / 2.0], [0, f, (h - 1) / 2.0], [0, 0, 1.0]])
        d = np.zeros(5)
    obj = np.hstack([BOARD_CORNERS_BOARD, np.zeros((4, 1))])
    ok, rvec, tvec = cv2.solvePnP(obj, corners_px, k, d, flags=cv2.SOLVEPNP_IPPE)
    if not ok:
        raise BoardPoseError("cannot pose the camera on the board corners (solvePnP failed)")
    # the camera must look at the board from the side heights grow to (-z)
    rmat, _ = cv2.Rodrigues(rvec)
    camera_centre_board = -rmat.T @ tvec.ravel()
    if camera_centre_board[2] > 0:
        raise BoardPoseError("board corners are given in mirrored order (camera below the board)")
    if grid is None or len(grid[0]) < 6:
        return _Camera(k, d, rvec, tvec)
    grid_px, grid_board = (np.asarray(g, np.float64).reshape(-1, 2) for g in grid)
    obj_g = np.c_[grid_board, np.zeros(len(grid_board))]
    ok, rvec, tvec = cv2.solvePnP(obj_g, grid_px, k, d, rvec.copy(), tvec.copy(), useExtrinsicGuess=True,
                                  flags=cv2.SOLVEPNP_ITERATIVE)
    if not ok:
        raise BoardPoseError("cannot pose the camera on the board's grid (solvePnP failed)")
    cam = _Camera(k, d, rvec, tvec)
    return _Camera(k, d, rvec, tvec, _lattice_residual(cam, grid_px, grid_board))


# --- colour -----------------------------------------------------------------------------------
def _chroma(bgr: np.ndarray) -> np.ndarray:
    """(..., 3) BGR -> (..., 2) brightness-free opponent chromaticity."""
    b, g, r = bgr[..., 0], bgr[..., 1], bgr[..., 2]
    s = b + g + r + 1e-3
    o1 = (r - g) / s * 1.7320508
    o2 = (r + g - 2.0 * b) / s
    return np.stack([o1, o2], axis=-1)


def _colour_model(
    colours: Mapping[str, Any] | None,
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Letters, their chromaticities (n, 2) and BGR colours (n, 3) of a colour model (the
    default model's made once: every frame without a calibration asks for it; read-only)."""
    if colours is None:
        letters, chroma, ref = _default_colour_model()
        return list(letters), chroma, ref
    return _checked_colour_model(colours)


@functools.lru_cache(maxsize=1)
def _default_colour_model() -> tuple[list[str], np.ndarray, np.ndarray]:
    letters, chroma, ref = _checked_colour_model(DEFAULT_COLOURS)
    chroma.flags.writeable = ref.flags.writeable = False
    return letters, chroma, ref


def _checked_colour_model(model: Mapping[str, Any]) -> tuple[list[str], np.ndarray, np.ndarray]:
    if not model:
        raise ColourModelError("colour model is empty: give at least 2 colours {letter: BGR}")
    letters: list[str] = []
    refs: list[tuple[float, float, float]] = []
    for letter, bgr in model.items():
        if not isinstance(letter, str) or len(letter) != 1 or letter == EMPTY:
            raise ColourModelError(f"colour letter must be one character other than '.': {letter!r}")
        arr = np.asarray(bgr, dtype=np.float64).ravel()
        if arr.shape != (3,) or not np.all(np.isfinite(arr)) or arr.min() < 0 or arr.max() > 255:
            raise ColourModelError(f"colour {letter!r} must be 3 BGR values in 0..255, got {bgr!r}")
        letters.append(letter)
        refs.append((float(arr[0]), float(arr[1]), float(arr[2])))
    ref = np.asarray(refs, dtype=np.float64)
    chroma = _chroma(ref)
    sat = np.linalg.norm(chroma, axis=1)
    for letter, s in zip(letters, sat, strict=True):
        if s < 0.12:
            raise ColourModelError(
                f"colour {letter!r} is too grey to tell from the board (saturation {s:.2f})"
            )
    return letters, chroma, ref


def _hue_distances(top_chroma: np.ndarray, ref_chroma: np.ndarray) -> np.ndarray:
    """Hue angle differences (C, n) radians between tops (C, 2) and model colours (n, 2), both
    relative to the board: glare and shading change the saturation of a top, much less its hue."""
    ang_top = np.arctan2(top_chroma[:, 1], top_chroma[:, 0])
    ang_ref = np.arctan2(ref_chroma[:, 1], ref_chroma[:, 0])
    d = ang_top[:, None] - ang_ref[None, :]
    # the difference wrapped to [-pi, pi] (np.angle(np.exp(1j * d)), the same numbers in real
    # arithmetic)
    return np.abs(np.arctan2(np.sin(d), np.cos(d)))


# --- sampling ---------------------------------------------------------------------------------
_MAP_COLS = 512


def _sample_maps(frame: np.ndarray, map_x: np.ndarray, map_y: np.ndarray, n: int) -> np.ndarray:
    """Bilinear samples (n, 3) float32 of `frame` at the first n points of the maps: x and y
    in px (float32), or `_fixed_maps`' pair."""
    import cv2

    out = cv2.remap(frame, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return out.reshape(-1, 3)[:n].astype(np.float32)


def _fixed_maps(map_x: np.ndarray, map_y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Float32 maps (px) in `cv2.remap`'s fixed point: (int16 (..., 2) whole pixels, uint16
    (...) the fraction in 1/32 px steps). Bilinear weights at 1/32 px move a sample by at most
    1/64 px, a sixtieth of the edges' own sigma (`edge_sigma_px`); remap reads these twice as
    fast as float maps (it converts those on every call)."""
    import cv2

    shape = map_x.shape
    xy, frac = cv2.convertMaps(np.ascontiguousarray(map_x.reshape(1, -1)),
                               np.ascontiguousarray(map_y.reshape(1, -1)), cv2.CV_16SC2)
    return xy.reshape(shape + (2,)), frac.reshape(shape)


@functools.lru_cache(maxsize=8)
def _disc_points(radius: float, rings: int, per_ring: int) -> np.ndarray:
    """(M, 2) offsets filling a disc: its centre plus `rings` rings (read-only: made once per
    parameters, every new board fit's geometry asks for them)."""
    pts = [(0.0, 0.0)]
    for i in range(1, rings + 1):
        rr = radius * i / rings
        n = per_ring * i
        a = np.arange(n) * 2 * np.pi / n + i * 0.3
        pts += list(zip((rr * np.cos(a)).tolist(), (rr * np.sin(a)).tolist(), strict=True))
    out = np.asarray(pts, dtype=np.float64)
    out.flags.writeable = False
    return out



@functools.lru_cache(maxsize=8)
def _shift_grid(params: TopsParams) -> np.ndarray:
    """(D, 2) image shifts (px) tried by the coarse search: pieces are not centred exactly
    (read-only, made once per parameters)."""
    n = round(params.max_shift_px / params.shift_step_px)
    v = np.arange(-n, n + 1) * params.shift_step_px
    gx, gy = np.meshgrid(v, v)
    out = np.stack([gx.ravel(), gy.ravel()], axis=1)
    out.flags.writeable = False
    return out


def _edge_profiles(
    prof: np.ndarray, s_lo: np.ndarray, step: float, halfwidth_px: float = 1.0,
    gains: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Colour-edge strength along each profile (C, J, S') and the position of its first sample;
    with `gains` (3,) that of the profiles times them per channel (the white balance: the
    difference is linear, so the gains weigh the squared channel differences instead of
    every sample being multiplied first)."""
    import cv2

    # [1 2 1] / 4 smoothing along s, then a central difference of +-k_d samples: one correlation
    # kernel, applied per colour channel to the profiles laid out as rows of an image
    k_d = max(1, round(halfwidth_px / step))
    n_c, n_j, n_s, _ = prof.shape
    kernel = np.zeros((1, 2 * k_d + 3), dtype=np.float32)
    kernel[0, 2 * k_d :] += (0.25, 0.5, 0.25)
    kernel[0, :3] -= (0.25, 0.5, 0.25)
    rows = np.ascontiguousarray(prof, dtype=np.float32).reshape(n_c * n_j, n_s, 3)
    diff = cv2.filter2D(rows, -1, kernel, anchor=(0, 0), borderType=cv2.BORDER_CONSTANT)
    n_e = n_s - 2 - 2 * k_d
    weights = np.ones((1, 3), np.float32) if gains is None else np.asarray(gains, np.float32).reshape(1, 3) ** 2
    # the channels' squares summed with the weights, in OpenCV (numpy's per-channel slices of a
    # last axis of 3 are several times slower)
    edge = cv2.sqrt(cv2.transform(cv2.multiply(diff, diff), weights))
    return edge.reshape(n_c * n_j, n_s)[:, :n_e].reshape(n_c, n_j, n_e), s_lo + (k_d + 1) * step


@functools.lru_cache(maxsize=64)
def _row_starts(c: int, j: int, s: int) -> np.ndarray:
    """(C, J) flat index of each row's first sample in a (C, J, S) array (read-only: a frame's
    gathers ask for the same few shapes over and over)."""
    out = (np.arange(c)[:, None] * j + np.arange(j)[None, :]) * s
    out.flags.writeable = False
    return out


def _gather(arr: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """arr (C, J, S), idx (C, ..., J) ints -> arr[c, j, idx[c, ..., j]]."""
    c, j, s = arr.shape
    shape = (c,) + (1,) * (idx.ndim - 2) + (j,)
    return np.take(arr.ravel(), _row_starts(c, j, s).reshape(shape) + idx)


def _take_windows(arr: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """arr (C, J, S, ...), idx (C, J, W) ints in 0..S-1 -> arr[c, j, idx[c, j, w]] (C, J, W, ...):
    one flat gather (np.take_along_axis is two to three times slower on these)."""
    c, j, s = arr.shape[:3]
    # np.take along the first axis: indexing rows of (N, 3) by an index array is 4 times slower
    return np.take(arr.reshape((c * j * s,) + arr.shape[3:]), _row_starts(c, j, s)[..., None] + idx, axis=0)


def _coarse_fit(
    edge: np.ndarray,
    idx: np.ndarray,
    idx_in: np.ndarray,
    inner_ok: np.ndarray,
    penalty: np.ndarray,
    shift_grid: np.ndarray,
    params: TopsParams,
) -> tuple[np.ndarray, np.ndarray]:
    """Best (height level, image shift) per cell: its circle lies on edges, nothing inside it does.

    Edges are normalised per direction by the strongest one on the profile, so every direction
    votes alike. `idx`, `idx_in`, `inner_ok` and `penalty` are the board-only part
    (`_coarse_indices`). Returns k0 (C,) in 1..K and shift0 (C, 2) px.
    """
    import cv2

    step = params.profile_step_px
    n_e = edge.shape[2]
    scale = 1.0 / (edge.max(axis=2, keepdims=True) + params.edge_floor)
    win = max(0, round(params.coarse_window_px / step))
    # the strongest edge within the window of each sample (a 1D max filter, edges replicated)
    rows = np.ascontiguousarray(edge, dtype=np.float32).reshape(-1, n_e)
    dilated = cv2.dilate(rows, np.ones((1, 2 * win + 1), np.uint8), borderType=cv2.BORDER_REPLICATE)
    norm = dilated.reshape(edge.shape) * scale
    # the running maximum of edge x scale, taken before the scaling: rounding is monotonic, so
    # scaling (by a positive number per direction) and the maximum commute bit for bit
    inner = np.maximum.accumulate(edge, axis=2) * scale
    on = _gather(norm, idx)
    inside = np.where(inner_ok, _gather(inner, idx_in), 0.0)
    score = (on - params.inner_penalty * inside).mean(axis=-1)  # (C, K, D)
    score = score - penalty[:, None, :]
    flat = score.reshape(score.shape[0], -1).argmax(axis=1)
    k_idx, d_idx = np.unravel_index(flat, score.shape[1:])
    return k_idx + 1, shift_grid[d_idx].astype(np.float64)


def _coarse_indices(
    s_edge0: np.ndarray,
    hyp: np.ndarray,
    normal: np.ndarray,
    shift_grid: np.ndarray,
    px_per_cell: np.ndarray,
    n_e: int,
    params: TopsParams,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The board-only part of `_coarse_fit` (once per board fit): where each height and shift
    puts its circle on the edge profiles (sample index (C, K, D, J)), the sample `inner_gap_px`
    inside it and whether that lies on the profile, and each shift's prior penalty (C, D)."""
    step = params.profile_step_px
    sh = np.einsum("cjx,dx->cdj", normal, shift_grid)  # (C, D, J) s-offset of each shift
    idx_f = (hyp[:, :, None, :] + sh[:, None, :, :] - s_edge0[:, None, None, :]) / step
    # (int32: kept per fit and restricted to the stacks' cells on every frame)
    idx = np.clip(np.rint(idx_f).astype(np.int32), 0, n_e - 1)  # (C, K, D, J)
    gap = params.inner_gap_px / step
    idx_in = np.clip(np.rint(idx_f - gap).astype(np.int32), 0, n_e - 1)
    sigma_px = params.jitter_sigma * px_per_cell  # (C,)
    d2 = (shift_grid**2).sum(axis=1)[None, :] / (sigma_px[:, None] ** 2)  # (C, D)
    return idx, idx_in, idx_f - gap >= 0, params.shift_penalty * d2


def _outline_candidates(
    edge: np.ndarray,
    s_edge0: np.ndarray,
    params: TopsParams,
    threshold_cap: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Candidate outline positions along each profile, px (C, J, S''), inf where none, and their
    relative strengths 0..1.

    Candidates are local maxima of the edge strength above a fraction of the profile's
    strongest, that threshold at most `threshold_cap` (C,) where given. With `first_edge_only`
    only the innermost one counts (nothing lies inside a top face), and its position is the
    centroid of the edge strength from `outline_before_px` before to `outline_after_px` after it:
    a thin dark rim line or bevel at the outline splits
    the outline's edge into two flanks about 1-2 px apart, and which one is met first changes
    from direction to direction with the contrasts (rim, top colour, what lies outside); the
    centroid of both does not jump.
    """
    step = params.profile_step_px
    n_e = edge.shape[2]
    # candidate edges: local maxima above a fraction of the profile's strongest edge
    e_m, e_0, e_p = edge[:, :, :-2], edge[:, :, 1:-1], edge[:, :, 2:]
    e_max = edge.max(axis=2, keepdims=True)
    thr = params.candidate_fraction * e_max
    if threshold_cap is not None:
        thr = np.minimum(thr, threshold_cap[:, None, None])
    thr = np.maximum(thr, params.edge_floor)
    is_max = (e_0 >= e_m) & (e_0 > e_p) & (e_0 >= thr)
    if params.first_edge_only and params.outline_after_px > 0:
        # only the innermost maximum, at the centroid of the edge strength around it: the window
        # of e_0 indices (i_s = index + 1) within [first+1-before, first+1+after], gathered
        first = np.argmax(is_max, axis=2)  # (C, J)
        found = _gather(is_max, first)
        n_before = math.floor(params.outline_before_px / step + 1e-9)
        n_after = math.floor(params.outline_after_px / step + 1e-9)
        win = first[..., None] + np.arange(-n_before, n_after + 1)  # (C, J, W)
        inside = (win >= 0) & (win <= n_e - 3)
        # (e_0's samples gathered from `edge`, one further along: e_0 is a view, not contiguous)
        e_win = np.where(inside, _take_windows(edge, np.clip(win, 0, n_e - 3) + 1), 0.0)
        s0w = e_win.sum(axis=2)
        s1w = (e_win * (win + 1)).sum(axis=2)
        centroid = s_edge0 + step * s1w / np.maximum(s0w, 1e-9)
        e_first = _gather(edge, first + 1)
        pos1 = np.where(found, centroid, np.inf)[..., None]
        strength1 = (np.where(found, e_first, 0.0) / (e_max[..., 0] + 1e-6))[..., None]
        return pos1, strength1
    if params.first_edge_only:
        # the top face is uniform: the first edge met going outwards from inside it is its outline
        first = np.argmax(is_max, axis=2)
        keep = np.zeros_like(is_max)
        np.put_along_axis(keep, first[..., None], True, axis=2)
        is_max &= keep
    den = e_m - 2 * e_0 + e_p
    ok_den = den < -1e-6
    frac = np.clip(np.where(ok_den, 0.5 * (e_m - e_p) / np.where(ok_den, den, -1.0), 0.0), -0.5, 0.5)
    pos = s_edge0[:, :, None] + step * (np.arange(1, n_e - 1)[None, None, :] + frac)  # (C, J, S'')
    pos = np.where(is_max, pos, np.inf)
    strength = np.where(is_max, e_0, 0.0) / (edge.max(axis=2, keepdims=True) + 1e-6)
    return pos, strength


def _top_colour(prof: np.ndarray) -> np.ndarray:
    """A top's own colour (C, 3) from its profiles (C, J, S, 3): the median of the innermost
    samples of every direction (they lie inside the top face for every height)."""
    return row_median(prof[:, :, 1:5].reshape(prof.shape[0], -1, 3))


def _darkening_crossings(
    prof: np.ndarray, s_lo: np.ndarray, step: float, fraction: float, reach_px: float = 3.0,
    saturation_level: float = 0.0,
    glare: np.ndarray | None = None,
    local_ref: tuple[float, float, float] | None = None,
    local: np.ndarray | None = None,
    top: np.ndarray | None = None,
    rows: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Per profile (C, J, S, 3) the first position (px, (C, J)) where the colour has darkened
    by `fraction` of the top's own colour (`top` (C, 3), by default `_top_colour(prof)`),
    linearly interpolated; inf where it never does. Also the deepest darkening (C, J) within
    `reach_px` after that crossing (nan where there is none): the darker it gets beyond, the
    further inside the outline the blur moves the crossing.

    With `glare` (C,) grey levels, those are taken off every colour first; with `local_ref`
    (far, near, max change) the darkening of the `local` (C,) tops is then measured against the
    top's brightness next to each crossing: the mean from `far` to `near` px before it, within
    `max change` of the top's own, and the crossing searched again.

    With `rows` (C, J) bool only those directions are measured (inf and nan elsewhere): each
    direction's crossing depends on its own profile and its stack's colours alone."""
    top = _top_colour(prof) if top is None else top  # (C, 3)
    clipped = top >= saturation_level
    if glare is not None:
        glare = glare.astype(top.dtype)
        top = top - glare[:, None]
    if saturation_level > 0:
        # a channel the top saturates does not show how much darker its rim is: leave it out
        # (unless every channel is saturated)
        clipped &= ~clipped.all(axis=1, keepdims=True)
        top = np.where(clipped, 0.0, top)
    # brightness along the top's own colour, relative to the top: 1 on it, 1 - darkening off it
    unit = top / np.maximum((top * top).sum(-1), 1.0)[:, None]
    glared = glare is not None and bool(glare.any())
    shape = prof.shape[:2]
    if rows is not None:  # the directions asked for, each as a stack of one direction
        stack = np.nonzero(rows)[0]
        rel = (prof[rows] @ unit[stack][:, :, None]).reshape(len(stack), 1, prof.shape[2])
        s_lo = s_lo[rows][:, None]
        local = None if local is None else local[stack]
        if glared:  # (colour - glare) . unit (less 0 where there is no glare: the same numbers)
            rel -= (glare * unit.sum(axis=1))[stack][:, None, None]
    else:
        rel = (prof.reshape(prof.shape[0], -1, 3) @ unit[:, :, None]).reshape(prof.shape[:3])
    if rows is None and glared:
        sub = np.flatnonzero(glare)
        rel[sub] -= (glare[sub] * unit[sub].sum(axis=1))[:, None, None]  # (colour - glare) . unit
    dark = 1.0 - (rel[:, :, :-2] + 2 * rel[:, :, 1:-1] + rel[:, :, 2:]) * 0.25  # (C, J, S-2)
    n_d = dark.shape[2]
    over = dark >= fraction
    i1 = np.argmax(over, axis=2)
    if local_ref is not None and local is not None and local.any():
        sub = np.flatnonzero(local)
        a_i, b_i = round(local_ref[0] / step), round(local_ref[1] / step)
        d_sub, i_sub = dark[sub], i1[sub]
        win = np.clip(i_sub[..., None] - np.arange(b_i, a_i + 1), 0, n_d - 1)
        ok = over[sub].any(axis=2) & (i_sub - a_i >= 0)
        level = 1.0 - _take_windows(d_sub, win).mean(axis=-1)  # (c, J), 1 = the top's
        level = np.where(ok, np.clip(level, 1.0 - local_ref[2], 1.0 + local_ref[2]), 1.0)
        d_sub = 1.0 - (1.0 - d_sub) / level[..., None]
        dark[sub] = d_sub
        over[sub] = d_sub >= fraction
        i1[sub] = np.argmax(over[sub], axis=2)
    found = over.any(axis=2) & (i1 > 0)
    i1c = np.maximum(i1, 1)
    d1 = _gather(dark, i1c)
    d0 = _gather(dark, i1c - 1)
    frac = np.clip((fraction - d0) / np.maximum(d1 - d0, 1e-6), 0.0, 1.0)
    pos = s_lo + step * (i1c - 1 + frac + 1)  # +1: the smoothed profile starts one sample in
    win = np.clip(i1c[..., None] + np.arange(0, max(1, round(reach_px / step)) + 1), 0, n_d - 1)
    depth = _take_windows(dark, win).max(axis=-1)
    pos, depth = np.where(found, pos, np.inf), np.where(found, depth, np.nan)
    if rows is None:
        return pos, depth
    pos_all, depth_all = np.full(shape, np.inf, pos.dtype), np.full(shape, np.nan, depth.dtype)
    pos_all[rows], depth_all[rows] = pos[:, 0], depth[:, 0]
    return pos_all, depth_all


def _glare_levels(
    top_raw: np.ndarray, wb: np.ndarray, ref_bgr: np.ndarray, letter: np.ndarray,
    saturation_level: float = 0.0,
) -> np.ndarray:
    """Per stack (C,) the glare g (raw grey levels, added alike to every channel) such that its
    white-balanced top colour `top_raw` x `wb` is L x its model colour `ref_bgr[letter]` + g x
    `wb` (least squares on the channels below `saturation_level`, all if fewer than two are)."""
    t = top_raw * wb  # (C, 3)
    keep = (top_raw < saturation_level) if saturation_level > 0 else np.ones(t.shape, bool)
    keep = np.where((keep.sum(axis=1) >= 2)[:, None], keep, True).astype(np.float64)
    a = np.stack([ref_bgr[letter], np.broadcast_to(wb, t.shape)], axis=-1)  # (C, 3, 2)
    ata = np.einsum("ck,cki,ckj->cij", keep, a, a) + 1e-9 * np.eye(2)
    atb = np.einsum("ck,cki,ck->ci", keep, a, t)
    return np.linalg.solve(ata, atb[..., None])[:, 1, 0]


def _flank_fraction(
    prof: np.ndarray, s_lo: np.ndarray, step: float, pos: np.ndarray, reach_px: float = 2.5,
    top: np.ndarray | None = None, gains: np.ndarray | None = None,
) -> np.ndarray:
    """Per profile (C, J, S, 3) with an outline at `pos` (C, J) px: the outer flank's share
    |O - R| / (|T - R| + |O - R|) of the outline's two flanks, T the top's colour (`top` (C, 3),
    by default `_top_colour(prof)`), R the darkest sample (along T) within `reach_px` of the
    outline, O the sample `reach_px` beyond it; nan where there is no outline. With `gains`
    (3,), of the profiles times them per channel (`top` then as in those)."""
    n_c, _, n_s, _ = prof.shape
    top = _top_colour(prof) * (1.0 if gains is None else gains) if top is None else top  # (C, 3)
    idx = np.where(np.isfinite(pos), (pos - s_lo) / step, -1.0)
    ok = idx >= 0
    i0 = np.rint(np.where(ok, idx, 0)).astype(np.int64)
    reach = max(1, round(reach_px / step))
    win = np.clip(i0[..., None] + np.arange(-reach, reach + 1), 0, n_s - 1)  # (C, J, W)
    samp = _take_windows(prof, win)  # (C, J, W, 3)
    if gains is not None:
        samp = samp * gains
    bright = (samp.reshape(n_c, -1, 3) @ top[:, :, None]).reshape(samp.shape[:3])
    rim = _take_windows(samp, np.argmin(bright, axis=2)[..., None])[:, :, 0]
    out = samp[:, :, -1]
    w_in = np.linalg.norm(top[:, None] - rim, axis=-1)
    w_out = np.linalg.norm(out - rim, axis=-1)
    frac = w_out / np.maximum(w_in + w_out, 1e-6)
    return np.where(ok, frac, np.nan)


def _line_crossings(
    rim_px: np.ndarray, anchor: np.ndarray, normal: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Where each projected top circle crosses each sampling line, and how that crossing moves
    when the circle is shifted in the image.

    `rim_px` (C, L, J, 2): the circle of level l sampled at J equal angles; the sampling line j
    is `anchor[:, j] + s * normal[:, j]`. The rim point of angle j lies off its line when the
    circle is displaced sideways (a top moves away from the nadir as it rises): its projection
    onto the line would put the outline up to d^2 / 2R too far out (~1 px at 5 cells from the
    nadir, along the outline's sides). Instead the line is intersected with the circle through
    the rim points j-1, j, j+1 (exact for a circle, close for the ellipse a tilted view makes).
    Returns s (C, L, J) px along the line, and `shift_dir` (C, L, J, 2): ds / d(image shift)
    = m / (m . n), m the outline's outward normal at the crossing.
    """
    # x and y as separate (C, L, J) arrays: sums over a last axis of length 2 are slow in numpy
    bx, by = rim_px[..., 0], rim_px[..., 1]
    # the neighbours j - 1 and j + 1 round the circle, relative (np.roll's copies, by slices)
    ax = np.concatenate([bx[..., -1:], bx[..., :-1]], axis=2) - bx
    ay = np.concatenate([by[..., -1:], by[..., :-1]], axis=2) - by
    cx = np.concatenate([bx[..., 1:], bx[..., :1]], axis=2) - bx
    cy = np.concatenate([by[..., 1:], by[..., :1]], axis=2) - by
    det = 2.0 * (ax * cy - ay * cx)
    det = np.where(np.abs(det) > 1e-9, det, 1e-9)
    a2 = ax * ax + ay * ay
    c2 = cx * cx + cy * cy
    ux = (cy * a2 - ay * c2) / det
    uy = (ax * c2 - cx * a2) / det
    centre_x, centre_y = bx + ux, by + uy  # circle through the three rim points
    rho2 = ux * ux + uy * uy
    nx, ny = normal[:, None, :, 0], normal[:, None, :, 1]  # (C, 1, J)
    anc_x, anc_y = anchor[:, None, :, 0], anchor[:, None, :, 1]
    rel_x, rel_y = anc_x - centre_x, anc_y - centre_y
    b = rel_x * nx + rel_y * ny
    disc = b * b - (rel_x * rel_x + rel_y * rel_y - rho2)
    s_proj = (bx - anc_x) * nx + (by - anc_y) * ny
    root = np.sqrt(np.maximum(disc, 0.0))
    s_hi, s_lo = -b + root, -b - root
    s_cross = np.where(np.abs(s_hi - s_proj) <= np.abs(s_lo - s_proj), s_hi, s_lo)
    s_cross = np.where(disc > 0, s_cross, s_proj)
    mx = anc_x + s_cross * nx - centre_x
    my = anc_y + s_cross * ny - centre_y
    m_dot_n = mx * nx + my * ny
    sign = np.where(m_dot_n < 0, -1.0, 1.0)
    scale = sign / np.maximum(np.abs(m_dot_n), 1e-9)
    return s_cross, np.stack([mx * scale, my * scale], axis=-1)


def _refine_fit(
    edge: np.ndarray,
    s_edge0: np.ndarray,
    s_pred: np.ndarray,
    shift_dir: np.ndarray,
    k0: np.ndarray,
    shift0: np.ndarray,
    px_per_cell: np.ndarray,
    params: TopsParams,
    pos_dark: np.ndarray | None = None,
    occupied: np.ndarray | None = None,
    profiles: tuple[np.ndarray, np.ndarray, float, np.ndarray] | None = None,
    dark_depth: np.ndarray | None = None,
    saturated: np.ndarray | None = None,
    glare: np.ndarray | None = None,
    top: np.ndarray | None = None,
    sides0: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Continuous height (pieces) and its sigma per cell.

    Robust least squares in the manner of ICP: unknowns (height change, image shift x, y, offset
    of the near side's edge), the shift held near zero by the prior of how far pieces sit
    off-centre. On the far side (`ds` >= `min_far_ds`) the top face is the stack's outline; on
    the near side it meets its own side band, whose colour and shading would move an edge
    centroid around: there the edge is where the colour first darkens off the top's own
    (`pos_dark`, from `_darkening_crossings`), at an offset held per stack by the prior
    `near_offset_sigma_px`. Local maxima of the edge strength along a direction are the candidates;
    with `first_edge_only` (shipped) only the innermost one, since the top face is uniform and
    nothing lies inside it, while a lower piece sticking out or the stack's side band gives
    further edges outside it, and its position is the centroid of the outline's edge
    (`_outline_candidates`); on the far side that is the only measure. Each iteration takes, per direction, the candidate nearest to the
    current model circle and Tukey-weights it.

    The model is linear in the height around the coarse level: `refine_passes` passes, each
    starting from the level (and shift) the previous one rounded to. With
    `frame_offset_sigma_px` > 0, an edge offset common to the frame's `occupied` cells is fitted
    jointly with them (`_frame_offset`) and taken off each height. With `profiles` (the
    profiles, their first position, step and white balance gains (3,)) and `flank_gain_px` != 0, each
    stack's far-side edges are expected out by its outer flank's share (`_flank_fraction`); with
    them and `candidate_top_fraction` > 0 an edge counts as a candidate from that fraction of the
    top's own colour on (a rim line between the top and a same-coloured lower piece). With
    `dark_depth` (from `_darkening_crossings`) and `near_depth_gain_px` != 0, each stack's
    near-side edges are expected out by the gain times its median depth less `near_depth_ref`,
    and those of the `saturated` (C,) tops by `saturated_near_offset_px` plus
    `saturated_near_glare_gain_px` per 100 levels of their `glare` (C,).
    `s_pred` (C, L, J) and `shift_dir` (C, L, J, 2) are the outlines of each level along the
    sampling lines and their change with an image shift (`_line_crossings`). `top` (C, 3) is the
    tops' colour in those profiles (by default `_top_colour` of them). `sides0`: `_far_side` at
    k0 when the caller has it (the first pass's).
    """
    if profiles is not None and top is None:
        top = _top_colour(profiles[0]) * profiles[3]  # (C, 3)
    cap = None  # the candidates' threshold at most a fraction of the top's colour
    if top is not None and params.candidate_top_fraction > 0:
        cap = params.candidate_top_fraction * np.linalg.norm(top, axis=-1)
    pos, strength = _outline_candidates(edge, s_edge0, params, cap)
    if params.first_edge_only and pos.shape[2] > 1:
        # one candidate per direction at most: keep just that one (the passes search fewer)
        first = np.argmin(pos, axis=2)[..., None]
        pos = _gather(pos, first[..., 0])[..., None]
        strength = _gather(strength, first[..., 0])[..., None]
    pos_near = pos if pos_dark is None else pos_dark[..., None]
    frac = None  # the far side's outer-flank share per direction (`flank_gain_px`)
    if profiles is not None and params.flank_gain_px != 0:
        prof, s_lo, step, gains = profiles
        frac = _flank_fraction(prof, s_lo, step, pos[..., 0], params.outline_after_px, top, gains)
    kmax = params.max_height
    k, shift = k0, shift0
    h_est = sigma_h = np.zeros(len(k0))
    for i in range(max(1, params.refine_passes)):
        h_est, sigma_h, shift = _refine_pass(
            pos, pos_near, strength, s_pred, shift_dir, k, shift, px_per_cell, params, occupied,
            frac, dark_depth, saturated, glare, sides0 if i == 0 else None,
        )
        k = np.clip(np.rint(h_est).astype(np.int64), 1, kmax)
    return h_est, sigma_h


def _side_median(values: np.ndarray, on_side: np.ndarray, default: float) -> np.ndarray:
    """Per stack (C,) the median of `values` (C, J) over its directions `on_side` (C, J);
    `default` where none of them has a finite value."""
    # np.nanmedian's result by one sort (it is several times slower on these small rows): NaN
    # sorts last, so the median is the middle of the first n (infinities count, as there)
    v = np.where(on_side, values, np.nan)
    none = ~np.isfinite(v).any(axis=1)
    n = (~np.isnan(v)).sum(axis=1)
    v.sort(axis=1)
    rows = np.arange(len(v))
    lo = v[rows, np.maximum((n - 1) // 2, 0)]
    hi = v[rows, np.maximum(n // 2, 0)]
    with np.errstate(invalid="ignore"):
        med = np.where(lo == hi, lo, 0.5 * (lo + hi))
    return np.where(none, default, med)


def _refine_pass(
    pos_far: np.ndarray,
    pos_near: np.ndarray,
    strength: np.ndarray,
    s_pred: np.ndarray,
    shift_dir_all: np.ndarray,
    k0: np.ndarray,
    shift0: np.ndarray,
    px_per_cell: np.ndarray,
    params: TopsParams,
    occupied: np.ndarray | None = None,
    frac: np.ndarray | None = None,
    dark_depth: np.ndarray | None = None,
    saturated: np.ndarray | None = None,
    glare: np.ndarray | None = None,
    sides: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One pass of `_refine_fit` linearised at level k0 (C,) with image shift shift0 (C, 2):
    (height estimate, its sigma, the fitted image shift). `sides`: `_far_side` at k0 when
    known."""
    t = params.disc_thickness
    n_c = pos_far.shape[0]
    rows = np.arange(n_c)
    shift_dir = shift_dir_all[rows, k0]  # (C, J, 2)
    ds, far = _far_side(s_pred, k0, params) if sides is None else sides
    pos = np.where(far[..., None], pos_far, pos_near)
    s0 = s_pred[rows, k0] + np.einsum("cjx,cx->cj", shift_dir, shift0) + np.where(
        far, params.edge_offset_px, params.near_edge_offset_px
    )
    # the near side (where the top meets its own side band) tells where the top is, not how big it
    # is: its edge lies at an unknown offset (side colour, shading), a fourth unknown per cell
    # per-stack corrections of where each side's edges are expected (medians over a side: a
    # single direction's measure is too noisy)
    far_off = np.zeros(n_c)
    near_off = np.zeros(n_c)
    if frac is not None:
        far_off += params.flank_gain_px * (
            _side_median(frac, far, params.flank_fraction_ref) - params.flank_fraction_ref
        )
    if dark_depth is not None and params.near_depth_gain_px != 0:
        near_off += params.near_depth_gain_px * (
            _side_median(dark_depth, ~far, params.near_depth_ref) - params.near_depth_ref
        )
    if saturated is not None:
        near_off += params.saturated_near_offset_px * saturated
        if glare is not None:
            near_off += params.saturated_near_glare_gain_px / 100.0 * glare * saturated
    s0 = s0 + np.where(far, far_off[:, None], near_off[:, None])
    use = np.where(far, 1.0, params.near_side_weight)
    a = np.stack([ds, shift_dir[..., 0], shift_dir[..., 1], (~far).astype(np.float64)], axis=-1)
    n_u = 4
    sigma_px = params.jitter_sigma * px_per_cell
    lam = (params.edge_sigma_px / sigma_px) ** 2  # prior weight relative to one edge
    prior_n = np.zeros((n_c, n_u, n_u))
    prior_n[:, 1, 1] = lam
    prior_n[:, 2, 2] = lam
    prior_n[:, 3, 3] = (params.edge_sigma_px / params.near_offset_sigma_px) ** 2
    prior_b = np.zeros((n_c, n_u))
    prior_b[:, 1] = -lam * shift0[:, 0]
    prior_b[:, 2] = -lam * shift0[:, 1]
    u = np.zeros((n_c, n_u))
    w: np.ndarray | None = None
    scales = _robust_scales(params.robust_scale_start_px, params.robust_scale_px, params.refine_iterations)
    a_t = np.ascontiguousarray(a.transpose(0, 2, 1))  # (C, 4, J)
    prior = prior_n + 1e-9 * np.eye(n_u)
    single = pos.shape[2] == 1  # one candidate per direction: the pick is always it
    for c_scale in scales:
        pred = s0 + (a @ u[..., None])[..., 0]  # (C, J)
        if not single or w is None:  # the candidates nearest the model (once when single)
            if single:
                e_pos, e_str = pos[..., 0], strength[..., 0]
            else:
                pick = np.argmin(np.abs(pos - pred[:, :, None]), axis=2)[..., None]
                e_pos = np.take_along_axis(pos, pick, axis=2)[..., 0]
                e_str = np.take_along_axis(strength, pick, axis=2)[..., 0]
            found = np.isfinite(e_pos)
            resid = np.where(found, e_pos - s0, 0.0)  # measured offset from the start model
            weight = use * e_str**params.edge_strength_power
            e_found = np.where(found, e_pos, np.inf)
        # (a candidate not found: inf, as inf - pred)
        r = e_found - pred if single else np.where(found, e_pos - pred, np.inf)
        c_tuk = c_scale * 4.685
        w = weight * np.where(np.abs(r) < c_tuk, (1 - (r / c_tuk) ** 2) ** 2, 0.0)
        nmat = a_t @ (w[..., None] * a) + prior
        bvec = (a_t @ (w * resid)[..., None])[..., 0] + prior_b
        u = np.linalg.solve(nmat, bvec[..., None])[..., 0]
    assert w is not None  # refine_iterations >= 1
    r = resid - (a @ u[..., None])[..., 0]
    w_sum = w.sum(axis=1)
    var_r = (w * r * r).sum(axis=1) / np.maximum(w_sum - float(n_u), 1.0)
    var_r = np.maximum(var_r, params.min_residual_px**2)
    cov = np.linalg.inv(nmat)
    sigma_h = np.sqrt(cov[:, 0, 0] * var_r) / t
    sigma_h = np.maximum(sigma_h, params.min_height_sigma)
    h_est = k0 + u[:, 0] / t
    if occupied is not None and params.frame_offset_sigma_px > 0:
        h_est = h_est - _frame_offset(w, a, r, nmat, occupied, params, ~far) / t
    return h_est, sigma_h, shift0 + u[:, 1:3]


@functools.lru_cache(maxsize=8)
def _robust_scales(start_px: float, end_px: float, n: int) -> tuple[float, ...]:
    """The refinement's Tukey scales (px), `start_px` to `end_px` in n steps (np.linspace's, made
    once per parameters: it costs as much as an iteration's arithmetic)."""
    return tuple(np.linspace(start_px, end_px, n).tolist())


def _far_side(s_pred: np.ndarray, k0: np.ndarray, params: TopsParams) -> tuple[np.ndarray, np.ndarray]:
    """At level k0 (C,): how far each direction's outline moves out per cell of height (C, J)
    px/cell (from the levels either side, `s_pred` (C, L, J)), and which are the far side's."""
    rows = np.arange(len(k0))
    k_hi = np.minimum(k0 + 1, params.max_height + 1)
    ds = (s_pred[rows, k_hi] - s_pred[rows, k0 - 1]) / ((k_hi - (k0 - 1)) * params.disc_thickness)[:, None]
    return ds, ds >= params.min_far_ds


def _frame_offset(
    w: np.ndarray,
    a: np.ndarray,
    r: np.ndarray,
    nmat: np.ndarray,
    occupied: np.ndarray,
    params: TopsParams,
    near: np.ndarray | None = None,
) -> np.ndarray:
    """Change of each cell's height unknown (cells, (C,)) when edge offsets common to
    the whole frame are fitted with the stacks: one on every direction, and with
    `frame_near_offset_sigma_px` > 0 and `near` (C, J) a second on the near side's directions.

    Each stack's fit is linear: with its edges moved by E delta (E (J, m) the directions each
    offset moves) its unknowns change by -N^-1 A^T W E delta and its weighted cost by a quadratic
    in delta, slope -2 E^T W r at 0, curvature E^T W E - (A^T W E)^T N^-1 (A^T W E). The frame's
    delta minimises the sum over the `occupied` cells plus the priors.
    """
    cols = [np.ones_like(w)]
    sig = [params.frame_offset_sigma_px]
    if near is not None and params.frame_near_offset_sigma_px > 0:
        cols.append(near.astype(np.float64))
        sig.append(params.frame_near_offset_sigma_px)
    e = np.stack(cols, axis=-1)  # (C, J, m)
    we = w[..., None] * e
    atwe = np.einsum("cjk,cjm->ckm", a, we)  # (C, 4, m)
    g = np.linalg.solve(nmat, atwe)  # (C, 4, m)
    slope = np.einsum("cjm,cj->cm", we, r)
    curv = np.einsum("cjm,cjn->cmn", we, e) - np.einsum("ckm,ckn->cmn", atwe, g)
    lam = np.diag([(params.edge_sigma_px / sg) ** 2 for sg in sig])
    delta = np.linalg.solve(curv[occupied].sum(axis=0) + lam, slope[occupied].sum(axis=0))
    return g[:, 0, :] @ delta


# --- board-only geometry (cached) -------------------------------------------------------------
@dataclass(frozen=True)
class _CoarseCells:
    """`_coarse_indices` of a geometry's cells (C, ...), kept with it: filled in for a cell the
    first time it holds a stack (a new board fit pays only for its stacks, the referee's
    next frames on the same fit for none); the one part of `_Geometry` written after its build."""

    idx: np.ndarray  # (C, K, D, J') int32
    idx_in: np.ndarray  # (C, K, D, J') int32
    inner_ok: np.ndarray  # (C, K, D, J') bool
    penalty: np.ndarray  # (C, D)
    done: np.ndarray  # (C,) bool
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass(frozen=True)
class _Geometry:
    """What `read_tops` derives from the board fit, camera model and parameters alone: where to
    sample (as `cv2.remap` maps) and the predicted outlines. Arrays are read-only."""

    n_ref: int
    n_floor: int
    n_points: int
    n_samples: int
    # the sampling maps in `cv2.convertMaps`' fixed point (int16 (..., 2) pixel, uint16 (...)
    # 1/32 px fraction): what `cv2.remap` turns float maps into first, done once per fit
    map_xy: np.ndarray  # (rows, 512, 2): the reference points and floor patches
    map_frac: np.ndarray
    # the profiles' sampling lines: anchor + s normal, s from s_lo in steps of profile_step_px
    # (their maps made for the stacks' cells only, `_stack_cells`)
    anchor: np.ndarray  # (C, J, 2) px
    profile_step_px: float
    s_lo: np.ndarray  # (C, J) px: first profile sample along each sampling line
    hyp: np.ndarray  # (C, K, J) px: outline of heights 1..K along the lines
    s_pred: np.ndarray  # (C, L, J) px: outline of levels 0..K+1
    shift_dir: np.ndarray  # (C, L, J, 2): d s_pred / d image shift
    normal: np.ndarray  # (C, J, 2)
    px_per_cell: np.ndarray  # (C,)
    shift_grid: np.ndarray  # (D, 2) px
    top_px: np.ndarray  # (C, K, M, 2) float32: colour samples of the top face per height
    #: the coarse fit's board-only part, worked out for a cell when it first holds a stack
    coarse: _CoarseCells
    #: the geometry of the last few sets of stacks' cells (`_stack_cells`), by their indices
    stacks: dict[bytes, _StackCells] = field(default_factory=dict)


@dataclass(frozen=True)
class _StackCells:
    """A `_Geometry` restricted to the cells holding stacks in a frame (`_cells_of`), their rows
    of the profile maps and, once worked out, their part of the coarse fit's indices: kept with
    the geometry, as the next frames of a board fit mostly hold their stacks on the same cells
    (arrays read-only)."""

    geo: _Geometry
    prof_map_xy: np.ndarray  # (C, J * n_samples, 2): each cell's profiles, one row a cell
    prof_map_frac: np.ndarray
    #: (idx, idx_in, inner_ok, penalty) of these cells, filled when every one of them is done
    coarse: list[tuple[np.ndarray, ...]] = field(default_factory=list)


_STACK_SETS_KEPT = 4  # sets of stacks' cells kept per geometry (the position before and after a move, ...)


def _stack_cells(geo: _Geometry, cells: np.ndarray) -> _StackCells:
    """`geo` restricted to the cells `cells` (indices into CELLS) and their profile maps, made
    once for each set of cells the last few frames held stacks on."""
    key = np.ascontiguousarray(cells, np.int64).tobytes()
    got = geo.stacks.get(key)
    if got is None:
        sub = _cells_of(geo, cells)
        got = _StackCells(sub, *_profile_maps(sub.s_lo, geo.anchor[cells], sub.normal, geo.profile_step_px,
                                              geo.n_samples))
        for arr in (*vars(got.geo).values(), got.prof_map_xy, got.prof_map_frac):
            if isinstance(arr, np.ndarray):
                arr.flags.writeable = False
        with geo.coarse.lock:  # read_tops may run in several threads
            while len(geo.stacks) >= _STACK_SETS_KEPT:
                geo.stacks.pop(next(iter(geo.stacks)))
            geo.stacks[key] = got
    return got


def _profile_maps(
    s_lo: np.ndarray, anchor: np.ndarray, normal: np.ndarray, step: float, n_s: int
) -> tuple[np.ndarray, np.ndarray]:
    """The remap maps (`_fixed_maps`) of profiles along the lines anchor + s normal ((C, J, 2)
    each), n_s samples from s_lo (C, J) in steps of `step`: (C, J * n_s, 2), (C, J * n_s)."""
    s_grid = (s_lo[:, :, None] + step * np.arange(n_s)[None, None, :]).astype(np.float32)
    maps = []
    for axis in range(2):  # x, y of every sample
        a_f = anchor[..., axis].astype(np.float32)[:, :, None]
        n_f = normal[..., axis].astype(np.float32)[:, :, None]
        maps.append((a_f + s_grid * n_f).reshape(len(s_lo), -1))
    return _fixed_maps(maps[0], maps[1])


_GEOMETRY_CACHE: dict[tuple[Any, ...], _Geometry] = {}
_GEOMETRY_CACHE_SIZE = 4
_GEOMETRY_LOCK = threading.Lock()


def _geometry(
    board: BoardFit,
    image_size: tuple[int, int],
    params: TopsParams,
    intrinsics: Intrinsics | None,
    grid: tuple[np.ndarray, np.ndarray] | None = None,
) -> _Geometry:
    """The board-only part of `read_tops`, cached on (corners, camera model, grid points, frame
    size, params): the referee reads every settled frame on the same board fit."""
    corners = np.ascontiguousarray(board.corners_px, dtype=np.float64)
    key: tuple[Any, ...] = (corners.tobytes(), tuple(image_size), params)
    if grid is not None:
        key += tuple(np.ascontiguousarray(g, dtype=np.float64).tobytes() for g in grid)
    if intrinsics is not None:
        key += (
            np.ascontiguousarray(intrinsics.camera_matrix, dtype=np.float64).tobytes(),
            np.ascontiguousarray(intrinsics.dist_coeffs, dtype=np.float64).tobytes(),
        )
    geo = _GEOMETRY_CACHE.get(key)
    if geo is None:
        geo = _build_geometry(camera_from_board(board, image_size, params, intrinsics, grid), params)
        with _GEOMETRY_LOCK:  # read_tops may run in several threads
            while len(_GEOMETRY_CACHE) >= _GEOMETRY_CACHE_SIZE:
                _GEOMETRY_CACHE.pop(next(iter(_GEOMETRY_CACHE)))
            _GEOMETRY_CACHE[key] = geo
    return geo


def _build_geometry(cam: _Camera, params: TopsParams) -> _Geometry:
    n_cells = len(CELLS)
    radius = params.disc_diameter / 2.0
    t = params.disc_thickness
    n_dir = params.n_directions
    kmax = params.max_height
    centres = CELL_CENTRES_BOARD

    # 1. board reference samples (light squares near each cell's corners) and floor patches
    off = params.reference_offset
    ref_offsets = np.array([[-off, -off], [off, -off], [off, off], [-off, off]])
    ref_pts = (centres[:, None, :] + ref_offsets[None]).reshape(-1, 2)
    floor_off = _disc_points(params.floor_radius, 2, 6)
    floor_pts = (centres[:, None, :] + floor_off[None]).reshape(-1, 2)

    # 2. candidate top circles: heights 0..kmax+1 (levels), n_dir directions
    levels = np.arange(0, kmax + 2, dtype=np.float64)
    theta = np.arange(n_dir) * 2 * np.pi / n_dir
    circ = radius * np.stack([np.cos(theta), np.sin(theta)], axis=1)  # (J, 2)
    n_lv = levels.size
    per = np.empty((n_cells, n_lv, n_dir + 1, 3))
    per[:, :, :n_dir, :2] = centres[:, None, None, :] + circ[None, None]
    per[:, :, n_dir, :2] = centres[:, None, :]
    per[:, :, :, 2] = (levels * t)[None, :, None]

    # colour samples inside the top face of each height 1..kmax (projected with the rest: one
    # call of the camera model)
    col_off = _disc_points(radius * params.colour_radius_frac, 2, 6)
    m = col_off.shape[0]
    top_board = np.empty((n_cells, kmax, m, 3))
    top_board[..., :2] = centres[:, None, None, :] + col_off[None, None]
    top_board[..., 2] = (np.arange(1, kmax + 1) * t)[None, :, None]

    n_ref, n_floor = ref_pts.shape[0], floor_pts.shape[0]
    n_all = n_ref + n_floor + per[..., 0].size
    all_board = np.empty((n_all + top_board[..., 0].size, 3))
    all_board[:n_ref, :2], all_board[n_ref : n_ref + n_floor, :2] = ref_pts, floor_pts
    all_board[: n_ref + n_floor, 2] = 0.0
    all_board[n_ref + n_floor : n_all] = per.reshape(-1, 3)
    all_board[n_all:] = top_board.reshape(-1, 3)
    projected = cam.project(all_board)
    all_px = projected[:n_all].astype(np.float64)
    top_px = projected[n_all:].reshape(n_cells, kmax, m, 2)
    per_px = all_px[n_ref + n_floor :].reshape(n_cells, n_lv, n_dir + 1, 2)
    rim_px = per_px[:, :, :n_dir]  # (C, L, J, 2)
    ctr_px = per_px[:, :, n_dir]  # (C, L, 2)

    # normals: radial directions at the middle height
    mid = min(3, kmax)
    normal = rim_px[:, mid] - ctr_px[:, mid, None, :]
    normal /= np.linalg.norm(normal, axis=-1, keepdims=True) + 1e-9  # (C, J, 2)
    anchor = rim_px[:, mid]  # (C, J, 2)
    # local image scale at each top (px per cell), from the projected radius
    px_per_cell = np.linalg.norm(rim_px[:, mid] - ctr_px[:, mid, None, :], axis=-1).mean(axis=1) / radius
    # predicted outlines where the projected circles cross the sampling lines (a rim point's
    # projection onto its line is off by up to ~1 px where the top is displaced sideways)
    s_pred, shift_dir_all = _line_crossings(rim_px, anchor, normal)  # (C, L, J), (C, L, J, 2)

    # profile sample positions (long enough for every height and every shift of the coarse grid)
    step = params.profile_step_px
    hyp = s_pred[:, 1 : kmax + 1]  # (C, K, J)
    shift_grid = _shift_grid(params)  # (D, 2) px
    margin = params.profile_margin_px + float(np.linalg.norm(shift_grid, axis=1).max())
    s_lo = hyp.min(axis=1) - margin  # (C, J)
    span = float((hyp.max(axis=1) - hyp.min(axis=1)).max()) + 2 * margin
    n_s = math.ceil(span / step) + 1
    n_head = n_ref + n_floor
    n_points = n_head + s_lo.size * n_s
    rows = max(1, -(-n_head // _MAP_COLS))
    maps = np.zeros((2, rows * _MAP_COLS), dtype=np.float32)
    for axis in range(2):  # x, y of the reference points (the profiles' maps: `_stack_cells`)
        maps[axis, :n_head] = all_px[:n_head, axis]
    map_xy, map_frac = _fixed_maps(maps[0].reshape(rows, _MAP_COLS), maps[1].reshape(rows, _MAP_COLS))

    n_j = len(range(0, n_dir, params.coarse_direction_step))
    n_d = shift_grid.shape[0]
    coarse = _CoarseCells(np.zeros((n_cells, kmax, n_d, n_j), np.int32), np.zeros((n_cells, kmax, n_d, n_j), np.int32),
                          np.zeros((n_cells, kmax, n_d, n_j), bool), np.zeros((n_cells, n_d)), np.zeros(n_cells, bool))
    geo = _Geometry(
        n_ref, n_floor, n_points, n_s, map_xy, map_frac, np.ascontiguousarray(anchor), step, s_lo, hyp, s_pred,
        np.ascontiguousarray(shift_dir_all), normal, px_per_cell, shift_grid, top_px, coarse,
    )
    for value in vars(geo).values():
        if isinstance(value, np.ndarray):
            value.flags.writeable = False
    return geo



# --- the stage --------------------------------------------------------------------------------
def read_tops(
    frame: np.ndarray,
    board: BoardFit,
    params: TopsParams = TopsParams(),
    *,
    colours: Mapping[str, Any] | None = None,
    intrinsics: Intrinsics | None = None,
    focal_scale: float = 1.0,
) -> TopsReading:
    """Read the top colour (or empty) of all 52 cells, and the heights when `intrinsics` is given.

    `frame` is the BGR image the `board` fit belongs to. `colours` is a calibrated colour model
    {letter: BGR} as the pieces look in this camera and light; without it the default colours are
    compared after white-balancing the frame on the board's light squares.

    The frame is sampled once at every point the cached geometry asks for; the board's light
    squares give the white balance; the patch at each cell's floor tells empty from occupied;
    the edge profiles give a coarse height and shift per cell; the sub-pixel edge positions
    refine the height; the top face at that height gives the colour; the reading is put
    together cell by cell.

    With the camera from the board's own grid (no `intrinsics`), the heights set its focal
    length: read, scaled, read again until it settles. `focal_scale` is where that starts: the
    reading's own `focal_scale` from an earlier frame of the same board fit (the scale is the
    fit's): when this frame's stacks agree with it (the next step under 1 %, as where the
    steps stop) that one reading stands, else the steps start from the grid's own focal length
    as without it. The same frame again gives the same reading, now in one reading instead of
    several (each on a geometry of its own).
    """
    if not (math.isfinite(focal_scale) and focal_scale > 0):
        raise ValueError(f"focal_scale must be a positive number, got {focal_scale!r}")
    _check_tops_frame(frame)
    letters, ref_chroma, ref_bgr = _colour_model(colours)
    _check_frame_size(frame, intrinsics)
    grid = _grid_camera(board) if intrinsics is None else None
    if grid is None:
        return _read(frame, board, params, colours, letters, ref_chroma, ref_bgr, intrinsics)
    # the camera from the board's own grid (`vision.board_camera`): its focal length, refined
    # on the stacks (heights are whole pieces), sets the scale of every height
    cam, focal_sigma_px, points = grid
    f0 = float(cam.camera_matrix[0, 0])
    if focal_scale != 1.0:
        reading = _read(frame, board, params, colours, letters, ref_chroma, ref_bgr,
                        _scaled_focal(cam, 1.0 / focal_scale), points)
        scale, scale_sigma = height_scale(reading, f0, focal_sigma_px, params.max_height, done=focal_scale)
        if abs(scale - 1.0) <= 0.01:  # this frame's stacks agree with it: the reading stands
            return _with_scale_sigma(reading, scale_sigma, focal_scale)
        # else from the grid's own focal length, as without it (the factor's cost has several
        # minima where the stacks are few or alike: a start elsewhere can settle in another)
    reading = _read(frame, board, params, colours, letters, ref_chroma, ref_bgr, cam, points)
    total, scale_sigma = 1.0, 0.0
    read_at = total  # the factor the reading was made with
    # a focal length far off reads tall stacks past the tallest hypothesis: the factor from
    # the others, then read again, until it settles (each pass ~1 % on the simulated table)
    for _ in range(params.height_scale_passes):
        scale, _sigma = height_scale(reading, f0, focal_sigma_px, params.max_height, done=total)
        # the factor's sigma stays the one of the whole chain (against the grid's prior)
        total *= scale
        scale_sigma = _sigma
        if abs(scale - 1.0) <= 0.01:
            break
        reading = _read(frame, board, params, colours, letters, ref_chroma, ref_bgr,
                        _scaled_focal(cam, 1.0 / total), points)
        read_at = total
    return _with_scale_sigma(reading, scale_sigma, read_at)


def _read(
    frame: np.ndarray, board: BoardFit, params: TopsParams, colours: Mapping[str, Any] | None,
    letters: list[str], ref_chroma: np.ndarray, ref_bgr: np.ndarray, intrinsics: Intrinsics | None,
    grid: tuple[np.ndarray, np.ndarray] | None = None,
) -> TopsReading:
    """`read_tops` through one camera model (heights reported when it is given)."""
    calibrated = colours is not None
    geo = _geometry(board, (frame.shape[1], frame.shape[0]), params, intrinsics, grid)
    ref_s, floor_s = _sample_floor(frame, geo)
    wb, board_chroma = _white_balance(ref_s, calibrated)
    ref_rel = ref_chroma - (board_chroma if calibrated else 0.0)  # the model against the board
    floor_sat, occupied = _occupancy(floor_s, wb, board_chroma, params)
    # the stacks only: an empty cell has no top to fit (nothing below couples the cells but the
    # frame's common edge offset, which is fitted over the occupied ones anyway)
    occ = np.flatnonzero(occupied)
    if occ.size == 0:
        n = len(CELLS)
        return _reading(letters, floor_sat, occupied, np.ones(n, np.int64), np.zeros(n, np.int64), np.zeros(n),
                        np.full(n, np.pi), np.zeros(n), np.zeros(n), params.empty_saturation,
                        intrinsics is not None)
    stacks = _stack_cells(geo, occ)
    sub = stacks.geo
    prof = _sample_profiles(frame, stacks, params)
    edge, s_edge0, k0, shift0 = _coarse_heights(prof, wb, stacks, params, geo, occ)
    h_occ, sig_occ = _refined_heights(
        prof, wb, board_chroma, ref_rel, ref_bgr, np.ones(len(occ), bool), edge, s_edge0,
        k0, shift0, sub, params,
    )
    k_occ, best_occ, d1_occ, d2_occ = _top_colours(frame, sub, h_occ, shift0, wb, board_chroma, ref_rel,
                                                   len(letters), params)
    n = len(CELLS)
    h_est, sigma_h, k_final = np.zeros(n), np.zeros(n), np.ones(n, np.int64)
    best, d1, d2 = np.zeros(n, np.int64), np.zeros(n), np.full(n, np.pi)
    h_est[occ], sigma_h[occ], k_final[occ] = h_occ, sig_occ, k_occ
    best[occ], d1[occ], d2[occ] = best_occ, d1_occ, d2_occ
    return _reading(letters, floor_sat, occupied, k_final, best, d1, d2, h_est, sigma_h,
                    params.empty_saturation, intrinsics is not None)


def _cells_of(geo: _Geometry, idx: np.ndarray) -> _Geometry:
    """`geo` restricted to the cells `idx` (the per-cell arrays; the sampling maps stay)."""
    from dataclasses import replace

    return replace(geo, s_lo=geo.s_lo[idx], hyp=geo.hyp[idx], s_pred=geo.s_pred[idx],
                   shift_dir=geo.shift_dir[idx], normal=geo.normal[idx], px_per_cell=geo.px_per_cell[idx],
                   top_px=geo.top_px[idx])


def _grid_camera(board: BoardFit) -> tuple[Intrinsics, float, tuple[np.ndarray, np.ndarray] | None] | None:
    """The camera the board fit carries from its own grid (extra["lens"] == "grid"), with its
    focal length's sigma (px) and the lattice points measured, or None."""
    from vision.camera import Intrinsics

    cam = board.extra.get("intrinsics")
    if board.extra.get("lens") != "grid" or not isinstance(cam, Intrinsics):
        return None
    px, pts_board = board.extra.get("grid_points_px"), board.extra.get("grid_points_board")
    points = (px, pts_board) if isinstance(px, np.ndarray) and isinstance(pts_board, np.ndarray) else None
    return cam, float(board.extra.get("focal_sigma_px", math.inf)), points  # type: ignore[arg-type]


def _scaled_focal(cam: Intrinsics, factor: float) -> Intrinsics:
    """The same camera with its focal length times `factor` (the lens's pixel mapping kept:
    k1 and k2 act on the normalised radius, which scales by 1 / factor)."""
    from vision.camera import Intrinsics

    k = np.array(cam.camera_matrix, dtype=np.float64)
    k[0, 0] *= factor
    k[1, 1] *= factor
    d = np.array(cam.dist_coeffs, dtype=np.float64)
    if d.size >= 2:
        d[0] *= factor**2
        d[1] *= factor**4
    if d.size >= 5:
        d[4] *= factor**6
    return Intrinsics(k, d, cam.image_size)


def height_scale(
    reading: TopsReading, focal_px: float, focal_sigma_px: float, max_height: int = MAX_STACK,
    *, done: float = 1.0,
) -> tuple[float, float]:
    """The factor (and its sigma) by which a reading's continuous heights are too large when the
    focal length behind them is uncertain (`focal_sigma_px`).

    A top k pieces up, seen from a camera Z above the board, appears where it does through
    k t / (Z - k t); posed on the same board corners, a focal length a times the true one puts
    the camera a Z up and every height estimate at a k (exactly, for the displacement and the
    enlargement alike). Heights are whole pieces, so the factor is the one that brings the
    estimates nearest whole numbers 1..max_height, weighed against the focal length's prior
    (log-normal with the grid's relative sigma, at least 2 %: the principal point and the lens
    model are assumed). Each stack's misfit is capped (a misread stack does not decide it).
    `done`: the factor already taken off the focal length before this reading (the prior stays
    on the grid's own focal length `focal_px`)."""
    if reading.height_estimate is None or reading.height_sigma is None:
        return 1.0, 0.0
    occ = [c for c, t in reading.tops.items() if t != EMPTY]
    h = np.array([reading.height_estimate[c] for c in occ], np.float64)
    s = np.maximum(np.array([reading.height_sigma[c] for c in occ], np.float64), 0.1)
    # estimates at the ends of the hypotheses' range say only "at least" / "at most"
    high, low = h >= max_height + 0.45, h <= 0.55
    # with no focal length from the grid (head on), the camera's prior: log-normal, sigma 0.35
    # (a factor of 2 either way at two sigmas: from a phone-like to a wide-angle lens)
    prior = min(max(focal_sigma_px / max(focal_px, 1e-9), 0.02), 0.35) if math.isfinite(focal_sigma_px) else 0.35
    if h.size == 0:
        return 1.0, prior
    # the factor's range: the focal length's prior, within what makes the stacks 0.5..max+0.5
    a = np.exp(np.linspace(math.log(0.25), math.log(4.0), 694))
    u = h[None, :] / a[:, None]
    k = np.clip(np.rint(u), 1, max_height)
    k = np.where(high[None, :], np.minimum(u, max_height), k)  # at least u: fine up to the tallest
    k = np.where(low[None, :], np.maximum(u, 1.0), k)  # at most u: fine down to one piece
    cost = np.minimum(((u - k) / (s[None, :] / a[:, None])) ** 2, 9.0).sum(axis=1)
    cost += (np.log(a * done) / prior) ** 2
    best = int(np.argmin(cost))
    # sigma: the spread of the factor's posterior (the cost is -2 log likelihood), which is
    # wide where several factors fit (all stacks as tall, the grid's prior loose)
    p = np.exp(-0.5 * (cost - cost[best]))
    la = np.log(a)
    sigma = math.sqrt(float(p @ (la - la[best]) ** 2) / float(p.sum()))
    return float(a[best]), float(sigma)


def _with_scale_sigma(reading: TopsReading, scale_sigma: float, focal_scale: float) -> TopsReading:
    """Each stack's height sigma with the scale's relative sigma added (height times it), and
    the focal length's factor the reading was made with."""
    if reading.height_sigma is None or reading.heights is None:
        return TopsReading(reading.tops, reading.confidence, reading.heights, reading.height_sigma,
                           reading.height_estimate, focal_scale)
    sig = {c: float(math.hypot(v, reading.heights[c] * scale_sigma)) if reading.heights[c] else v
           for c, v in reading.height_sigma.items()}
    return TopsReading(reading.tops, reading.confidence, reading.heights, sig, reading.height_estimate,
                       focal_scale)


def _check_tops_frame(frame: np.ndarray) -> None:
    """InvalidImageError unless `frame` is a uint8 BGR image."""
    if not isinstance(frame, np.ndarray) or frame.ndim != 3 or frame.shape[2] != 3:
        shape = getattr(frame, "shape", None)
        raise InvalidImageError(f"frame must be a BGR image of shape (H, W, 3), got shape {shape}")
    if frame.dtype != np.uint8:
        raise InvalidImageError(f"frame must be uint8 BGR, got dtype {frame.dtype}")


def _check_frame_size(frame: np.ndarray, intrinsics: Intrinsics | None) -> None:
    """InvalidIntrinsicsError when the intrinsics are for another frame size."""
    h_img, w_img = frame.shape[:2]
    if intrinsics is not None and tuple(intrinsics.image_size) != (w_img, h_img):
        raise InvalidIntrinsicsError(
            f"intrinsics are for {intrinsics.image_size[0]}x{intrinsics.image_size[1]} px frames, "
            f"this frame is {w_img}x{h_img} (use Intrinsics.scaled_to)"
        )


def _sample_floor(frame: np.ndarray, geo: _Geometry) -> tuple[np.ndarray, np.ndarray]:
    """The light-square references (C, 4, 3) and the floor patches (C, M, 3) of every cell."""
    n_cells = len(CELLS)
    n_ref, n_floor = geo.n_ref, geo.n_floor
    samples = _sample_maps(frame, geo.map_xy, geo.map_frac, n_ref + n_floor)
    return samples[:n_ref].reshape(n_cells, 4, 3), samples[n_ref:].reshape(n_cells, -1, 3)


def _sample_profiles(frame: np.ndarray, stacks: _StackCells, params: TopsParams) -> np.ndarray:
    """The edge profiles (C, n_dir, n_s, 3) of the stacks' cells: their rows of the profile
    maps, sampled as they are."""
    n_c, n_s = len(stacks.prof_map_xy), stacks.geo.n_samples
    return _sample_maps(frame, stacks.prof_map_xy, stacks.prof_map_frac, n_c * params.n_directions * n_s).reshape(
        n_c, params.n_directions, n_s, 3)


def _percentile(values: np.ndarray, q: float) -> float:
    """`np.percentile(values, q)` (linear between the two nearest ranks) of a 1-d array by one
    partition (np.percentile's own overhead is 15 times that on ~200 values)."""
    n = values.size
    pos = q / 100.0 * (n - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, n - 1)
    v = np.partition(values, [lo, hi])
    return float(v[lo] + (pos - lo) * (v[hi] - v[lo]))


def _white_balance(ref_s: np.ndarray, calibrated: bool) -> tuple[np.ndarray, np.ndarray]:
    """The white balance on the board's light squares (robust: median over all cells) and the
    board's chroma through it: (gains (3,) float32, ones when `calibrated`; chroma (2,))."""
    # the brighter part of the samples: a misplaced sample lands on a grid line or a piece
    flat_ref = ref_s.reshape(-1, 3)
    bright = flat_ref.sum(axis=1)
    board_ref = row_median(flat_ref[bright >= _percentile(bright, 40.0)].T)
    if float(board_ref.min()) < 8.0:
        raise BoardPoseError(
            f"the board's light squares look black (median BGR {board_ref.round(1).tolist()}): "
            "wrong board fit or no light"
        )
    gains = board_ref.mean() / board_ref
    wb = np.ones(3, dtype=np.float32) if calibrated else gains.astype(np.float32)
    return wb, _chroma((board_ref * wb)[None])[0]


def _occupancy(
    floor_s: np.ndarray, wb: np.ndarray, board_chroma: np.ndarray, params: TopsParams
) -> tuple[np.ndarray, np.ndarray]:
    """Empty or occupied, from the floor patch: (its saturation against the board (C,),
    occupied (C,) bool)."""
    # per sample, then the median: the side band of a stack can mix complementary colours
    # (blue over yellow), whose mean or median colour would look grey
    floor_chroma = _chroma(floor_s * wb)  # (C, M, 2)
    floor_sat = row_median(np.linalg.norm(floor_chroma - board_chroma, axis=2))
    return floor_sat, floor_sat > params.empty_saturation


def _coarse_heights(
    prof: np.ndarray, wb: np.ndarray, stacks: _StackCells, params: TopsParams, geo: _Geometry, cells: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Edge profiles of the cells `cells` (indices into CELLS; `stacks` is `geo` restricted to
    them) -> coarse height and shift per cell: (edge strength of the white-balanced profiles,
    edge start, level k0 (C,), shift0 (C, 2))."""
    edge, s_edge0 = _edge_profiles(prof, stacks.geo.s_lo, params.profile_step_px, params.edge_halfwidth_px, wb)
    # the coarse fit on every `coarse_direction_step`-th direction (it only picks the level)
    js = slice(None, None, params.coarse_direction_step)
    c = geo.coarse
    first = ~c.done[cells]
    todo = cells[first]
    if todo.size:  # cells holding a stack for the first time on this fit
        got = _coarse_indices(s_edge0[first][:, js], geo.hyp[todo][:, :, js], geo.normal[todo][:, js],
                              geo.shift_grid, geo.px_per_cell[todo], edge.shape[2], params)
        with c.lock:  # read_tops may run in several threads
            for arr, value in zip((c.idx, c.idx_in, c.inner_ok, c.penalty), got, strict=True):
                arr[todo] = value
            c.done[todo] = True
    if not stacks.coarse:  # these cells' indices, kept with them (every one is done now)
        part = tuple(arr[cells] for arr in (c.idx, c.idx_in, c.inner_ok, c.penalty))
        for arr in part:
            arr.flags.writeable = False
        stacks.coarse.append(part)
    k0, shift0 = _coarse_fit(np.ascontiguousarray(edge[:, js]), *stacks.coarse[0], geo.shift_grid, params)
    return edge, s_edge0, k0, shift0


def _refined_heights(
    prof: np.ndarray,
    wb: np.ndarray,
    board_chroma: np.ndarray,
    ref_rel: np.ndarray,
    ref_bgr: np.ndarray,
    occupied: np.ndarray,
    edge: np.ndarray,
    s_edge0: np.ndarray,
    k0: np.ndarray,
    shift0: np.ndarray,
    geo: _Geometry,
    params: TopsParams,
) -> tuple[np.ndarray, np.ndarray]:
    """Sub-pixel refinement: height (C,) in [0.5, max_height + 0.49] and its sigma (C,) from the
    edge positions, with the near side's darkening, saturation and glare taken into account."""
    s_lo, step = geo.s_lo, params.profile_step_px
    # the tops' own colour (raw, and white-balanced: times `wb`), taken once
    top_raw = _top_colour(prof)  # (C, 3)
    top_wb = top_raw * wb
    pos_dark = dark_depth = saturated = None
    if params.saturation_level > 0:
        saturated = (top_raw >= params.saturation_level).any(axis=1)
    glare = local = glare_all = None
    if params.glare_min > 0 and params.near_darkening > 0:
        # glare per stack from its top colour against the colour model (its letter by hue)
        hue_d = _hue_distances(_chroma(top_wb) - board_chroma, ref_rel)
        glare = _glare_levels(top_raw, wb, ref_bgr, np.argmin(hue_d, axis=1), params.saturation_level)
        glare = np.clip(glare, 0.0, 0.8 * top_raw.min(axis=1))
        glare_all = glare
        local = occupied & (glare > params.glare_min)
        # taken off the colours where the top is not saturated; a saturated one: its brightness only
        glare = np.where(local & ~saturated if saturated is not None else local, glare, 0.0)
    sides = None  # the first pass's sides (at k0), when measured here
    if params.near_darkening > 0:
        # the refinement takes the darkening's crossings and depths on the near side only: with
        # one pass (at k0) that side is known now, and the others' need not be measured
        sides = _far_side(geo.s_pred, k0, params)
        near = ~sides[1] if params.refine_passes == 1 else None
        pos_dark, dark_depth = _darkening_crossings(
            prof, s_lo, step, params.near_darkening, params.near_depth_reach_px,
            params.saturation_level, glare,
            (params.near_reference_far_px, params.near_reference_near_px,
             params.near_reference_max_change),
            local, top_raw, near,
        )
        if saturated is not None and params.saturated_min_channels > 0:
            # a top saturated in all but one channel: its near side is not measured
            few = saturated & ((top_raw < params.saturation_level).sum(axis=1) < params.saturated_min_channels)
            pos_dark[few] = np.inf
    h_est, sigma_h = _refine_fit(
        edge, s_edge0, geo.s_pred, geo.shift_dir, k0, shift0, geo.px_per_cell, params, pos_dark,
        occupied, (prof, s_lo, step, wb), dark_depth, saturated, glare_all, top_wb, sides,
    )
    return np.clip(h_est, 0.5, params.max_height + 0.49), sigma_h


def _top_colours(
    frame: np.ndarray,
    geo: _Geometry,
    h_est: np.ndarray,
    shift0: np.ndarray,
    wb: np.ndarray,
    board_chroma: np.ndarray,
    ref_rel: np.ndarray,
    n_letters: int,
    params: TopsParams,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Colour of the top face, at the chosen height: (height k (C,), nearest letter index (C,),
    its hue distance (C,), the second nearest's (C,), pi with one letter)."""
    n_cells = len(h_est)
    k_final = np.clip(np.rint(h_est).astype(np.int64), 1, params.max_height)
    m = geo.top_px.shape[2]
    top_px = geo.top_px[np.arange(n_cells), k_final - 1]  # (C, M, 2)
    top_px = (top_px + shift0[:, None, :].astype(np.float32)).reshape(-1, 2)
    top_s = sample_points(frame, top_px).reshape(n_cells, m, 3)
    top_chroma = _chroma(row_median(top_s) * wb) - board_chroma  # (C, 2)
    d = _hue_distances(top_chroma, ref_rel)  # (C, nL) radians
    order = np.argsort(d, axis=1)
    rows = np.arange(n_cells)
    best = order[:, 0]
    d1 = d[rows, best]
    d2 = d[rows, order[:, 1]] if n_letters > 1 else np.full(n_cells, np.pi)
    return k_final, best, d1, d2


def _reading(
    letters: list[str],
    floor_sat: np.ndarray,
    occupied: np.ndarray,
    k_final: np.ndarray,
    best: np.ndarray,
    d1: np.ndarray,
    d2: np.ndarray,
    h_est: np.ndarray,
    sigma_h: np.ndarray,
    empty_thresh: float,
    with_heights: bool,
) -> TopsReading:
    """The reading put together cell by cell: top letter or EMPTY, confidence (the weaker of
    the occupancy's and the colour's margins), and the heights when the camera model is known."""
    # per cell at once (a loop over the 52 cells cost as much as the colour reading)
    occ_conf = np.minimum(1.0, np.abs(floor_sat.astype(np.float64) - empty_thresh) / max(empty_thresh, 1e-6))
    col_conf = np.minimum(1.0, (d2 - d1) / (d2 + d1 + 1e-9))
    conf_v = np.where(occupied, np.minimum(occ_conf, col_conf), occ_conf).tolist()
    letter_v = [letters[b] if o else EMPTY for b, o in zip(best.tolist(), occupied.tolist(), strict=True)]
    tops = dict(zip(CELLS, letter_v, strict=True))
    conf = dict(zip(CELLS, conf_v, strict=True))
    heights = dict(zip(CELLS, np.where(occupied, k_final, 0).tolist(), strict=True))
    hsig = dict(zip(CELLS, np.where(occupied, sigma_h, 0.0).tolist(), strict=True))
    hest = dict(zip(CELLS, np.where(occupied, h_est, 0.0).tolist(), strict=True))
    if not with_heights:
        return TopsReading(tops, conf, None, None, None)
    return TopsReading(tops, conf, heights, hsig, hest)


# --- debugging entry point --------------------------------------------------------------------
def _main(argv: list[str] | None = None) -> int:  # pragma: no cover - manual debugging
    import argparse
    import json

    import cv2

    parser = argparse.ArgumentParser(description="read Domination stack tops on one image")
    parser.add_argument("image")
    parser.add_argument("--corners", help="x0,y0,x1,y1,x2,y2,x3,y3 board corners in px")
    args = parser.parse_args(argv)
    frame = cv2.imread(args.image, cv2.IMREAD_COLOR)
    if frame is None:
        raise SystemExit(f"cannot read image {args.image}")
    from vision.board import find_board

    corners = None
    if args.corners:
        corners = np.array([float(v) for v in args.corners.split(",")]).reshape(4, 2)
    board = find_board(frame, game="domination", corners_px=corners)
    reading = read_tops(frame, board)
    print(json.dumps({"image": args.image, **reading.to_dict()}))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(_main())
