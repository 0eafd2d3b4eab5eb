"""Is the board clear of hands and still? `SceneMonitor(params).update(frame, board)`.

Each frame is warped to a small top-down image of the board plus a margin around it (arms reach
in from outside). Two detectors run on it:

- skin: pixels whose chroma (YCrCb) sits in the skin range *relative to the plate's own chroma*
  (so a colour cast moves both together); Domination's red and yellow pieces lie far outside
  that range. A hand is present when the skin area exceeds `min_skin_fraction`. A coloured board
  (green or blue felt) says nothing of the light's cast: a cast moves a neutral surface along
  the warm-cool line (tungsten: Cr up, Cb down; daylight the other way), so the part of the
  board's chroma off that line, or beyond the strongest cast, is the board's own colour; there
  skin is measured against the cast alone (the board's chroma projected on that line, within
  the casts' range) and must also differ from the local board's chroma.
- motion: the difference to the previous frame after normalising the overall brightness (light
  flicker, auto exposure), thresholded above the sensor noise measured in the same difference.
  A moving blob that crosses into the margin is an arm even without visible skin (sleeves).

`settled` = no hand and no motion over the last `settle_frames` frames.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vision.camera import Intrinsics
from vision.geometry import BoardFit, rectify

#: Domination's 12 cut cells (a1 b1 a2, g1 h1 h2, a7 a8 b8, g8 h8 h7) as board (x, y) of their
#: top-left corners: cell (file f, rank r) spans [f, f + 1] x [8 - r, 9 - r]
_DOMINATION_CUT_XY: tuple[tuple[int, int], ...] = tuple(
    ("abcdefgh".index(c[0]), 8 - int(c[1]))
    for c in ("a1", "b1", "a2", "g1", "h1", "h2", "a7", "a8", "b8", "g8", "h8", "h7")
)


@dataclass(frozen=True)
class SceneParams:
    """Tuning of the scene monitor (shipped defaults)."""

    #: side of the rectified working image (board plus margins), px
    work_size_px: int = 160
    #: margin around the board, as a fraction of its side
    margin_fraction: float = 0.12
    #: consecutive quiet frames needed for "settled"
    settle_frames: int = 3
    #: skin chroma relative to the plate: Cr - Cr_plate in [lo, hi], Cb - Cb_plate in [lo, hi]
    skin_cr_rel: tuple[float, float] = (11.0, 48.0)
    skin_cb_rel: tuple[float, float] = (-45.0, 4.0)
    #: a light's colour cast moves a neutral surface along this (Cr, Cb) direction (tungsten
    #: light on white paper: about +25 Cr, -34 Cb), by this much at most (along it, grey levels:
    #: warm -> cool); the sim's and a camera's strongest casts without white balance
    cast_axis_crcb: tuple[float, float] = (0.595, -0.804)
    cast_range: tuple[float, float] = (-20.0, 45.0)
    #: a plate whose chroma lies further than this off the cast line is coloured (felt), not
    #: neutral paper in a cast (paper, printed paper, under every cast: <= 6 levels)
    coloured_plate_off_axis: float = 12.0
    #: window of the local plate chroma, as a fraction of the working image
    local_window_fraction: float = 0.5
    #: a hand: skin over more than this fraction of the board, with a solid core (palm) of at
    #: least this many working-image pixels
    min_skin_fraction: float = 0.004
    min_palm_px: int = 4
    #: a pixel moved when its normalised difference exceeds max(this, k * noise) grey levels
    motion_threshold: float = 14.0
    motion_noise_k: float = 5.0
    #: motion: more than this fraction of the working image changed
    min_motion_fraction: float = 0.0015
    #: a moving blob touching the margin and larger than this fraction is an arm
    min_arm_fraction: float = 0.01


@dataclass(frozen=True)
class SceneState:
    """settled: no hand and no motion over the last few frames; hand_present, motion: this
    frame; the fractions (of the working image) behind them; quiet_frames so far."""

    settled: bool
    hand_present: bool
    motion: bool
    skin_fraction: float = 0.0
    motion_fraction: float = 0.0
    quiet_frames: int = 0


class SceneMonitor:
    """Feed it consecutive frames of one board; it says when the position can be read."""

    def __init__(self, params: SceneParams = SceneParams(), *, intrinsics: Intrinsics | None = None) -> None:
        self.params = params
        self.intrinsics = intrinsics
        self._previous: np.ndarray | None = None
        self._previous_key: bytes | None = None
        self._quiet = 0

    def reset(self) -> None:
        self._previous = None
        self._previous_key = None
        self._quiet = 0

    def update(self, frame: np.ndarray, board: BoardFit) -> SceneState:
        import cv2

        p = self.params
        size = board.size_board
        margin = p.margin_fraction * size
        scale = p.work_size_px / (size + 2 * margin)
        small = rectify(frame, board, scale, margin, self.intrinsics, interpolation=cv2.INTER_AREA)
        if small.ndim == 2:
            small = cv2.cvtColor(small, cv2.COLOR_GRAY2BGR)
        small = cv2.GaussianBlur(small, (3, 3), 0)
        ycc = cv2.cvtColor(small, cv2.COLOR_BGR2YCrCb).astype(np.float32)
        n_px = ycc.shape[0] * ycc.shape[1]
        inner = self._board_mask(ycc.shape[:2], margin, scale)

        # only skin over the board counts (the table around it may be wood-coloured)
        area = self._skin_area(board, inner, margin, scale)
        skin = self._skin(ycc, area) & area
        skin_fraction = float(skin[area].mean())
        # a hand has a solid palm: skin that survives an erosion (thin rims of coloured pieces,
        # anti-aliased into skin-like tones, do not)
        core = cv2.erode(skin.astype(np.uint8), np.ones((5, 5), np.uint8))
        hand = skin_fraction > p.min_skin_fraction and int(core.sum()) >= p.min_palm_px

        key = board.H_image_to_board.tobytes()
        gray = ycc[..., 0]
        motion_fraction = 0.0
        arm = False
        if self._previous is not None and self._previous_key == key:
            moved = self._moved(gray, self._previous)
            motion_fraction = float(moved.mean())
            if motion_fraction > p.min_motion_fraction:
                arm = self._blob_reaches_margin(moved, inner, p.min_arm_fraction * n_px)
        self._previous = gray
        self._previous_key = key
        motion = motion_fraction > p.min_motion_fraction
        hand = hand or arm
        self._quiet = 0 if (hand or motion) else self._quiet + 1
        settled = self._quiet >= p.settle_frames
        return SceneState(settled, hand, motion, skin_fraction, motion_fraction, self._quiet)

    # -- detectors ---------------------------------------------------------------------------

    @staticmethod
    def _board_mask(shape: tuple[int, int], margin: float, scale: float) -> np.ndarray:
        m = np.zeros(shape, bool)
        a = round(margin * scale)
        m[a : shape[0] - a, a : shape[1] - a] = True
        return m

    @staticmethod
    def _skin_area(board: BoardFit, inner: np.ndarray, margin: float, scale: float) -> np.ndarray:
        """Where skin counts: the board, without Domination's cut corners (plate-coloured,
        which is close to skin against the light cells)."""
        if board.game != "domination":
            return inner
        area = inner.copy()
        for fx, fy in _DOMINATION_CUT_XY:
            x0 = int(np.floor((fx + margin) * scale))
            y0 = int(np.floor((fy + margin) * scale))
            x1 = int(np.ceil((fx + 1 + margin) * scale))
            y1 = int(np.ceil((fy + 1 + margin) * scale))
            area[y0:y1, x0:x1] = False
        return area

    def _skin(self, ycc: np.ndarray, inner: np.ndarray) -> np.ndarray:
        import cv2

        p = self.params
        y, cr, cb = ycc[..., 0], ycc[..., 1], ycc[..., 2]
        # the plate: the brightest half of the board area is mostly paper
        sel = inner & (y >= np.percentile(y[inner], 50))
        cr0 = float(np.median(cr[sel]))
        cb0 = float(np.median(cb[sel]))
        # where the light clips one channel, the paper's chroma drifts across the board: compare
        # with the local plate too (a wide median, which a hand covering a minority of the
        # window does not move), whichever is redder
        k = int(p.local_window_fraction * cr.shape[0]) | 1
        cr_local = cv2.medianBlur(np.clip(cr, 0, 255).astype(np.uint8), min(k, 255)).astype(np.float32)
        ax_cr, ax_cb = p.cast_axis_crcb
        along = (cr0 - 128.0) * ax_cr + (cb0 - 128.0) * ax_cb
        off = abs((cr0 - 128.0) * ax_cb - (cb0 - 128.0) * ax_cr)
        coloured = off > p.coloured_plate_off_axis or not p.cast_range[0] <= along <= p.cast_range[1]
        bright = (y > 35) & (y < 250)
        if not coloured:
            dcr, dcb = cr - np.maximum(cr0, cr_local), cb - cb0
            skin = (self._in_window(dcr, dcb) & bright).astype(np.uint8)
        else:
            # the board's own colour is not the light's: skin against the cast (the board's
            # chroma along the cast line, within the casts' range), and unlike the board
            cast = float(np.clip(along, *p.cast_range))
            cb_local = cv2.medianBlur(np.clip(cb, 0, 255).astype(np.uint8), min(k, 255)).astype(np.float32)
            unlike = np.hypot(cr - cr_local, cb - cb_local) > p.skin_cr_rel[0]
            skin = (self._in_window(cr - 128.0 - cast * ax_cr, cb - 128.0 - cast * ax_cb) & unlike
                    & bright).astype(np.uint8)
        # isolated pixels (noise, JPEG) are not a hand
        skin = cv2.morphologyEx(skin, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        return skin.astype(bool)

    def _in_window(self, dcr: np.ndarray, dcb: np.ndarray) -> np.ndarray:
        p = self.params
        return ((dcr > p.skin_cr_rel[0]) & (dcr < p.skin_cr_rel[1])
                & (dcb > p.skin_cb_rel[0]) & (dcb < p.skin_cb_rel[1]))

    def _moved(self, gray: np.ndarray, previous: np.ndarray) -> np.ndarray:
        p = self.params
        # overall brightness changes (flicker, exposure) are not motion
        gain = float(np.median(previous) / max(np.median(gray), 1.0))
        diff = np.abs(gray * gain - previous)
        noise = 1.4826 * float(np.median(diff))
        return diff > max(p.motion_threshold, p.motion_noise_k * noise)

    @staticmethod
    def _blob_reaches_margin(moved: np.ndarray, inner: np.ndarray, min_area: float) -> bool:
        import cv2

        n, labels, stats, _ = cv2.connectedComponentsWithStats(moved.astype(np.uint8), connectivity=8)
        for i in range(1, n):
            if stats[i, cv2.CC_STAT_AREA] < min_area:
                continue
            blob = labels == i
            if np.any(blob & ~inner) and np.any(blob & inner):
                return True
        return False
