"""Dition discs: every disc's centre in board units, its colour, a confidence and an uncertainty.

Stage: `detect_discs(frame, board, params, *, intrinsics) -> list[DiscReading]`.

1. Rectify: warp the frame to a top-down board image at `scale_px_per_unit` (remap through the
   lens model when intrinsics are given).
2. Candidates: fixed-radius circle voting (at `vote_scale_px_per_unit`). Every strong edge pixel
   votes one disc radius *against* its gradient in grey (dark disc on lighter surroundings) and
   *along* it in grey + (B - R) (bright disc; the warm paper loses against the neutral white
   face); votes pile up at disc centres, while straight lines and the centre dots spread theirs.
   Peaks closer than `min_separation_board` are merged (discs cannot overlap). Discs hemmed in by
   their own colour have little outline to vote with: grey-dot blobs (determinant of Hessian)
   that no outline candidate explains are added, and must then prove themselves (a round dot
   all around, a uniform face, not on a drawn line or a corner of the squares).
   White discs on paper clipped at the sensor's white (a strong hot spot) keep only a faint,
   shrunken dot and their side and shadow: on a clipped face a weaker blob counts (clipped
   pixels carry no noise), the dot may look 44 % smaller, a dot on a line counts when no
   ink shows around it (the disc hides the line), a washed-out dot counts when the outline fit
   finds the rim around it, and readings closer than discs can lie keep the best-supported one
   (the notch between two touching discs and the gap between three look like dots there).
3. Colour: the face between the dot and the rim against the local plate brightness (a
   morphological closing), with the grey dot as second vote (brighter than a black face, darker
   than a white one), so glare on a black face does not make it white.
4. Sub-pixel: radial profiles in the ORIGINAL frame (no resampling loss; one `cv2.remap`)
   across the grey dot's rim and across the disc's rim; robust least-squares circle fits give the
   top face centre. The disc's side shows outside the rim on the camera's side (half white, half
   black on a two-faced disc), so the rim fit uses only rays where that band is thinner than
   `max_band_board`. Both estimates are averaged by their uncertainties.
5. Thickness: the top face lies `thickness_board` above the board, so its projection is pushed
   away from the camera's foot point by t / (Z_c - t). With intrinsics the camera pose is exact
   (from H); without, the focal length is estimated from the homography (principal point at the
   image centre, square pixels), falling back to `default_hfov_deg` when the tilt is too small
   to tell. See docs/readme/vision-dition.md for the residual this leaves.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Literal

import numpy as np

from vision.board import (
    DITION_SQUARES,
    BoardFit,
    as_gray,
    board_intrinsics,
    board_to_image,
    board_to_image_lookup,
    rectify,
)
from vision.camera import Intrinsics

Colour = Literal["black", "white"]

#: radii (board units) of the samples across the grey dot's rim and across the disc's rim
DOT_RADII = np.linspace(0.03, 0.255, 16)
RIM_RADII = np.linspace(0.34, 0.70, 19)


@dataclass(frozen=True)
class DiscParams:
    """Tuning of the disc detector (shipped defaults). Lengths in board units (disc diameters)."""

    scale_px_per_unit: float = 16.0
    #: the outline votes run at this (coarser) scale
    vote_scale_px_per_unit: float = 12.0
    margin_board: float = 0.75
    disc_diameter_board: float = 1.0
    dot_diameter_board: float = 0.25
    thickness_board: float = 0.08
    #: discs cannot overlap: candidate peaks closer than this are one disc
    min_separation_board: float = 0.7
    #: minimum gradient magnitude (grey levels per rectified pixel) that votes
    min_edge_strength: float = 4.0
    #: weight of (B - R) added to grey in the candidate channel (the plate is warm paper)
    chroma_weight: float = 1.0
    #: a dot-only candidate: determinant-of-Hessian blob response at the dot's scale
    min_dot_response: float = 10.0
    #: ... times this on a white face clipped all around (clipped pixels carry no noise)
    clipped_dot_response: float = 0.4
    #: dot-only candidates: share of the rays that must cross the dot's rim
    min_dot_cover: float = 0.75
    #: ... on a clipped white face
    clipped_dot_cover: float = 0.85
    #: dot-only candidates this close to a drawn line are ink or noise on it, not dots
    line_exclusion_board: float = 0.12
    #: ... the same without camera intrinsics (lens distortion bends the lines)
    line_exclusion_uncalibrated_board: float = 0.4
    #: ... unless the face around them is clipped with no ink showing (a disc hides the line)
    #: and this share of the rays agree on the dot's rim
    hidden_ink_dot_cover: float = 0.95
    #: grey levels below `clip_level` that still count as clipped in that test
    hidden_ink_margin: float = 10.0
    #: a faint dot on a clipped face counts when the outline fit, centred within this of it,
    #: finds the disc's rim
    rim_only_max_shift_board: float = 0.08
    #: ... and at least this share of the rays agree on that rim (the side and the shadow show
    #: about half of it)
    rim_only_min_cover: float = 0.3
    #: dot-only candidates this close to a corner of the drawn squares are ink, not dots
    corner_exclusion_board: float = 0.25
    #: a white disc's fits start from a dot blob this close to its vote peak
    dot_snap_board: float = 0.3
    #: ... when it lies further than this from it (closer, the peak is the better start)
    dot_snap_min_board: float = 0.08
    #: a candidate needs this share of a full circle's votes
    min_vote_fraction: float = 0.30
    #: face brightness / local plate brightness: black below, white above (with the dot's help)
    black_ratio: float = 0.8
    #: minimum grey step per profile sample for a rim point
    min_rim_step: float = 3.0
    #: outline rays are used where the disc's visible side is thinner than this
    max_band_board: float = 0.012
    #: grey level from which a white face counts as clipped at the sensor's white
    clip_level: float = 250.0
    #: minimum grey step per profile sample for the rim of a dot on a clipped white face
    clipped_dot_step: float = 2.0
    #: a grey dot on a clipped white face may look this much smaller (share of its radius)
    clipped_dot_shrink: float = 0.44
    #: ... for a dot-only candidate (no outline votes for it)
    clipped_dot_only_shrink: float = 0.44
    #: radial rays for the sub-pixel fits
    n_rays: int = 24
    #: horizontal field of view assumed when no intrinsics are given and the tilt is too small
    #: to estimate the focal length from the homography (Raspberry Pi camera v2)
    default_hfov_deg: float = 62.2
    #: keep discs whose centre lies within this distance outside the playing area
    outside_tolerance_board: float = 0.45
    min_confidence: float = 0.45


@dataclass(frozen=True)
class DiscReading:
    """One disc: centre_board (x, y) board units, centre_px (x, y) captured pixels of the point
    where it touches the board, colour, confidence 0..1, sigma_board (1-sigma position
    uncertainty in board units)."""

    centre_board: tuple[float, float]
    centre_px: tuple[float, float]
    colour: Colour
    confidence: float
    sigma_board: float

    def to_dict(self) -> dict[str, object]:
        return {
            "x": round(self.centre_board[0], 4),
            "y": round(self.centre_board[1], 4),
            "colour": self.colour,
            "confidence": round(self.confidence, 3),
            "sigma": round(self.sigma_board, 4),
        }


# --------------------------------------------------------------------------------------------
# camera geometry from the homography
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CameraGeometry:
    """Where the camera is, in the board frame: centre_board (x, y) of its foot point and
    height_board above the board plane."""

    centre_board: tuple[float, float]
    height_board: float
    focal_px: float
    estimated: bool

    def thickness_shift(self, centres_board: np.ndarray, height: float) -> np.ndarray:
        """(N, 2) displacement, on the board plane, of a point `height` above each centre."""
        c = np.asarray(self.centre_board)
        k = height / max(self.height_board - height, 1e-6)
        return (np.asarray(centres_board, dtype=np.float64) - c) * k


def camera_geometry(
    board: BoardFit,
    image_size: tuple[int, int],
    intrinsics: Intrinsics | None = None,
    default_hfov_deg: float = 62.2,
    min_perspective_strength: float = 0.05,
) -> CameraGeometry:
    """The camera centre above the board from H_board_to_image (and K when known)."""
    w, h = image_size
    H = board.H_board_to_image
    if intrinsics is not None:
        K = intrinsics.camera_matrix
        estimated = False
    else:
        cx, cy = (w - 1) / 2.0, (h - 1) / 2.0
        T = np.array([[1, 0, -cx], [0, 1, -cy], [0, 0, 1.0]])
        Hc = T @ H
        h1, h2 = Hc[:, 0], Hc[:, 1]
        f_default = (w / 2.0) / math.tan(math.radians(default_hfov_deg) / 2)
        # r1 . r2 = 0 and |r1| = |r2| with K^-1 h = (h_x / f, h_y / f, h_z): two equations
        # a_i / f^2 + c_i = 0, solved in least squares for x = 1 / f^2
        a = np.array([h1[0] * h2[0] + h1[1] * h2[1], h1[0] ** 2 + h1[1] ** 2 - h2[0] ** 2 - h2[1] ** 2])
        c = np.array([h1[2] * h2[2], h1[2] ** 2 - h2[2] ** 2])
        f = f_default
        estimated = True
        aa = float(a @ a)
        # how strongly the perspective terms speak, relative to the in-plane ones at f_default
        strength = math.sqrt(float(c @ c)) * f_default**2 / max(math.sqrt(aa), 1e-30)
        if aa > 1e-30 and strength > min_perspective_strength:
            x = -float(a @ c) / aa
            if x > 0 and 0.4 * f_default < 1 / math.sqrt(x) < 2.5 * f_default:
                f = 1 / math.sqrt(x)
        K = np.array([[f, 0, cx], [0, f, cy], [0, 0, 1.0]])
    M = np.linalg.inv(K) @ H
    lam = 2.0 / (np.linalg.norm(M[:, 0]) + np.linalg.norm(M[:, 1]))
    M = M * lam
    if M[2, 2] < 0:  # the board must be in front of the camera
        M = -M
    r1, r2, t = M[:, 0], M[:, 1], M[:, 2]
    r3 = np.cross(r1, r2)
    R = np.stack([r1, r2, r3], axis=1)
    u, _, vt = np.linalg.svd(R)
    R = u @ vt
    C = -R.T @ t
    # board frame z: r3 = x cross y points into the table (y down); the camera has z < 0
    return CameraGeometry((float(C[0]), float(C[1])), float(abs(C[2])), float(K[0, 0]), estimated)


# --------------------------------------------------------------------------------------------
# the stage
# --------------------------------------------------------------------------------------------


def detect_discs(
    frame: np.ndarray,
    board: BoardFit,
    params: DiscParams = DiscParams(),
    *,
    intrinsics: Intrinsics | None = None,
) -> list[DiscReading]:
    """Every disc on the Dition board, sorted by (y, x). Without intrinsics, the lens model
    estimated with the board (vision.lens, BoardFit.extra["intrinsics"]) is used if any."""
    import cv2

    intrinsics = board_intrinsics(board, intrinsics)
    gray = as_gray(frame)
    s = params.scale_px_per_unit
    m = params.margin_board
    rect_bgr = rectify(frame, board, s, m, intrinsics) if frame.ndim == 3 else None
    rect = cv2.cvtColor(rect_bgr, cv2.COLOR_BGR2GRAY) if rect_bgr is not None else rectify(gray, board, s, m, intrinsics)
    rectf = rect.astype(np.float32)
    white_img = _contrast_channel(rect_bgr, params) if rect_bgr is not None else rectf
    cands, votes = _candidates(rectf, white_img, params)
    # discs hemmed in on all sides by their own colour have little outline to vote with, but
    # their grey dot is always in view: add dot-like spots that no outline candidate explains
    from scipy.spatial import cKDTree

    dots = all_dots = _dot_candidates(rectf, params)
    if len(dots) and len(cands):
        near, _ = cKDTree(cands).query(dots)
        dots = dots[near > params.min_separation_board * s]
    from_dot = np.r_[np.zeros(len(cands), bool), np.ones(len(dots), bool)]
    cands = np.concatenate([cands.reshape(-1, 2), dots.reshape(-1, 2)])
    votes = np.r_[votes, np.zeros(len(dots))]
    if len(cands) == 0:
        return []
    centres0 = cands / s - m  # board units (top face, approximately)
    # local plate brightness: a closing removes discs and lines (dark), keeps the plate
    k = round(1.6 * s) | 1
    small = cv2.resize(rect, None, fx=0.25, fy=0.25, interpolation=cv2.INTER_AREA)
    ks = max(3, (k // 4) | 1)
    bg = cv2.morphologyEx(small, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (ks, ks)))
    bg = cv2.resize(bg, (rect.shape[1], rect.shape[0]), interpolation=cv2.INTER_LINEAR).astype(np.float32)

    face, dotv, plate, spread = _ring_stats(rectf, bg, cands, params)
    ratio = face / np.maximum(plate, 1.0)
    # black: a face well below the plate (glare lifts it to ~0.65), and a dot brighter than
    # the face; white: a face near or above the plate and a darker dot
    black_score = (params.black_ratio - ratio) / 0.12 + np.clip((dotv - face) / 40.0, -1.0, 1.0)
    is_black = black_score > 0
    # a white disc on clipped paper votes with its shadow side only, and its vote peak can lie
    # off the centre by more than the dot fit reaches: start its fits from its dot's blob
    if len(all_dots):
        d_dot, j_dot = cKDTree(all_dots).query(cands)
        snap = ~from_dot & ~is_black & (d_dot < params.dot_snap_board * s) & (d_dot > params.dot_snap_min_board * s)
        centres0[snap] = all_dots[j_dot[snap]] / s - m

    geom = camera_geometry(board, (gray.shape[1], gray.shape[0]), intrinsics, params.default_hfov_deg)
    grayf = gray  # profiles are sampled from uint8 (quantisation << sensor noise)
    # one sampling pass for both fits: rays from each candidate across the dot and the rim
    vals, u = _sample_profiles(grayf, board, intrinsics, centres0, np.r_[DOT_RADII, RIM_RADII], params.n_rays)
    nd = len(DOT_RADII)
    # the leniency for dots on clipped white faces needs the face clipped all around the dot,
    # with no ink showing (a drawn line through clipped paper is no disc's dot)
    clear = np.zeros(len(cands), bool)
    if (~is_black).any():
        clear[~is_black] = _clipped_annulus(rect, (centres0[~is_black] + m) * s, params)
    top, top_sigma, dot_ok, dot_cover, dot_clipped = _refine_dots(
        grayf, board, intrinsics, centres0, is_black, params, sampled=(vals[..., :nd], u), clear=clear)
    outline_c, outline_sigma, outline_ok, outline_cover = _refine_outline(
        grayf, board, intrinsics, top, is_black, geom, params, origins=centres0,
        sampled=(vals[..., nd:], u))
    # combine the two estimates of the top face centre, then undo the thickness parallax
    w_dot = np.where(dot_ok, 1.0 / np.maximum(top_sigma, 1e-3) ** 2, 0.0)
    w_out = np.where(outline_ok, 1.0 / np.maximum(outline_sigma, 1e-3) ** 2, 0.0)
    wsum = w_dot + w_out
    top_c = np.where(
        (wsum > 0)[:, None],
        (top * w_dot[:, None] + outline_c * w_out[:, None]) / np.maximum(wsum, 1e-12)[:, None],
        centres0,
    )
    centre = top_c - geom.thickness_shift(top_c, params.thickness_board)
    sigma = np.where(wsum > 0, 1.0 / np.sqrt(np.maximum(wsum, 1e-12)), 0.1)
    # the model's own uncertainty (thickness correction, homography) sets a floor
    sigma = np.sqrt(sigma**2 + (0.003 if not geom.estimated else 0.008) ** 2)

    full_votes = 2 * math.pi * 0.5 * s
    vote_score = np.clip(votes / full_votes, 0, 1)
    contrast = np.clip(np.abs(black_score) / 2.0, 0, 1)
    conf = 0.45 * vote_score + 0.2 * contrast + 0.2 * dot_ok + 0.15 * outline_ok
    size = board.size_board
    tol = params.outside_tolerance_board
    inside = np.all((centre > -tol) & (centre < size + tol), axis=1)
    # a dot-only candidate must show a proper dot (a gap between discs is no circle)
    # and a uniform face around it (a line corner or a gap between discs is not)
    uniform = spread < 0.2 * np.abs(face - dotv)
    if from_dot.any():
        # the corners of the drawn squares look like dots too (an L of ink on paper); a disc
        # centred on one still has its outline to vote with
        corners = np.array([(a, b) for lo, hi in DITION_SQUARES for a in (lo, hi) for b in (lo, hi)])
        d_corner = np.min(np.linalg.norm(centres0[:, None, :] - corners[None], axis=2), axis=1)
        # ... and so does noise on a drawn line; a hemmed-in disc centred exactly on a line is
        # rare enough to leave to the players
        # (without the lens model a distorted line bows away from where the square is drawn
        # in the rectified image, so the band is wider)
        band = params.line_exclusion_board if intrinsics is not None else max(
            params.line_exclusion_board, params.line_exclusion_uncalibrated_board)
        off_ink = (d_corner > params.corner_exclusion_board) & (_distance_to_lines(centres0) > band)
        # except where the ink is hidden: a round dot on a white face clipped all around, with
        # no trace of the line or corner it lies on, is a disc covering them
        hidden = from_dot & ~off_ink & dot_clipped & (dot_cover >= params.hidden_ink_dot_cover)
        # (a clipped face is clipped all around the dot: the notch where two white discs touch,
        # or the gap between three, looks like a dot there too, but often shows the discs' rims
        # running out through the ring around it)
        annulus_ok = clear | ~dot_clipped
        # (and a rounder dot: those notches and gaps are round but for their cusps)
        min_cover = np.where(dot_clipped, params.clipped_dot_cover, params.min_dot_cover)
        uniform &= (off_ink | (hidden & annulus_ok)) & (dot_cover >= min_cover) & annulus_ok
    dot_conf = np.where(dot_ok & uniform, 0.4 + 0.3 * contrast + 0.3 * outline_ok, 0.0)
    if from_dot.any():
        # a white disc on clipped paper whose dot is all but washed out still shows its side
        # and its shadow to the outline fit: with a clipped face all around the faint dot and the
        # outline centred on it, that is a disc
        moved = np.linalg.norm(outline_c - centres0, axis=1)
        rim_only = (from_dot & ~dot_ok & outline_ok & dot_clipped & annulus_ok & off_ink
                    & (moved < params.rim_only_max_shift_board) & (outline_cover >= params.rim_only_min_cover))
        dot_conf = np.where(rim_only, 0.45 + 0.2 * contrast, dot_conf)
    conf = np.where(from_dot, dot_conf, conf)
    # every disc shows its dot or its rim to the sub-pixel fits; a vote peak that shows
    # neither is a coincidence of edges between discs
    keep = inside & (conf >= params.min_confidence) & (dot_ok | outline_ok)
    idx = np.flatnonzero(keep)
    if len(idx) == 0:
        return []
    # discs cannot overlap: of two readings closer than that, the outline's candidate (then the
    # more confident one) stays, a dot-only one is a feature of its neighbour (a rim, a seam)
    idx = _non_overlapping(centre, idx, conf - from_dot + 0.1 * dot_cover + 0.3 * outline_ok,
                           params.min_separation_board)
    conf = np.clip(conf, 0.0, 1.0)
    px = board_to_image(centre[idx], board, intrinsics)
    out = [
        DiscReading(
            (float(centre[i, 0]), float(centre[i, 1])),
            (float(px[j, 0]), float(px[j, 1])),
            "black" if is_black[i] else "white",
            float(conf[i]),
            float(sigma[i]),
        )
        for j, i in enumerate(idx)
    ]
    out.sort(key=lambda d: (d.centre_board[1], d.centre_board[0]))
    return out


# --------------------------------------------------------------------------------------------
# candidates
# --------------------------------------------------------------------------------------------


def _contrast_channel(rect_bgr: np.ndarray, params: DiscParams) -> np.ndarray:
    """Grey plus 'blueness' (B - R): the warm paper loses against the neutral white face,
    so white discs stand out from the plate as much as black ones do."""
    import cv2

    w = params.chroma_weight
    m = np.array([[0.114 + w, 0.587, 0.299 - w]], dtype=np.float32)
    out = cv2.transform(rect_bgr.astype(np.float32), m)
    return out if out.ndim == 2 else out[..., 0]


def _candidates(
    dark_img: np.ndarray, bright_img: np.ndarray, params: DiscParams
) -> tuple[np.ndarray, np.ndarray]:
    """(N, 2) candidate centres in rectified pixels and their vote counts. Dark discs vote
    from `dark_img` (grey), bright discs from `bright_img` (grey plus blueness)."""
    import cv2

    # vote at a coarser scale (the sub-pixel work happens later, in the original frame)
    f = params.vote_scale_px_per_unit / params.scale_px_per_unit
    if f < 1:
        dark_img = cv2.resize(dark_img, None, fx=f, fy=f, interpolation=cv2.INTER_AREA)
        bright_img = cv2.resize(bright_img, None, fx=f, fy=f, interpolation=cv2.INTER_AREA)
    else:
        f = 1.0
    s = params.scale_px_per_unit * f
    r = 0.5 * params.disc_diameter_board * s
    h, w = dark_img.shape
    acc = np.zeros((2, h, w), np.float32)
    for plane, sign, img in ((0, -1.0, dark_img), (1, 1.0, bright_img)):
        # plane 0: dark disc (vote against the gradient); plane 1: bright disc (along it)
        blur = cv2.GaussianBlur(img, (0, 0), 0.6)
        gx = cv2.Sobel(blur, cv2.CV_32F, 1, 0, ksize=3, scale=0.125)
        gy = cv2.Sobel(blur, cv2.CV_32F, 0, 1, ksize=3, scale=0.125)
        mag = cv2.magnitude(gx, gy)
        ys, xs = np.nonzero(mag > params.min_edge_strength)
        g = mag[ys, xs]
        ux, uy = gx[ys, xs] / g, gy[ys, xs] / g
        wgt = np.minimum(g / (2 * params.min_edge_strength), 1.0)
        vx = np.rint(xs + sign * r * ux).astype(np.int64)
        vy = np.rint(ys + sign * r * uy).astype(np.int64)
        ok = (vx >= 0) & (vx < w) & (vy >= 0) & (vy < h)
        acc[plane] = np.bincount(vy[ok] * w + vx[ok], weights=wgt[ok], minlength=h * w).reshape(h, w)
    # edges are ~2 px thick after the blur: each edge contributes ~2 votes per unit length
    sigma_acc = 1.0
    acc = np.stack([cv2.GaussianBlur(a, (0, 0), sigma_acc) for a in acc])
    best = acc.max(axis=0)
    # a full circle's votes: ~2 px-thick edge * circumference, spread by the blur kernel
    full = 2 * math.pi * r * 2.0 / (2 * math.pi * sigma_acc**2)
    thr = params.min_vote_fraction * full
    ksz = round(params.min_separation_board * s) | 1
    dil = cv2.dilate(best, np.ones((ksz, ksz), np.uint8))  # a square max filter is separable
    py, px = np.nonzero((best >= dil) & (best > thr))
    if len(px) == 0:
        return np.zeros((0, 2)), np.zeros(0)
    val = best[py, px]
    order = np.argsort(-val)
    pts = np.stack([px, py], axis=1)[order]
    val = val[order]
    # plateaus give duplicate maxima: drop any peak near a stronger one
    if len(pts) > 1:
        from scipy.spatial import cKDTree

        pairs = cKDTree(pts).query_pairs(params.min_separation_board * s, output_type="ndarray")
        drop = np.zeros(len(pts), bool)
        for i, j in sorted(map(tuple, pairs)):
            if not drop[i]:
                drop[max(i, j)] = True
        pts, val = pts[~drop], val[~drop]
    # sub-pixel peak: 3x3 centroid
    xx = np.clip(pts[:, 0, None, None] + np.arange(-1, 2)[None, None, :], 0, w - 1)
    yy = np.clip(pts[:, 1, None, None] + np.arange(-1, 2)[None, :, None], 0, h - 1)
    win = best[yy, xx]
    tot = win.sum(axis=(1, 2))
    sub = np.stack([(win * xx).sum(axis=(1, 2)) / tot, (win * yy).sum(axis=(1, 2)) / tot], axis=1)
    # back to rectified pixels (pixel centres scale about -0.5)
    sub = (sub + 0.5) / f - 0.5
    return sub.astype(np.float64), val / full * (2 * math.pi * r)


def _non_overlapping(
    centres: np.ndarray, idx: np.ndarray, rank: np.ndarray, min_separation: float,
    conflict_penalty: float = 0.05,
) -> np.ndarray:
    """The indices `idx` without any centre closer than `min_separation` to a higher-ranked one
    (sorted); each conflict lowers a reading's rank by `conflict_penalty`."""
    from scipy.spatial import cKDTree

    pairs = cKDTree(centres[idx]).query_pairs(min_separation, output_type="ndarray")
    if len(pairs) == 0:
        return idx
    # among near-equals, the one in conflict with more readings goes first: the notch between
    # two touching discs (or the gap between three) sits within reach of each of them
    degree = np.bincount(pairs.ravel(), minlength=len(idx))
    order = np.argsort(-(rank[idx] - conflict_penalty * degree), kind="stable")
    pos = np.empty(len(idx), int)
    pos[order] = np.arange(len(idx))
    drop = np.zeros(len(idx), bool)
    # visit pairs from the strongest member down: a dropped reading suppresses nothing
    first = np.minimum(pos[pairs[:, 0]], pos[pairs[:, 1]])
    for a, b in pairs[np.argsort(first, kind="stable")]:
        hi, lo = (a, b) if pos[a] < pos[b] else (b, a)
        if not drop[hi]:
            drop[lo] = True
    return np.sort(idx[~drop])


def _clipped_annulus(rect: np.ndarray, cands_px: np.ndarray, params: DiscParams) -> np.ndarray:
    """Whether every rectified pixel between 0.2 and 0.4 diameters of each candidate is clipped
    white (no ink shows through: the drawn line or corner there is under a disc's face)."""
    s = params.scale_px_per_unit
    ang = np.linspace(0, 2 * math.pi, 48, endpoint=False)
    radii = np.array([0.2, 0.26, 0.33, 0.4]) * params.disc_diameter_board * s
    h, w = rect.shape
    xs = cands_px[:, None, None, 0] + radii[None, :, None] * np.cos(ang)[None, None, :]
    ys = cands_px[:, None, None, 1] + radii[None, :, None] * np.sin(ang)[None, None, :]
    xi = np.clip(np.rint(xs).astype(int), 0, w - 1)
    yi = np.clip(np.rint(ys).astype(int), 0, h - 1)
    return np.min(rect[yi, xi].reshape(len(cands_px), -1), axis=1) >= params.clip_level - params.hidden_ink_margin


def _distance_to_lines(points_board: np.ndarray) -> np.ndarray:
    """Distance of each point to the nearest drawn line of the Dition board."""
    best = np.full(len(points_board), np.inf)
    for lo, hi in DITION_SQUARES:
        for axis in (0, 1):
            along = points_board[:, 1 - axis]
            on_span = (along >= lo) & (along <= hi)
            for c in (lo, hi):
                d = np.where(on_span, np.abs(points_board[:, axis] - c), np.inf)
                best = np.minimum(best, d)
    return best


def _dot_candidates(rect: np.ndarray, params: DiscParams) -> np.ndarray:
    """(N, 2) rectified-pixel positions of dot-like blobs: maxima of the determinant of the
    Hessian at the grey dot's scale (a blob bends both ways; a straight line does not)."""
    import cv2

    s = params.scale_px_per_unit
    rd = 0.5 * params.dot_diameter_board * s
    g = cv2.GaussianBlur(rect, (0, 0), 0.7 * rd)
    dxx = cv2.Sobel(g, cv2.CV_32F, 2, 0, ksize=3)
    dyy = cv2.Sobel(g, cv2.CV_32F, 0, 2, ksize=3)
    dxy = cv2.Sobel(g, cv2.CV_32F, 1, 1, ksize=3)
    resp = np.sqrt(np.maximum(dxx * dyy - dxy * dxy, 0.0))
    ksz = round(params.min_separation_board * s) | 1
    dil = cv2.dilate(resp, np.ones((ksz, ksz), np.uint8))
    low = params.min_dot_response * params.clipped_dot_response
    ys, xs = np.nonzero((resp >= dil) & (resp > low))
    # a dot on a white face clipped at the sensor's white keeps little contrast, but clipped
    # pixels carry no noise either: a weaker blob counts there when the face all around is clipped
    weak = resp[ys, xs] <= params.min_dot_response
    if weak.any():
        ang = np.linspace(0, 2 * math.pi, 16, endpoint=False)
        rr = 0.3 * params.disc_diameter_board * s
        h, w = rect.shape
        xi = np.clip(np.rint(xs[weak, None] + rr * np.cos(ang)).astype(int), 0, w - 1)
        yi = np.clip(np.rint(ys[weak, None] + rr * np.sin(ang)).astype(int), 0, h - 1)
        clipped = np.min(rect[yi, xi], axis=1) >= params.clip_level
        keep = ~weak
        keep[np.flatnonzero(weak)[clipped]] = True
        xs, ys = xs[keep], ys[keep]
    return np.stack([xs, ys], axis=1).astype(np.float64)


def _ring_stats(
    rect: np.ndarray, bg: np.ndarray, cands_px: np.ndarray, params: DiscParams
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Median face brightness (between dot and rim), dot brightness, plate brightness and the
    spread (robust sigma) of the face samples."""
    s = params.scale_px_per_unit
    ang = np.linspace(0, 2 * math.pi, 24, endpoint=False)
    ring_r = np.array([0.22, 0.28, 0.34]) * s
    dot_r = np.array([0.0, 0.05, 0.08]) * s
    h, w = rect.shape

    def sample(img: np.ndarray, radii: np.ndarray) -> np.ndarray:
        xs = cands_px[:, None, None, 0] + radii[None, :, None] * np.cos(ang)[None, None, :]
        ys = cands_px[:, None, None, 1] + radii[None, :, None] * np.sin(ang)[None, None, :]
        xi = np.clip(np.rint(xs).astype(int), 0, w - 1)
        yi = np.clip(np.rint(ys).astype(int), 0, h - 1)
        return img[yi, xi].reshape(len(cands_px), -1)

    ring = sample(rect, ring_r)
    face = np.median(ring, axis=1)
    dot = np.median(sample(rect, dot_r), axis=1)
    spread = 1.4826 * np.median(np.abs(ring - face[:, None]), axis=1)
    xi = np.clip(np.rint(cands_px[:, 0]).astype(int), 0, w - 1)
    yi = np.clip(np.rint(cands_px[:, 1]).astype(int), 0, h - 1)
    plate = bg[yi, xi]
    return face, dot, plate, spread


# --------------------------------------------------------------------------------------------
# sub-pixel refinement in the original frame
# --------------------------------------------------------------------------------------------


def _sample_profiles(
    grayf: np.ndarray,
    board: BoardFit,
    intrinsics: Intrinsics | None,
    centres: np.ndarray,
    radii: np.ndarray,
    n_rays: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Grey values (N, n_rays, len(radii)) along rays in the board plane, and the ray
    directions (n_rays, 2)."""
    import cv2

    ang = np.linspace(0, 2 * math.pi, n_rays, endpoint=False)
    u = np.stack([np.cos(ang), np.sin(ang)], axis=1)
    pts = centres[:, None, None, :] + radii[None, None, :, None] * u[None, :, None, :]
    px = board_to_image_lookup(pts.reshape(-1, 2), board, intrinsics)
    # one row per disc (remap wants fewer than 32767 rows)
    mx = px[:, 0].reshape(len(centres), n_rays * len(radii))
    my = px[:, 1].reshape(len(centres), n_rays * len(radii))
    vals = cv2.remap(grayf, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return vals.reshape(len(centres), n_rays, len(radii)).astype(np.float32), u


def _edge_positions(vals: np.ndarray, radii: np.ndarray, polarity: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sub-sample radius of the strongest step of the given polarity (+1: brighter outward)
    on each ray, and its strength. vals (N, R, S); polarity (N,)."""
    d = np.diff(vals, axis=2) * polarity[:, None, None]  # (N, R, S-1), positive at the edge
    # smooth the derivative a little
    d = np.concatenate([d[..., :1], (d[..., :-2] + 2 * d[..., 1:-1] + d[..., 2:]) / 4, d[..., -1:]], axis=2)
    k = np.argmax(d[..., 1:-1], axis=2) + 1
    idx = np.indices(k.shape)
    y0 = d[idx[0], idx[1], k - 1]
    y1 = d[idx[0], idx[1], k]
    y2 = d[idx[0], idx[1], k + 1]
    den = y0 - 2 * y1 + y2
    off = np.where(den < -1e-9, 0.5 * (y0 - y2) / np.where(den < -1e-9, den, -1.0), 0.0)
    off = np.clip(off, -0.5, 0.5)
    step = radii[1] - radii[0]
    r_edge = radii[0] + (k + 0.5 + off) * step  # diff index k sits between samples k and k+1
    return r_edge, y1


def _fit_circles(
    centres: np.ndarray, u: np.ndarray, r_edge: np.ndarray, ok: np.ndarray, radius: float,
    fixed_radius: bool,
    radius_tolerance: float | np.ndarray = 0.25,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Robust least-squares circles through the edge points c0 + r u, all discs at once
    (Gauss-Newton on the geometric distance, then 3-sigma rejection, twice).
    Returns centres (N, 2), 1-sigma centre uncertainty (N,), success (N,), share of the rays
    that agree with the circle (N,), radius (N,)."""
    n = len(centres)
    pts = centres[:, None, :] + r_edge[..., None] * u[None, :, :]  # (N, R, 2)
    c = centres.copy()
    rr = np.full(n, radius)
    sel = ok.copy()
    npar = 2 if fixed_radius else 3
    for round_ in range(2):
        for _ in range(2):
            dv = pts - c[:, None, :]
            dist = np.linalg.norm(dv, axis=2)
            nv = dv / np.maximum(dist, 1e-9)[..., None]
            res = dist - rr[:, None]
            wgt = sel.astype(np.float64)
            J = -nv if fixed_radius else np.concatenate([-nv, -np.ones_like(dist)[..., None]], axis=2)
            JtJ = np.einsum("nri,nrj,nr->nij", J, J, wgt) + np.eye(npar) * 1e-9
            Jtr = np.einsum("nri,nr,nr->ni", J, res, wgt)
            step = -np.linalg.solve(JtJ, Jtr[..., None])[..., 0]
            c = c + step[:, :2]
            if not fixed_radius:
                rr = rr + step[:, 2]
        if round_ == 1:
            break
        res = np.linalg.norm(pts - c[:, None, :], axis=2) - rr[:, None]
        absr = np.where(sel, np.abs(res), np.inf)
        cnt_sel = sel.sum(axis=1)
        srt = np.sort(absr, axis=1)
        mid = np.clip((cnt_sel - 1) // 2, 0, absr.shape[1] - 1)
        mad = 1.4826 * np.where(cnt_sel > 0, srt[np.arange(n), mid], 0.0)
        sel = ok & (np.abs(res) < np.maximum(3 * mad, 0.01)[:, None])
    res = np.linalg.norm(pts - c[:, None, :], axis=2) - rr[:, None]
    cnt = sel.sum(axis=1)
    s_res = np.sqrt(np.sum(np.where(sel, res**2, 0.0), axis=1) / np.maximum(cnt - npar, 1))
    # coverage of directions: a centre from a short arc is poorly determined
    cover = np.linalg.norm((sel[..., None] * u[None]).sum(axis=1), axis=1) / np.maximum(cnt, 1)
    sig = s_res * np.sqrt(2.0 / np.maximum(cnt, 1)) / np.maximum(1 - cover, 0.2)
    good = (cnt >= 6) & (np.abs(rr - radius) < radius_tolerance * radius) & np.all(np.isfinite(c), axis=1)
    c = np.where(good[:, None], c, centres)
    sig = np.where(good, sig, np.inf)
    return c, sig, good, cnt / u.shape[0], rr


def _refine_dots(
    grayf: np.ndarray,
    board: BoardFit,
    intrinsics: Intrinsics | None,
    centres0: np.ndarray,
    is_black: np.ndarray,
    params: DiscParams,
    sampled: tuple[np.ndarray, np.ndarray] | None = None,
    clear: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Centres of the grey dots (= top face centres, projected on the board plane), their
    uncertainty, success, the share of rays that agree with the circle and whether the face
    around the dot is clipped at the sensor's white. `sampled`: the
    profiles (N, rays, DOT_RADII) and ray directions, when already taken; `clear` (N,): where the
    face may count as clipped (no ink around the dot)."""
    r_dot = params.dot_diameter_board / 2
    radii = DOT_RADII
    # dot on black: brighter inside -> darker outward (-1); on white: darker inside (+1)
    polarity = np.where(is_black, -1.0, 1.0)
    c = centres0.copy()
    # one pass: the edge points are true rim points wherever the rays start
    if sampled is None:
        sampled = _sample_profiles(grayf, board, intrinsics, c, radii, params.n_rays)
    vals, u = sampled
    r_edge, strength = _edge_positions(vals, radii, polarity)
    # a dot in glare looks smaller (its rim clips at white): be lenient with its radius; on a
    # white face clipped at the sensor's white the blurred rim is cut below its midpoint, and
    # the steepest step moves well inside (to ~0.6 of the radius); clipped pixels carry no
    # noise, so a weaker step is still an edge there
    clipped = ~is_black & (np.median(vals[:, :, radii >= 0.2], axis=(1, 2)) >= params.clip_level)
    if clear is not None:
        clipped &= clear
    min_step = np.where(clipped, params.clipped_dot_step, 4.0)
    ok = (strength > min_step[:, None]) & (np.abs(r_edge - r_dot) < 0.09)
    c, sig, ok_all, cover, radius = _fit_circles(
        c, u, r_edge, ok, r_dot, fixed_radius=False,
        radius_tolerance=np.where(clipped, max(params.clipped_dot_shrink, 0.4), 0.4))
    # share of the rays whose rim agrees with one circle: all around for a real dot; rays
    # across a drawn line find its edges at 0.03 / sin(angle), which no circle fits (this
    # decides dot-only candidates: on a clipped face the notch between two touching discs looks
    # like a small dot, so the radius may shrink less there)
    shrink = np.where(clipped, params.clipped_dot_only_shrink, 0.3)
    cover = np.where((radius > (1 - shrink) * r_dot) & (radius < 1.3 * r_dot), cover, 0.0)
    return c, sig, ok_all, cover, clipped


def _refine_outline(
    grayf: np.ndarray,
    board: BoardFit,
    intrinsics: Intrinsics | None,
    top: np.ndarray,
    is_black: np.ndarray,
    geom: CameraGeometry,
    params: DiscParams,
    origins: np.ndarray | None = None,
    sampled: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Top face centres from the top rim (centres, 1-sigma, success, share of the rays on the
    circle). The disc's side shows as a band outside the rim on
    the camera's side (its colours are unknown: half white, half black on a two-faced disc), so
    only rays where that band is thinner than `max_band_board` are used: there the rim borders
    the plate (or a neighbour), dark disc brighter outward, bright disc darker outward."""
    t = params.thickness_board
    delta = geom.thickness_shift(top, t)  # (N, 2)
    r_top = 0.5 * params.disc_diameter_board * geom.height_board / max(geom.height_board - t, 1e-6)
    radii = RIM_RADII
    origins = top if origins is None else origins  # where the rays start
    if sampled is None:
        sampled = _sample_profiles(grayf, board, intrinsics, origins, radii, params.n_rays)
    vals, u = sampled
    polarity = np.where(is_black, 1.0, -1.0)
    r_edge, strength = _edge_positions(vals, radii, polarity)
    band = -np.einsum("rk,nk->nr", u, delta)  # width of the visible side outside the rim
    ok = (band < params.max_band_board) & (strength > params.min_rim_step) & (np.abs(r_edge - r_top) < 0.08)
    c, sig, good, cover, _ = _fit_circles(origins, u, r_edge, ok, r_top, fixed_radius=True)
    return c, sig, good, cover


if __name__ == "__main__":  # python -m vision.dition IMAGE  (board from its lines or markers)
    import cv2

    from vision.board import find_board

    img = cv2.imread(sys.argv[1])
    fit = find_board(img)
    for d in detect_discs(img, fit):
        print(d.to_dict())
