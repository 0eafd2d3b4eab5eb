"""Dition discs: every disc's centre in board units, its colour, a confidence and an uncertainty.

Stage: `detect_discs(frame, board, params, *, intrinsics) -> list[DiscReading]`.

1. Rectify: warp the frame to a top-down board image at `scale_px_per_unit` (remap through the
   lens model when intrinsics are given).
2. Candidates: fixed-radius circle voting (at `vote_scale_px_per_unit`). Every strong edge pixel
   votes one disc radius *against* its gradient in grey plus the board's chroma (dark disc on
   lighter surroundings; a black face on saturated felt is as bright as the felt, but neutral)
   and *along* it in grey + (B - R) (bright disc; the warm paper loses against the neutral white
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
   (the notch between two touching discs and the gap between three look like dots there). A
   neutral grey dot on a face clipped all around and free of noise may be fainter still (a rim
   of 1 grey level per sample) and look 60 % smaller: the notch and the gap show the warm paper
   in the discs' shadow, the dot does not (`min_clipped_dot_chroma`, against the face or against
   the light's colour cast read on the black discs' dots). Dot-only candidates that
   cannot pass these tests are dropped before the (costly) profiles.
3. Colour: the face between the dot and the rim against the local plate brightness (a
   morphological closing), with the grey dot as second vote (brighter than a black face, darker
   than a white one), so glare on a black face does not make it white; in a colour frame both
   in each pixel's brightest channel (a black face on saturated felt can be lighter than the
   felt in grey, never in the felt's own colour). (That contrast speaks
   for a white reading only when its dot is seen or its face is clipped: bare paper is as
   bright as a white face.)
4. Sub-pixel: radial profiles in the ORIGINAL frame (no resampling loss; one `cv2.remap` of the
   colour frame at the sample points only; the points come from the board's cached
   board -> image table at a few nodes per ray, interpolated along it) across the grey dot's rim
   and across the disc's rim; robust least-squares circle fits (all of a frame in one batch)
   give the top face centre. The disc's side shows outside the rim on the camera's side (half white, half
   black on a two-faced disc), so the rim is fitted first on the rays where that band is thinner
   than `max_band_board`, then again on every ray that agrees with a free-radius fit of all of
   them: a light face's rim is its first step down on the camera's side too (its side is in the
   shade below it; where the board beyond is lighter than half the face), a dark face's side is
   as dark as the face and its step up is the side's foot, a band further out. A piece not quite
   round is centred on its whole outline, not pulled to the far side by half of it; the rim step
   taken on a ray is the one nearest the predicted rim, not a neighbour's stronger one; a step a
   blur spreads (motion, defocus) is taken at the centre of its derivative's plateau. Both
   estimates (dot and rim) are averaged by their uncertainties.
5. Thickness: the top face lies `thickness_board` above the board (the kit's 0.08; a user
   states other discs' with `--disc-thickness`), so its projection is pushed
   away from the camera's foot point by t / (Z_c - t). With intrinsics the camera pose is exact
   (from H); without, the focal length is estimated from the homography (principal point at the
   image centre, square pixels), falling back to `default_hfov_deg` when the tilt is too small
   to tell. See docs/vision-dition.md for the residual this leaves.
"""

from __future__ import annotations

import functools
import math
import sys
from dataclasses import dataclass
from typing import Literal

import numpy as np

from vision.camera import Intrinsics
from vision.colour_names import MAX_TINT_ANGLE_DEG, seen_colours
from vision.geometry import (
    DITION_SQUARES,
    BoardFit,
    CameraGeometry,
    board_intrinsics,
    board_to_image,
    board_to_image_maps,
    camera_geometry,
    check_frame,
    rectify_maps,
    row_median,
)

Colour = Literal["black", "white"]

#: radii (board units) of the samples across the grey dot's rim and across the disc's rim
DOT_RADII = np.linspace(0.03, 0.255, 16)
RIM_RADII = np.linspace(0.34, 0.70, 19)
#: radii (board units) of the face's samples: between the grey dot's rim and the disc's
FACE_RING_BOARD = (0.22, 0.28, 0.34)
#: radii (board units) of the ring just outside a disc's rim and side (an object lying across
#: the disc runs on there)
OUTSIDE_RING_BOARD = (0.6, 0.68)
#: a printed line around a candidate steps on at least this share of its rays (a disc's outline
#: on paper clipped as white as its face is its side and its shadow: strong on some rays only)
PRINTED_LINE_SHARE = 0.75
#: the noise of a profile averaged with its two neighbouring rays' (`_across_rays`), in units of
#: one ray's: sqrt(1/4 + 2/16)
ACROSS_RAYS_NOISE = math.sqrt(0.375)
#: the robust sigma (MAD) of one whole grey level: a face's spread is read in whole levels
EVEN_FACE_LEVELS = 1.4826
#: the most samples a step the lens leaves sharp spans at half its peak along a ray (the rim
#: samples' 0.02 diameters: a sharp frame's rims 4-5 samples, a 7-px motion blur's 8-11 along it)
SHARP_STEP_SAMPLES = 5
#: the cached board -> image table the profile points are looked up in (vision.geometry)
LOOKUP_SCALE_PX_PER_UNIT = 16.0
LOOKUP_MARGIN_BOARD = 1.5
#: the outline on the camera's side is taken within this of where the fit on the far side
#: puts it (board units: that fit's error on a piece a little off round, ~0.01, twice)
RIM_REFIT_BOARD = 0.02
#: a clipped face's rim steps within this of where the board's scale predicts it (the side band,
#: at most 0.02 at the camera's tilt, and the blur); beyond it lies the soft fall-off of its shadow
RIM_REACH_BOARD = 0.08
#: a light face that differs from its board shows its outline all around: on this share of the
#: rays it steps down at the rim or differs from what lies beyond (`_seen_all_around`; real
#: stones and men 21-24 of 24, the light wedges of a checkers board's squares 12-20)
ALL_AROUND_SHARE = 0.875
#: the face's rings are sampled at this many angles, at the profiles' rays' angles (`n_rays`'s
#: default): a face sample's angle is its ray's
FACE_RING_ANGLES = 24
#: ... and differs from what lies beyond on this share (real stones and men 17-24 of 24, card
#: symbols and a card back's lattice 3-17, those at 17 missing their outline on 4 rays or more)
BESIDE_ALL_AROUND_SHARE = 2.0 / 3.0
#: radii (board units) of the ring of board right around a disc (touching neighbours cover a
#: sixth of it each)
AROUND_RING_BOARD = (0.8, 0.9, 1.0, 1.1, 1.2)


#: a dark face that differs from its board shows its outline all around too: on this share of
#: the rays (`_dark_seen_all_around`; real stones, coins and men 20-24 of 24 where their outline
#: is missing on more than one arc; the empty dark squares of a wooden draughts board, open at
#: their four corners where the dark squares meet, 16-18, a card's print, a shoe or a sleeve at a
#: table's edge 12-13): between 18 and 21, 19.5, which takes 20 rays of 24. A piece much thicker
#: than the kit's (a carrom coin, a Go stone, 0.3-0.4 diameters) seen 45 degrees off the vertical
#: is a longer dark shape than its circle, its top face further from the camera than the profiles
#: reach: 18-19 rays of 24, the other 5-6 one arc behind it; such an outline counts on
#: `BESIDE_ALL_AROUND_SHARE` of the rays (the dark squares' corners open theirs on four arcs)
DARK_ALL_AROUND_SHARE = 19.5 / 24


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
    clipped_dot_response: float = 0.3
    #: dot blobs are local maxima of that response within a square of this side (the disc's own
    #: dot wins over the faint ring around it, and is not lost to a neighbour's rim or contact)
    dot_nms_board: float = 0.55
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
    #: a candidate needs this share of a full circle's votes (it must prove itself afterwards)
    min_vote_fraction: float = 0.20
    #: ... or this share where the face ring is clipped at the sensor's white all around (a
    #: start only: its side and shadow vote, a few grey levels deep; the outline proves it)
    clipped_start_fraction: float = 0.05
    #: ... and this share for a white face on paper clipped at the sensor's white, where the
    #: outline and face tests below do not apply
    clipped_vote_fraction: float = 0.30
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
    #: minimum grey step per profile sample for the rim of a dot on a clipped white face when the
    #: dot is neutral in colour (a grey dot; the notch between touching white discs is warm)
    neutral_clipped_dot_step: float = 1.0
    #: ... and may look this much smaller (share of its radius)
    neutral_clipped_dot_shrink: float = 0.6
    #: a dot counts as neutral when its B - R is at most this much below the face's, or below
    #: what the light's colour cast gives a grey of its brightness (grey levels)
    min_clipped_dot_chroma: float = -4.0
    #: the colour cast is measured on the grey dots of at least this many black discs
    min_cast_dots: int = 5
    #: ... and only on a face whose spread (robust sigma, grey levels) is at most this: clipped,
    #: not merely bright
    max_clipped_noise: float = 0.75
    #: radial rays for the sub-pixel fits
    n_rays: int = 24
    #: horizontal field of view assumed when no intrinsics are given and the tilt is too small
    #: to estimate the focal length from the homography (Raspberry Pi camera v2)
    default_hfov_deg: float = 62.2
    #: keep discs whose centre lies within this distance outside the playing area
    outside_tolerance_board: float = 0.45
    min_confidence: float = 0.45
    #: the noise floor (grey levels): 8-bit quantisation and a codec's flat blocks show less
    #: noise than any picture of a board carries
    min_noise: float = 1.0
    #: an outline step must stand this many noise sigmas (of the frame) above the noise
    outline_snr: float = 4.0
    #: a white disc on a board as light as its face: the share of a full circle's outline votes
    #: it needs besides its dot (a spot of print, a letter, has its edges but no circle of them)
    min_outline_votes: float = 0.2
    #: a face's spread (robust sigma across the ring between dot and rim) stays below this share
    #: of its contrast against the board (of the least contrast that counts, on a light board)
    max_face_spread: float = 0.8
    #: a Dition disc is black or white: its face's colour spread stays below this share of its
    #: brightness (white under a tungsten cast: 0.23; felt 0.5, wood 0.4, a red print 0.65)
    max_face_saturation: float = 0.33
    #: ... on all but this share of its samples (its rim, a highlight's fringe)
    max_coloured_share: float = 0.25
    #: share of the rays on which the outline is seen: closed all around (a disc's rim, side
    #: or shadow; a drawn crossing or a corner crosses the circle on 4 rays of 24, a line on 2)
    min_closure: float = 0.5
    #: a disc that shows only part of its outline is hemmed in: this many accepted discs touch
    #: it (centres closer than this; touching discs lie 1 diameter apart, and a narrow gap
    #: still hides the outline) ...
    min_hemming_neighbours: int = 2
    hemming_distance_board: float = 1.2
    #: ... found from a packed cluster's edge inward, this many rings deep
    hemming_rounds: int = 4
    #: a face differs from the board under it by this much (grey levels, or B - R) at least ...
    min_face_contrast: float = 16.0
    #: ... and by this many noise sigmas (a printed ring or a crossing has the board inside)
    face_snr: float = 3.0


@dataclass(frozen=True)
class DiscReading:
    """One disc: centre_board (x, y) board units, centre_px (x, y) captured pixels of the point
    where it touches the board, colour (the player's, black or white), confidence 0..1,
    sigma_board (1-sigma position uncertainty in board units), seen: the colour its face shows
    the camera, one of `vision.colour_names.SEEN_COLOURS` (a red draughts man is "red", its
    colour the darker or lighter player's; None: not measured (a grey frame), the player colour
    stands for it in `to_dict`)."""

    centre_board: tuple[float, float]
    centre_px: tuple[float, float]
    colour: Colour
    confidence: float
    sigma_board: float
    seen: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "x": round(self.centre_board[0], 4),
            "y": round(self.centre_board[1], 4),
            "colour": self.colour,
            "confidence": round(self.confidence, 3),
            "sigma": round(self.sigma_board, 4),
            "seen": self.seen if self.seen is not None else self.colour,
        }


class DiscTables:
    """What `detect_discs` needs of one known board that no frame changes: the rectification's
    maps, the board -> image table the profiles' points are looked up in, the camera above the
    board. Built once per board, camera, frame size and parameters (`DiscTables.matches`); the
    referee loop keeps one and hands it to every frame's `detect_discs`."""

    def __init__(self, board: BoardFit, frame_size: tuple[int, int], params: DiscParams = DiscParams(),
                 intrinsics: Intrinsics | None = None) -> None:
        import cv2

        intrinsics = board_intrinsics(board, intrinsics)
        self.board, self.frame_size, self.params, self.intrinsics = board, (int(frame_size[0]), int(frame_size[1])), \
            params, intrinsics
        s, m = params.scale_px_per_unit, params.margin_board
        n = self.rect_side_px = round((board.size_board + 2 * m) * s) + 1
        #: rectified pixel -> frame: fixed-point remap maps (1/32 px), also where the lens has no
        #: distortion and the mapping is a homography (a remap from maps made once is a third
        #: cheaper per frame than cv2.warpPerspective, which works the mapping out every time)
        maps = rectify_maps(board, s, m, intrinsics)
        if not isinstance(maps, tuple):
            # (x, y) = (M (u, v, 1)) projected, each term a row or a column: one division per pixel
            M, r = maps, np.arange(n, dtype=np.float64)
            den = M[2, 0] * r[None, :] + (M[2, 1] * r + M[2, 2])[:, None]
            x = ((M[0, 0] * r[None, :] + (M[0, 1] * r + M[0, 2])[:, None]) / den).astype(np.float32)
            y = ((M[1, 0] * r[None, :] + (M[1, 1] * r + M[1, 2])[:, None]) / den).astype(np.float32)
            maps = cv2.convertMaps(x, y, cv2.CV_16SC2)
        self.rectify_maps: tuple[np.ndarray, np.ndarray] = maps
        #: (n, n) float32 frame pixels x and y of board point (u / scale - margin, v / scale -
        #: margin) at [v, u] (`LOOKUP_SCALE_PX_PER_UNIT`, `LOOKUP_MARGIN_BOARD`; one table a
        #: coordinate: OpenCV's remap of a one-channel float table is exact bilinear, of a
        #: two-channel one it rounds the weights to 1/32, 0.06 px here)
        self.lookup_px = board_to_image_maps(board, intrinsics, scale_px_per_unit=LOOKUP_SCALE_PX_PER_UNIT,
                                             margin_board=LOOKUP_MARGIN_BOARD)
        self.geometry = camera_geometry(board, self.frame_size, intrinsics, params.default_hfov_deg)

    def matches(self, board: BoardFit, frame_size: tuple[int, int], params: DiscParams,
                intrinsics: Intrinsics | None) -> bool:
        """Whether these are the tables of this board, frame size (w, h), parameters and camera."""
        return (board is self.board and tuple(frame_size) == self.frame_size and params == self.params
                and board_intrinsics(board, intrinsics) == self.intrinsics)

    def rectify(self, frame: np.ndarray) -> np.ndarray:
        """The top-down board image at `scale_px_per_unit` with `margin_board` (vision.geometry.rectify)."""
        import cv2

        return cv2.remap(frame, *self.rectify_maps, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


# --------------------------------------------------------------------------------------------
# the stage
# --------------------------------------------------------------------------------------------


def _detect_neutral_discs(frame: np.ndarray, board: BoardFit, params: DiscParams = DiscParams(), *,
                          intrinsics: Intrinsics | None = None, tables: DiscTables | None = None) -> list[DiscReading]:
    """`detect_discs`'s black-and-white pass, with its arguments: every black or white disc,
    sorted by (y, x)."""
    import cv2

    intrinsics = board_intrinsics(board, intrinsics)
    check_frame(frame)
    frame_size = (frame.shape[1], frame.shape[0])
    if tables is None or not tables.matches(board, frame_size, params, intrinsics):
        tables = DiscTables(board, frame_size, params, intrinsics)
    s = params.scale_px_per_unit
    m = params.margin_board
    rect_bgr = tables.rectify(frame) if frame.ndim == 3 else None
    rect = cv2.cvtColor(rect_bgr, cv2.COLOR_BGR2GRAY) if rect_bgr is not None else tables.rectify(frame)
    rectf = rect.astype(np.float32)
    # the noise this frame shows (grey levels, one pixel's robust sigma)
    noise = max(_frame_noise(rect), params.min_noise)
    cands, votes = _candidates(*_vote_channels(rect_bgr if rect_bgr is not None else rect, params), params)
    # a white face on paper clipped at the sensor's white votes with its side and its shadow's
    # ring only, a few grey levels deep: a weaker peak is a start there, where the face ring is
    # clipped all around (clipped pixels carry no noise; `_clipped_outline` proves it or not)
    full_votes_px = math.pi * params.disc_diameter_board * min(params.vote_scale_px_per_unit, s)
    weak = votes < params.min_vote_fraction * full_votes_px
    if weak.any():
        # (clipped: at `clip_level`; bright paper a few levels under it still shows its noise
        # and the weak peaks its grain makes, hundreds a frame on the kit's paper, are no start)
        keep_weak = _clipped_annulus(rect, cands[weak], params, level=params.clip_level)
        sel = ~weak
        sel[np.flatnonzero(weak)[keep_weak]] = True
        cands, votes = cands[sel], votes[sel]
    # discs hemmed in on all sides by their own colour have little outline to vote with, but
    # their grey dot is always in view: add dot-like spots that no outline candidate explains
    from scipy.spatial import cKDTree

    dots = all_dots = _dot_candidates(rectf, params)
    # (a weak vote peak, below what a clipped face's rules need, does not explain a dot: both
    # are tried, and of two readings that close the better-supported one stays)
    full_circle = math.pi * params.disc_diameter_board * min(params.vote_scale_px_per_unit, s)
    explaining = cands[votes >= params.clipped_vote_fraction * full_circle]
    if len(dots) and len(explaining):
        # (a vote peak explains the dot its fits start from, within `dot_snap_board`, and the
        # notch or the gap between the touching discs around it, within `min_separation_board`
        # of two peaks or more; a dot that close to one peak only is another disc's: the peak of
        # a printed ring beside a white disc on clipped paper, 0.6 from the disc's dot, outvotes
        # the disc's own weak peak; both are tried, and of the two readings the better-supported
        # one stays, `_non_overlapping`)
        tree = cKDTree(explaining)
        near, _ = tree.query(dots, distance_upper_bound=2 * params.min_separation_board * s)
        peaks = tree.query_ball_point(dots, params.min_separation_board * s, return_length=True)
        dots = dots[(near > params.dot_snap_board * s) & (peaks < 2)]
    from_dot = np.concatenate([np.zeros(len(cands), bool), np.ones(len(dots), bool)])
    cands = np.concatenate([cands.reshape(-1, 2), dots.reshape(-1, 2)])
    votes = np.concatenate([votes, np.zeros(len(dots))])
    if len(cands) == 0:
        return []
    centres0 = cands / s - m  # board units (top face, approximately)
    # local plate brightness: a closing removes discs and lines (dark), keeps the plate
    k = round(1.6 * s) | 1
    small = _quarter(rect)
    ks = max(3, (k // 4) | 1)
    bg = _closing(small, ks)

    # the face's samples (the ring between the dot and the rim), looked up once for every test
    face_idx = _ring_indices(rect.shape, cands, tuple(r * s for r in FACE_RING_BOARD), FACE_RING_ANGLES)
    face, dotv, spread = _ring_stats(rectf, cands, face_idx, params)
    plate = _plate_brightness(bg, rect.shape, cands)
    ratio = face / np.maximum(plate, 1.0)
    # black: a face well below the plate (glare lifts it to ~0.65), and a dot brighter than
    # the face; white: a face near or above the plate and a darker dot
    dot_vote = np.clip((dotv - face) / 40.0, -1.0, 1.0)
    black_score = (params.black_ratio - ratio) / 0.12 + dot_vote
    # (in grey: whether the face is darker than the board, the sign of its outline's steps for
    # the fits below; its colour is read in the board's brightest channel, below)
    is_black = black_score > 0
    # the leniency for dots on clipped white faces needs the face clipped all around the dot,
    # with no ink showing (a drawn line through clipped paper is no disc's dot)
    clear = np.zeros(len(cands), bool)
    if (~is_black).any():
        clear[~is_black] = _clipped_annulus(rect, cands[~is_black], params)
    # a white disc on clipped paper votes with its shadow side only, and its vote peak can lie
    # off the centre by more than the dot fit reaches: start its fits from its dot's blob (on a
    # clipped face, where the dot looks shrunken and the fit needs a close start, from both)
    alt_start = np.full((len(cands), 2), np.nan)
    if len(all_dots):
        d_dot, j_dot = cKDTree(all_dots).query(cands, distance_upper_bound=2 * params.dot_snap_board * s)
        white_near = ~from_dot & ~is_black & (d_dot < params.dot_snap_board * s)
        snap = white_near & (d_dot > params.dot_snap_min_board * s)
        if snap.any():
            centres0[snap] = all_dots[j_dot[snap]] / s - m
            clear[snap] = _clipped_annulus(rect, all_dots[j_dot[snap]], params)
            # (and its face is read around that start too, where that ring is clear of ink:
            # around a peak 0.1 off the centre the face ring takes in the dot on one side and the
            # rim on the other, and a white face on paper as light as it, as even as a face is,
            # looked as uneven as print; but a letter's stroke end taken for a dot (the decorated
            # board's title, seed 1 frame 1 as OpenCV 4.10 draws it) has its stroke running on
            # through that ring, darker than the face by many times its spread and the frame's
            # noise, on a twelfth of the ring's samples: such a face keeps the peak's reading)
            idx_dot = _ring_indices(rect.shape, all_dots[j_dot[snap]], tuple(r * s for r in FACE_RING_BOARD), 24)
            face_dot, dotv_dot, spread_dot = _ring_stats(rectf, all_dots[j_dot[snap]], idx_dot, params)
            ring_dot = rectf.reshape(-1)[idx_dot]
            ink = ring_dot < (face_dot - 6.0 * np.maximum(spread_dot, noise))[:, None]
            inkless = ink.sum(axis=1) <= ring_dot.shape[1] // 24  # (a sample per ring's radius)
            k = np.flatnonzero(snap)[inkless]
            face_idx[k] = idx_dot[inkless]
            face[k], dotv[k], spread[k] = face_dot[inkless], dotv_dot[inkless], spread_dot[inkless]
        both = white_near & ~snap & clear & (d_dot > 0)
        alt_start[both] = all_dots[j_dot[both]] / s - m
    # a dot-only candidate can only pass below with a uniform face around it off the drawn
    # lines, or on a face clipped all around: drop the others before the (costly) profiles
    uniform = spread < 0.2 * np.abs(face - dotv)
    off_ink = _off_ink(centres0, intrinsics is not None, params)
    viable = ~from_dot | clear | (uniform & off_ink)
    if not viable.all():
        (cands, votes, from_dot, centres0, face, dotv, spread, black_score, dot_vote, is_black, clear, uniform,
         off_ink, alt_start, face_idx) = (a[viable] for a in (cands, votes, from_dot, centres0, face, dotv, spread,
                                                              black_score, dot_vote, is_black, clear, uniform,
                                                              off_ink, alt_start, face_idx))
        if len(cands) == 0:
            return []
    # the colour, in the board's brightest channel (`_face_to_plate`): a black face on saturated
    # felt can be lighter than the felt in grey and is read as light above, its outline and dot
    # included, but it is a black disc
    reads_black = is_black if rect_bgr is None else (
        (params.black_ratio - _face_to_plate(rect_bgr, face_idx, ks, cands)) / 0.12 + dot_vote > 0)

    geom = tables.geometry
    # one sampling pass for both fits: rays from each candidate (and from each second start)
    # across the dot and the rim
    n = len(cands)
    alt = np.flatnonzero(np.isfinite(alt_start[:, 0]))
    ext = np.concatenate([np.arange(n), alt])
    starts = np.concatenate([centres0, alt_start[alt]])
    # (from the uint8 frame, BGR or grey: quantisation << sensor noise)
    vals, u, vals_bright, vals_bgr = _sample_profiles(frame, tables.lookup_px, starts, np.concatenate([DOT_RADII, RIM_RADII]),
                                                      params.n_rays)
    nd = len(DOT_RADII)
    # a grey dot is neutral; the notch where two white discs touch, or the gap between three,
    # shows the warm paper in their shadow
    # (only asked where the face is clipped all around and free of noise: paper just below the
    # sensor's white still carries its noise, and steps that weak are everywhere in it)
    neutral = None
    if rect_bgr is not None:
        neutral = np.zeros(len(starts), bool)
        ask = np.flatnonzero(clear[ext] & (spread[ext] <= params.max_clipped_noise))
        if len(ask):
            black_dots = cands[~from_dot & is_black]
            cast = _colour_cast(rect_bgr, black_dots, params)
            neutral[ask] = _neutral_dots(rect_bgr, (starts[ask] + m) * s, cast, params)
    # both sub-pixel fits of every start in one batch: the grey dot's rim and the disc's rim
    dot_edges = _dot_edges(vals[..., :nd], is_black[ext], params, clear=clear[ext], neutral=neutral)
    rim_edges = _rim_edges(vals[..., nd:], u, starts, is_black[ext], geom, params)
    # (a light face's rim on the camera's side is its first step down where the board beyond is
    # lighter than half the face: a side in the shade below the face is no darker than that,
    # so the board steps up from it; on a board darker still the step down goes on to the side's
    # foot, which is then no rim)
    face_level = vals[..., :nd][..., DOT_RADII >= 0.19].mean(axis=2)
    beyond_level = vals[..., nd:][..., RIM_RADII >= 0.64].mean(axis=2)
    whole = _whole_outline(rim_edges, is_black[ext], -(geom.thickness_shift(starts, params.thickness_board) @ u.T),
                           0.5 * params.disc_diameter_board, beyond_level > 0.5 * face_level)
    dots_fit, rims_fit, whole_fit = _fit_dots_and_rims(starts, u, dot_edges, rim_edges, whole, params)
    rim_first = rims_fit[0].copy()  # (what decides whether a disc is seen: the first fit's)
    rims_fit = _refit_rims(starts, u, rim_edges, rims_fit, whole, whole_fit)
    if len(alt):
        # of the two starts, the one whose dot fit agrees with more rays stays
        ok2, cover2 = dots_fit[2][n:], dots_fit[3][n:]
        better = alt[ok2 & (~dots_fit[2][alt] | (cover2 > dots_fit[3][alt]))]
        from_alt = n + np.flatnonzero(np.isin(alt, better))
        centres0[better] = starts[from_alt]
        for a in (*dots_fit, *rims_fit, rim_first):
            a[better] = a[from_alt]
    top, top_sigma, dot_ok, dot_cover, dot_clipped = (a[:n] for a in dots_fit)
    outline_c, outline_sigma, outline_ok, outline_cover = (a[:n] for a in rims_fit)
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
    # (a white reading's contrast against the plate cannot tell a disc from bare paper: without
    # its dot in view, on a face that is not clipped, only the outline speaks for it; a drawn
    # line through the paper gives the free-radius dot fit edges too, but no dot-sized circle
    # agrees with them: the dot counts as seen only when its fitted radius is a dot's)
    dot_seen = dot_ok & (dot_cover > 0)
    # what every disc shows, whatever it is made of (a dot is extra evidence, never required):
    # an outline closed all around at the radius the board's scale predicts, and a face that
    # differs from the board under it; both measured against the noise this frame shows
    noise_bgr = _frame_noise(rect_bgr) if rect_bgr is not None else None  # (each channel's)
    # (np.take gathers rows of pixels about twice as fast as fancy indexing)
    face_bgr = np.take(rect_bgr.reshape(-1, 3), face_idx, axis=0) if rect_bgr is not None else None  # (N, 72, 3)
    face_delta, face_step, face_colour, board_colour = _face_against_board(
        small, rect.shape, rect_bgr, face_bgr, cands, face, max(params.min_face_contrast, params.face_snr * noise),
        ~is_black, params)
    neutral = _neutral_face(face_bgr, noise, params) if face_bgr is not None else np.ones(len(cands), bool)
    tinted = np.zeros(len(cands), bool)  # (light faces of the board's own tint: `_pale_board_tint`)
    # (and a light face on a board of a colour, wood or felt, even where `_neutral_face` calls it
    # neutral: a cream coin 0.31-0.34 of its brightness, paler than the plywood, differs from it
    # in blue only and needs its colour's profiles below. Where the board around is neutral
    # itself, paper or a card's white, the grey profiles alone are asked: asked there too, 4
    # phantoms among the playing cards of `chips_poker_table/train_11`)
    board_tinted = (_coloured(board_colour, noise, params) if board_colour is not None
                    else np.zeros(len(cands), bool))
    if face_bgr is not None and ((~neutral | board_tinted) & ~is_black).any():
        # (or a light face of the board's own tint, paler than the board: white for that board,
        # `_pale_board_tint`; its outline, face and all-around rules below as any light face's)
        ask = np.flatnonzero((~neutral | board_tinted) & ~is_black)
        tint = _pale_board_tint(face_bgr[ask], board_colour[ask], noise, params)
        # (such a face has nothing but its outline and its lightness to tell it from the board: it
        # stands out from the board right around it, the median of a ring 0.8-1.2 diameters out,
        # by the least contrast that counts, in some channel; a bare cell of a green board between
        # its drawn lines differs from the median 5 diameters around, darkened by the lines and
        # the board's frame, by 18-22 levels, from the cells around it by 6-11; cream coins 17-80)
        if tint.any():
            j = ask[tint]
            ring_idx = _ring_indices(rect.shape, cands[j], tuple(r * s for r in AROUND_RING_BOARD), FACE_RING_ANGLES)
            ring = np.take(rect_bgr.reshape(-1, 3), ring_idx, axis=0).astype(np.float32)  # (M, P, 3)
            around = np.median(ring, axis=1)
            off = face_colour[j] - around
            c = np.argmax(off, axis=1)
            # (and by more than that ring varies, its robust sigma in that channel: a bamboo board's
            # grain and drawn lines around a bare cell vary by 21 levels where the cell differs by
            # 16; plywood around a coin 4-17, where the coins differ by 17-47)
            ring_c = np.take_along_axis(ring, c[:, None, None], axis=2)[..., 0]
            ring_sigma = 1.4826 * np.median(np.abs(ring_c - np.take_along_axis(around, c[:, None], axis=1)), axis=1)
            least = np.maximum(max(params.min_face_contrast, params.face_snr * noise), ring_sigma)
            tint[tint] = np.take_along_axis(off, c[:, None], axis=1)[:, 0] >= least
        neutral[ask] |= tint
        tinted[ask] = tint
    object_rays = np.zeros((len(cands), params.n_rays), bool)  # (the rays an object lies across)
    if face_bgr is not None and rect_bgr is not None and (~neutral).any():
        # (or neutral but where an object lying across it hides part of it (`_under_object`):
        # then its face is what the rest of the ring shows, the object's samples left out)
        ask = np.flatnonzero(~neutral)
        out_idx = _ring_indices(rect.shape, cands[ask], tuple(r * s for r in OUTSIDE_RING_BOARD), FACE_RING_ANGLES)
        out_bgr = np.take(rect_bgr.reshape(-1, 3), out_idx, axis=0)
        under, covered = _under_object(face_bgr[ask], out_bgr, board_colour[ask],
                                       noise, max(params.min_face_contrast, params.face_snr * noise), params)
        if under.any():
            i = ask[under]
            neutral[i] = True
            if params.n_rays == FACE_RING_ANGLES:
                object_rays[i] = _rays_under_object(covered[under])
            face_bgr = face_bgr.copy()
            face_bgr[i], face[i], spread[i] = _without_object(face_bgr[i], rectf.reshape(-1)[face_idx[i]],
                                                              covered[under])
            face_delta, face_step, face_colour, board_colour = _face_against_board(
                small, rect.shape, rect_bgr, face_bgr, cands, face,
                max(params.min_face_contrast, params.face_snr * noise), ~is_black, params)
    # (and is one surface: text, a logo, a crossing of lines vary more across the ring than
    # they differ from the board)
    # (a light face clipped at the sensor's white in all three channels shows less contrast
    # than it has, the sensor cut it off, and carries no noise: only the frame's noise bounds
    # its contrast from below. The least contrast of print does not apply: ink is darker than
    # its paper, never clipped above it; bare warm paper in a hot spot is clipped in red and
    # green, its blue still a few levels below white)
    saturated = ~is_black & _saturated(face_bgr, params) if face_bgr is not None else np.zeros(len(cands), bool)
    min_contrast = np.where(saturated, params.face_snr * noise, max(params.min_face_contrast, params.face_snr * noise))
    # (how much the face varies against how much it differs, either way: a glossy black disc on
    # green felt, lit, is lighter than the felt in grey, blue and red, darker in green only)
    one_surface = spread <= params.max_face_spread * np.maximum(face_step, min_contrast)
    differs = (face_delta >= min_contrast) & one_surface
    min_step = np.full(len(cands), max(params.min_rim_step, params.outline_snr * noise))
    band = -(geom.thickness_shift(centres0, params.thickness_board) @ u.T)
    polarity = np.where(is_black, 1.0, -1.0)
    closure = _outline_closure(vals[:n, :, nd:], rim_edges[2], band, min_step, polarity)
    # (a light face's, over the width a rim has in this frame: a defocused frame spreads a white
    # face's step of 27 levels over 0.16 diameters, of which 0.04 see a quarter, `_rim_span`; a
    # dark face steps 100 levels and more, which 0.04 diameters see however blurred, and the
    # dark corners of the drawn squares would close over the wider span)
    span = _rim_span(vals[:n, :, nd:], ~from_dot & outline_ok, rim_edges[1][:n], polarity, noise)
    light = np.flatnonzero(~is_black)
    if span > 1 and len(light):
        closure[light] = _outline_closure(vals[light][:, :, nd:], rim_edges[2], band[light], min_step[light],
                                          polarity[light], span)
    # (and a face of the board's own tint over the width of its own rim where that is wider than
    # the frame's: a turned wooden coin's rounded edge falls over 0.1-0.15 diameters where the
    # frame's black rims fall over 0.04, `_own_rim_span`. Only such a face, which stands out from
    # the board right around it: bare paper among discs, ringed by their soft shadows, closes
    # over a wider span as well: seed 1 frame 8 of the kit's table)
    own_span = np.full(n, span)
    pale = np.flatnonzero(tinted)
    if len(pale):
        own_span[pale] = np.maximum(span, _own_rim_span(vals[pale][:, :, nd:], min_step[pale]))
        wider = pale[own_span[pale] > span]
        for sp in np.unique(own_span[wider]):
            j = wider[own_span[wider] == sp]
            closure[j] = np.maximum(closure[j], _outline_closure(vals[j][:, :, nd:], rim_edges[2], band[j],
                                                                 min_step[j], polarity[j], int(sp)))
    if vals_bright is not vals:
        # (and in grey + (B - R), where a black disc on blue felt differs from it; that channel
        # carries the noise of three: sqrt(3) times the steps)
        closure = np.maximum(closure, _outline_closure(vals_bright[:n, :, nd:], rim_edges[2], band,
                                                       min_step * math.sqrt(3.0), polarity))
    beside_share = _face_against_beside(vals[:n], rim_edges[2], band, min_step, polarity)
    rim_in_colour = np.zeros(len(cands), bool)
    along_dark = None  # (the dark faces' profiles along their colour to the board, and their least step)
    if vals_bgr is not None and (is_black | saturated).any():
        # (and along the colour in which this face and the board under it differ most, measured
        # on both: a black face on saturated felt can be as bright as the felt, grey and even
        # grey + (B - R) see no rim, but it lacks the felt's colour; that channel is a unit
        # vector e of B, G, R, whose noise is that of the channels the frame shows, weighted by e)
        # (for a dark face only: a white face stands out in grey already, and a corner of the
        # board's frame, a shadow or the print beside a line differ from the felt in colour too)
        # (and for a light face clipped in all three channels: its grey steps are clipped too, a
        # white face on warm paper clipped in red and green differs from it in blue only)
        dark = np.flatnonzero(is_black | saturated)
        along, e = _along_face_to_board(vals_bgr[dark], face_colour[dark], board_colour[dark])
        along_noise = np.maximum(np.sqrt((e**2) @ noise_bgr ** 2), params.min_noise)
        step = np.maximum(params.min_rim_step, params.outline_snr * along_noise)
        up = np.ones(len(dark))
        r_dark, band_dark = rim_edges[2], band[dark]
        along_dark = (dark, along, step)
        closure[dark] = np.maximum(closure[dark], _outline_closure(along[..., nd:], r_dark, band_dark, step, up))
        beside_share[dark] = np.maximum(beside_share[dark], _face_against_beside(along, r_dark, band_dark, step, up))
        # (such a face's rim steps are clipped in grey too: where the grey fit found no rim, the
        # rim is fitted in that colour and the centre taken from it and the dot; on every ray
        # that shows it: the face's own rim is its first step on the camera's side as well,
        # down onto its side in the shade below it, and a fit of half the outline is pulled
        # towards the far side by a piece not quite round)
        sat = np.flatnonzero(saturated[dark] & ~outline_ok[dark])
        if len(sat):
            j = dark[sat]
            r_edge, far_ok, r_top, near_ok = _rim_edges(along[sat][..., nd:], u, starts[j], np.ones(len(j), bool),
                                                        geom, params)
            c_sat, sig_sat, ok_sat, cover_sat, _ = _fit_circles(starts[j], u, r_edge, far_ok | near_ok, r_top, True)
            # (and located as a rim is, to within half of what a piece a little off round leaves:
            # the clipped paper's rims of shadow fall-off, 0.02-0.03; the discs', 0.002-0.004)
            rim_in_colour[j] = ok_sat & (cover_sat >= params.min_closure) & (sig_sat <= 0.5 * RIM_REFIT_BOARD)
            j, c_sat, w_sat = j[ok_sat], c_sat[ok_sat], 1.0 / np.maximum(sig_sat[ok_sat], 1e-3) ** 2
            wj = w_dot[j] + w_sat
            top_c[j] = (top[j] * w_dot[j, None] + c_sat * w_sat[:, None]) / wj[:, None]
            centre[j] = top_c[j] - geom.thickness_shift(top_c[j], params.thickness_board)
            sigma[j] = np.sqrt(1.0 / wj + (0.003 if not geom.estimated else 0.008) ** 2)
    along_tint = None  # (the tinted faces' profiles along their colour to the board, and their least step)
    if vals_bgr is not None and tinted.any():
        # (a face of the board's own tint differs from it along their colours' difference: a cream
        # coin on plywood is bluer than the wood, hardly lighter in grey; its outline, its face
        # against what lies beside it and all around are read there too, the face darker than
        # the board along that direction, as for a dark face on felt above)
        t = np.flatnonzero(tinted)
        along, e = _along_face_to_board(vals_bgr[t], face_colour[t], board_colour[t])
        step = np.maximum(params.min_rim_step, params.outline_snr * np.sqrt((e**2) @ noise_bgr ** 2))
        up = np.ones(len(t))
        along_tint = (t, along, step)
        for sp in np.unique(own_span[t]):
            k = np.flatnonzero(own_span[t] == sp)
            closure[t[k]] = np.maximum(closure[t[k]], _outline_closure(along[k][..., nd:], rim_edges[2], band[t[k]],
                                                                       step[k], up[k], int(sp)))
        beside_share[t] = np.maximum(beside_share[t], _face_against_beside(along, rim_edges[2], band[t], step, up))
    # (a clipped face is held to the noise alone where a rim of the disc's size is fitted
    # around it, in grey or in that colour, on at least `min_closure` of the rays and located as
    # a rim is (below; kit seed 3 frame 74: clipped paper with a grey fit on 11 rays): bare paper
    # clipped in a hot spot between discs has their shadows' soft fall-off around it, steps on
    # some rays (a quarter of them) but no circle of them; the discs, 0.96-1)
    rim_in_grey = outline_ok & (outline_cover >= params.min_closure) & (outline_sigma <= 0.5 * RIM_REFIT_BOARD)
    # (or where the face shows a darker centre, its dot washed out to a smudge too faint and small
    # for the dot fit (a lamp's hot spot, seed 1 frame 11: 10 grey levels under a face at 254,
    # 0.07 of a diameter across), and differs with its sign from what lies right beyond its rim
    # on three quarters of the rays (`_proven_by_dot`'s share): bare paper clipped between discs
    # is as light at the centre of its ring as around it)
    smudged = (face - dotv >= min_step) & (beside_share >= 0.75) & (face_delta >= params.face_snr * noise)
    differs &= ~saturated | rim_in_grey | rim_in_colour | smudged | (face_delta >= max(params.min_face_contrast,
                                                                                       params.face_snr * noise))
    closed = closure >= params.min_closure
    # (the board under a disc is what lies right beside its rim, not the board 5 diameters
    # away: a patch of table beside the board's edge differs from the board but not from what
    # surrounds it; a disc's face differs from what lies beyond its rim, with its colour's
    # sign, on at least as many rays as its outline closes on: neighbours hide the rest)
    beside = beside_share >= params.min_closure
    contrast_counts = is_black | dot_seen | dot_clipped | (closed & differs)
    conf = 0.45 * vote_score + 0.2 * contrast * contrast_counts + 0.2 * dot_ok + 0.15 * outline_ok
    size = board.size_board
    tol = params.outside_tolerance_board
    inside = np.all((centre > -tol) & (centre < size + tol), axis=1)
    # a dot-only candidate must show a proper dot (a gap between discs is no circle)
    # and a uniform face around it (a line corner or a gap between discs is not), off the ink
    if from_dot.any():
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
    # a white disc on clipped paper whose dot is all but washed out still shows its side and
    # its shadow to the outline fit: with a clipped face all around the faint dot and the outline
    # centred where the search started, that is a disc (a dot-only candidate must also lie off
    # the ink; a vote peak has its outline's votes besides)
    # (in colour, a face clipped in all three channels: light that washes out the grey dot lifts
    # the face, a hundred levels above the dot in every channel, far past the sensor's white;
    # bare warm paper in a hot spot is clipped in red and green only)
    moved = np.linalg.norm(rim_first[:n] - centres0, axis=1)
    # (located as a rim is, to within what a piece a little off round leaves, twice: the side and
    # the shadow of clipped discs fit to 0.032 at most on the varied table's frames; bare paper
    # in a hot spot ringed by the soft shadows of the discs around it, 0.047: seed 2 glare frame 7)
    rim_only = (~dot_ok & outline_ok & dot_clipped & (moved < params.rim_only_max_shift_board)
                & (outline_cover >= params.rim_only_min_cover) & (saturated | (face_bgr is None))
                & (outline_sigma <= 2.0 * RIM_REFIT_BOARD))
    # (and that outline is a disc's size: a ring printed on the clipped paper, a little wider
    # than a disc, gives the fixed-radius fit its edges too; where no dot speaks for it, a clipped
    # face's outline counts only then)
    # (clipping moves a disc's step out by up to the blur's width, but its outline there is its
    # side and its shadow, strong on some rays only; a printed ring is an even line on all of them)
    unsized = dot_clipped & ~dot_ok & outline_ok
    if unsized.any():
        j = np.flatnonzero(unsized)
        _, strength = _edge_positions(vals[j, :, nd:], RIM_RADII, np.full(len(j), -1.0),
                                      near=(rim_edges[2], params.min_rim_step))
        even_line = (strength > min_step[j, None]).mean(axis=1) >= PRINTED_LINE_SHARE
        unsized[j] = even_line & ~_disc_sized(starts[j], u, rim_edges[0][j], rim_edges[1][j], rim_edges[2])
    rim_only &= ~unsized
    if from_dot.any():
        dot_conf = np.where(rim_only & annulus_ok & off_ink, 0.45 + 0.2 * contrast, dot_conf)
    conf = np.where(from_dot, dot_conf, np.where(rim_only, np.maximum(conf, 0.45 + 0.2 * contrast), conf))
    # the evidence a disc shows whatever it is made of: its closed outline, its face against the
    # board (in units of the least contrast that counts), its dot if it has one
    face_term = np.clip(face_delta / (4.0 * min_contrast), 0.0, 1.0)
    shown = 0.55 * closure + 0.25 * face_term + 0.2 * (dot_seen | (saturated & smudged))
    conf = np.where(closed & differs, np.maximum(conf, shown), conf)
    # every disc shows its dot or its rim to the sub-pixel fits, or its closed outline around a
    # face of its own (then its vote peak is its centre); a vote peak that shows none of them is
    # a coincidence of edges between discs
    keep = inside & (conf >= params.min_confidence) & (dot_ok | outline_ok | (closed & differs))
    # and nothing that is not a disc: a drawn crossing, a printed ring, glare, a gap between
    # discs shows no face of its own or no closed outline. Exceptions, each with its evidence:
    # a white face on paper clipped at the sensor's white (its dot and its side's rim speak, by
    # the rules above); a disc hemmed in by its own colour (its outline shows in the gaps between
    # its neighbours, half of a free disc's at least, and its dot is round and a dot's size); a
    # white disc on a board as light as its face, one surface all round (its closed outline and
    # its round dot, or half its outline, its dot and the votes of its outline: a dot-like spot of
    # print has no outline votes, so there the face must differ too)
    dot_round = dot_seen & (dot_cover >= params.min_dot_cover)
    if rect_bgr is not None and dot_round.any():
        # (and grey, as a disc's dot is: the tip of a printed red star looks like a dot too)
        dot_bgr = _mean_colour(rect_bgr, cands[dot_round], (0.0, 0.03 * s, 0.06 * s))
        dot_round[dot_round] = ~_coloured(dot_bgr, noise, params)
    half_closed = closure >= 0.5 * params.min_closure
    # (hemmed in, a disc still differs from what lies beyond its rim in the gaps its outline
    # shows through: a letter or a stripe on a rack is the board's or the rack's own colour there)
    half_beside = beside_share >= 0.5 * params.min_closure
    # (with no contrast against the board to show, a white face on a light board must be as
    # even as the frame's noise lets it be: a letter or a logo inside the ring is not, nor bare
    # paper whose ring runs over the blurred or noisy rims of the discs around it, 2.8 noise
    # sigmas. The ring's robust sigma is the noise to within its estimate's error (72 samples:
    # a fifth of it) and its whole grey levels (a MAD of one level is 1.48), which the faces of
    # the varied table show: up to 2.4 sigmas at 3 levels of noise, 2.8 at one level)
    even_face = spread <= 2.0 * noise + EVEN_FACE_LEVELS
    # (a dot-only candidate too, when its outline closes: a white face on paper as light as it
    # steps too little to vote, but its side and shadow still close around a round dot, off the
    # ink and on a uniform face (`uniform`, the dot-only tests above), and the circle of a disc's
    # radius fits its rim on as many rays as the outline must close on: a letter among letters
    # (a board's printed text) finds its neighbours' strokes on the circle, not one rim)
    dot_outline = uniform & (outline_cover >= params.min_closure)
    # (a disc's outline is a circle: its step runs on across neighbouring rays, 15 degrees apart,
    # where the noise does not. On each ray's profile averaged with its two neighbours' (1/4,
    # 1/2, 1/4) the noise falls to sqrt(3/8) of one ray's, and the bound of `outline_snr` sigmas
    # with it (not the floor: a codec's blocks run across rays): a white face on office paper as
    # light as it, its outline a soft shadow 15-25 levels deep on paper of 3 levels of noise,
    # steps 8-14 levels over 0.04 diameters, under 4 sigmas of one ray. A line or an edge
    # tangent to the circle runs across rays too: this closure speaks only for a light face that
    # shows its round dot on an even face)
    closed_across = np.zeros(len(cands), bool)
    ask = np.flatnonzero(~is_black & ~closed & one_surface & even_face & dot_round & (~from_dot | dot_outline))
    if len(ask):
        step_across = max(params.min_rim_step, params.outline_snr * noise * ACROSS_RAYS_NOISE)
        closed_across[ask] = _outline_closure(_across_rays(vals[ask][:, :, nd:]), rim_edges[2], band[ask],
                                              np.full(len(ask), step_across), polarity[ask],
                                              span) >= params.min_closure
    light_board = one_surface & even_face & (((closed | closed_across) & dot_round & (~from_dot | dot_outline))
                                             | (~from_dot & half_closed & dot_seen
                                                & (vote_score >= params.min_outline_votes)))
    # (the clipped faces' rules were made for vote peaks of `clipped_vote_fraction` of a circle)
    # (and where no dot is seen on it either, only the outline speaks: a rim fitted as a rim is,
    # `rim_in_grey`, unless the face is clipped in all three channels, where the grey steps are
    # cut off too and the colour's rules above speak; a printed ring half hidden by a disc
    # beside it has the paper inside clipped as white as a face and its ink and the disc's edge
    # around it, at no one radius: 0.025 off)
    clipped_ok = (((dot_clipped & ~unsized & (dot_ok | saturated | rim_in_grey)) | rim_only)
                  & (from_dot | (votes >= params.clipped_vote_fraction * full_circle)))
    # (a Dition face around its dot is even: a letter's bowl or a logo is not)
    even = spread < 0.2 * np.abs(face - dotv)
    # (a disc that proves itself by its dot, its rim and its whole outline needs no more contrast
    # against the board than the frame's noise lets it show: `_proven_by_dot`)
    proven = _proven_by_dot(closure, beside_share, dot_round, outline_ok, even_face & one_surface, face_delta,
                            params.face_snr * noise, params.min_closure)
    # (and a dark face's outline is round: it steps 100 grey levels and more onto the board, so
    # the rim fit locates it to a few thousandths of a diameter wherever it borders the board
    # (0.001-0.005; a piece a little off round, half of `RIM_REFIT_BOARD`), or the disc shows
    # its round grey dot on a face as even as the frame's noise lets it be (a black face on
    # felt as bright as it in grey has no rim there; its face spreads 1-1.5 noise sigmas).
    # Print is darker than its paper too and closes around a dark face of its own: a letter a
    # disc high has corners and counters, its fit lies 0.02-0.05 off, or fails, and the paper
    # in its counter is a round spot on a face crossed by strokes (10 noise sigmas); a
    # disc-sized hexagon of ink, 0.013-0.02, its flats 0.07 inside its corners). Only where the
    # camera is known (intrinsics): without them the board's plane is mapped through an
    # estimated camera and a real stone's rim fits 0.01-0.03 off a circle there (real photos
    # with their corners given), as the hexagon's does
    # (as even as `face_snr` noise sigmas: the letters' 10 are far off, and a black face under
    # glare carries its highlight's gradient, which the white faces' tighter `even_face` refuses)
    # (without the camera the roundness is waived, not the size: a dark face's rim is still
    # fitted at the radius the board's scale predicts, on 6 rays at least (`outline_ok`: every
    # dark stone and coin read on the real photos has it). A dark picture on a larger light
    # disc, a carrom striker's 1.3 diameters, closes its own outline all around at no disc's
    # radius (its free-radius fit 0.38 where a disc's is 0.5; the fixed one on 1 ray of 24))
    round_outline = (~is_black | (outline_ok & (geom.estimated | (outline_sigma <= 0.5 * RIM_REFIT_BOARD)))
                     | (dot_round & (spread <= params.face_snr * noise)))
    # (that evenness read around the top face's fitted centre, the light's slope across the face
    # taken off, `_spread_off_plane`: a lamp's glare lifts a black face towards the point that
    # mirrors the lamp to the camera, by 4-8 levels of slope across the ring, and the vote peak
    # lies up to 0.06 off the centre, where the ring takes in the dot's edge: glare seed 1 frame
    # 23, faces spread 4.4-7.4 there and 1.4-2.1 about their plane, noise 1.05; a letter's
    # strokes and a logo's are no plane)
    ask = np.flatnonzero(is_black & ~round_outline & dot_round)
    if len(ask):
        ring_top = _ring_indices(rect.shape, (top_c[ask] + m) * s, tuple(r * s for r in FACE_RING_BOARD),
                                 FACE_RING_ANGLES)
        round_outline[ask] = _spread_off_plane(rectf, ring_top, params) <= params.face_snr * noise
    # (a drawn line beside the rim is ink, not rim: where it runs within `line_exclusion_board`
    # of the rim's steps, they lie on the line's edge, a line's width off, and a dark disc at a
    # corner of the drawn squares fitted 0.011 off round over all its rays, 0.004 over the rays
    # clear of the ink, its centre 0.03 nearer the truth (variety benchmark, glossy, seed 1
    # frame 21). Its outline is fitted again on those rays, and counts as round where it is so on
    # as many rays as an outline must close on; a letter or a logo off the lines has no ink to
    # leave out)
    redo = np.flatnonzero(keep & is_black & ~geom.estimated & outline_ok & ~round_outline & ~dot_round)
    if len(redo):
        # (each ray's step where the top face's rim is, the side's band taken off: `_whole_outline`)
        r_edge, rays = whole[0][redo], rim_edges[1][redo] | whole[1][redo]
        edge_board = starts[redo][:, None, :] + r_edge[..., None] * u[None]
        off_line = (_distance_to_lines(edge_board.reshape(-1, 2)).reshape(r_edge.shape)
                    > params.line_exclusion_board)
        c_off, sig_off, ok_off, cover_off, _ = _fit_circles(starts[redo], u, r_edge, rays & off_line, rim_edges[2],
                                                            True)
        round_off = (ok_off & (~off_line).any(axis=1) & (cover_off >= params.min_closure)
                     & (sig_off <= 0.5 * RIM_REFIT_BOARD))
        j, c_off, w_off = redo[round_off], c_off[round_off], 1.0 / np.maximum(sig_off[round_off], 1e-3) ** 2
        round_outline[j] = True
        wj = w_dot[j] + w_off
        top_c[j] = (top[j] * w_dot[j, None] + c_off * w_off[:, None]) / wj[:, None]
        centre[j] = top_c[j] - geom.thickness_shift(top_c[j], params.thickness_board)
        sigma[j] = np.sqrt(1.0 / wj + 0.003**2)
    free = keep & neutral & (clipped_ok | (round_outline & ((closed & differs & (beside | dot_round)) | light_board))
                             | proven)
    # (a face clipped in all three channels with no dot seen and no rim fitted, in grey or in
    # colour, shows only the ring of the shadows around it: bare paper clipped in a hot spot among
    # black discs has theirs, closed on half the rays (office paper, seed 1 frame 17: 22 levels
    # over the board 5 diameters around, read white); such a ring must close on three quarters of
    # the rays, as the clipped face's outline in colour must (`_clipped_outline`, which may still
    # prove it below; clipped off-round discs with no rim fit close on 0.875-1)
    # (a smudge of a dot, `smudged`, is a dot seen)
    free &= ~(saturated & ~(dot_ok | smudged) & ~outline_ok & ~rim_in_colour & (closure < 0.75))
    # (a light face that differs from the board, with no clipped face's or dot's proof: its
    # outline seen all around, not only where a dark neighbour lies, `_seen_all_around`; a white
    # face on paper as light as it has no contrast to show beyond its rim, its dot and its
    # outline's shadow speak for it, `light_board`)
    # (the rays an object lying across the face hides, a pencil, are left out: `_rays_under_object`)
    ask = np.flatnonzero(free & ~is_black & differs & ~clipped_ok & ~proven & ~saturated)
    if len(ask):
        # (a face of the board's own tint in its colour to the board too)
        along_ask = None
        if along_tint is not None:
            t, along, step = along_tint
            at = np.searchsorted(t, ask)
            known = (at < len(t)) & (t[np.minimum(at, len(t) - 1)] == ask)
            along_ask = (np.zeros(vals[ask].shape, vals.dtype), np.full(len(ask), np.inf))
            along_ask[0][known], along_ask[1][known] = along[at[known]], step[at[known]]
        seen = _seen_all_around(vals[ask], rim_edges[2], band[ask], min_step[ask], own_span[ask], object_rays[ask],
                                along_ask)
        free[ask[~seen]] = False
        # (a white neighbour touching it hides its outline there, the same colour running on: the
        # rays towards the readings that show theirs are left out, `_towards_neighbours`)
        again = ask[~seen]
        if len(again) and free.any():
            hidden = _towards_neighbours(centre[again], centre[free], u, params.hemming_distance_board)
            free[again] = _seen_all_around(vals[again], rim_edges[2], band[again], min_step[again], own_span[again],
                                           hidden | object_rays[again],
                                           None if along_ask is None else (along_ask[0][~seen], along_ask[1][~seen]))
    # a white face clipped at the sensor's white in every channel, on paper that one channel
    # still shows (warm paper under glare keeps its blue): its outline in that channel
    if vals_bgr is not None and face_colour is not None:
        lit = inside & neutral & ~free & ~is_black & (face_colour.min(axis=1) >= params.clip_level)
        # (twice: closed all around first; then on half the rays, once every face closed all
        # around is read: the rays towards those readings speak for them, `_own_half_outline`,
        # and so do those across the drawn lines, as wide as the dot candidates keep clear of,
        # `_off_ink`)
        line_band = params.line_exclusion_board if intrinsics is not None else max(
            params.line_exclusion_board, params.line_exclusion_uncalibrated_board)
        for half in (False, True):
            at = np.flatnonzero(lit & ~free)
            if len(at) == 0:
                break
            accepted = centre[free] if half else None
            ok_c, c_top, c_sigma, c_cover = _clipped_outline(vals_bgr[at][:, :, nd:], u, starts[at], rim_edges[2],
                                                             noise_bgr, params, accepted, line_band)
            # (again from the circle's centre where it lies off the start: a white disc on
            # clipped paper votes with its shadow side only, and its vote peak lies up to a rim's
            # reach and more off its centre, where the rays on the far side run out of the face
            # early and their steps fall off the circle)
            # (twice: the first circle is fitted with the far side's steps missing; the second
            # start wherever that circle's centre moved. Where the outline closes on half the rays
            # at least, `min_closure`, as it does around any face that differs from the board)
            from_c = starts[at]
            for least_move in (RIM_REFIT_BOARD, 0.0):
                redo = np.flatnonzero(~ok_c & np.all(np.isfinite(c_top), axis=1) & (c_cover >= params.min_closure)
                                      & (np.linalg.norm(c_top - from_c, axis=1) > least_move))
                if len(redo) == 0:
                    continue
                from_c = from_c.copy()
                from_c[redo] = c_top[redo]
                _, _, _, bgr2 = _sample_profiles(frame, tables.lookup_px, c_top[redo], RIM_RADII, params.n_rays)
                ok2, c2, sig2, cov2 = _clipped_outline(bgr2, u, c_top[redo], rim_edges[2], noise_bgr, params,
                                                       accepted, line_band)
                ok_c[redo], c_top[redo], c_sigma[redo], c_cover[redo] = ok2, c2, sig2, cov2
            at = at[ok_c]
            free[at] = True
            centre[at] = c_top[ok_c] - geom.thickness_shift(c_top[ok_c], params.thickness_board)
            sigma[at] = np.sqrt(c_sigma[ok_c] ** 2 + (0.003 if not geom.estimated else 0.008) ** 2)
            conf[at] = np.maximum(conf[at], 0.45 + 0.55 * c_cover[ok_c])
    # (a dark face that differs from the board, with no dot's proof: its outline seen all around
    # as well, `_dark_seen_all_around`: an empty dark square of a draughts board, a card's print,
    # a shoe at the table's edge are bounded by lighter ground on some sides only. In grey, in
    # grey + (B - R) and along its colour to the board, as its closure is taken. The rays under an
    # object lying across it are left out, and those towards a neighbour read (touching it, or a
    # chip lying over it: centres `NEIGHBOUR_NEAREST_BOARD` to `hemming_distance_board` apart;
    # closer readings are two ends of one dark bar) where they do not show the outline: the
    # neighbour's face runs on beyond the rim there, a black one's in grey, a white one's along
    # the colour of a black face on felt)
    ask = np.flatnonzero(free & is_black & differs & ~proven & ~clipped_ok)
    if len(ask):
        # (and those whose board beyond the rim lies off the board: the table beyond its edge may
        # be as dark as the face)
        reach = starts[ask][:, None, :] + RIM_RADII[-1] * u[None]
        off_board = np.any((reach < 0.0) | (reach > board.size_board), axis=2)
        hidden = object_rays[ask] | off_board | _towards_neighbours(centre[ask], centre[free], u,
                                                                    params.hemming_distance_board,
                                                                    NEIGHBOUR_NEAREST_BOARD)
        # (a ray sees the outline in whichever channel shows it: a lit black face on green felt
        # steps to the felt along its colour and to a drawn light line beyond it in grey. Over
        # 0.04 diameters, as a dark face's closure: `_rim_span`)
        up = np.ones(len(ask))
        rays = _around_shares(vals[ask], rim_edges[2], band[ask], min_step[ask], up, 1)[3]
        if vals_bright is not vals:
            rays |= _around_shares(vals_bright[ask], rim_edges[2], band[ask], min_step[ask] * math.sqrt(3.0), up,
                                   1)[3]
        if along_dark is not None:
            dark, along, step = along_dark
            at = np.searchsorted(dark, ask)
            known = (at < len(dark)) & (dark[np.minimum(at, len(dark) - 1)] == ask)
            k = np.flatnonzero(known)
            if len(k):
                j = at[k]
                # (along the colour, a step of half the one the outline shows on most rays: the
                # grain and figure of a wooden board's dark squares step by the noise's 4 sigmas
                # along their own colour, where grey sees no outline; a disc steps by its contrast)
                half = 0.5 * _median_step_beyond(along[j], rim_edges[2], band[dark[j]])
                rays[k] |= _around_shares(along[j], rim_edges[2], band[dark[j]], np.maximum(step[j], half), up[k],
                                          1)[3]
        seen = _dark_seen_all_around(rays, band[ask], hidden)
        free[ask[~seen]] = False
    hemmed = keep & neutral & ~free & half_closed & half_beside & dot_round & differs & even & round_outline
    keep = free | (hemmed & _hemmed_in(centre, free, hemmed, params))
    idx = np.flatnonzero(keep)
    if len(idx) == 0:
        return []
    # discs cannot overlap: of two readings closer than that, the outline's candidate (then the
    # more confident one) stays, a dot-only one is a feature of its neighbour (a rim, a seam)
    idx = _non_overlapping(centre, idx, conf - from_dot + 0.1 * dot_cover + 0.3 * outline_ok,
                           params.min_separation_board)
    conf = np.clip(conf, 0.0, 1.0)
    px = board_to_image(centre[idx], board, intrinsics)
    order = np.lexsort((centre[idx, 0], centre[idx, 1]))  # by (y, x)
    sel = idx[order]
    return [
        DiscReading((cx, cy), (ix, iy), "black" if b else "white", cf, sg)
        for (cx, cy), (ix, iy), b, cf, sg in zip(
            centre[sel].tolist(), px[order].tolist(), reads_black[sel].tolist(), conf[sel].tolist(),
            sigma[sel].tolist())
    ]


# --------------------------------------------------------------------------------------------
# candidates
# --------------------------------------------------------------------------------------------


def _vote_channels(rect: np.ndarray, params: DiscParams) -> tuple[np.ndarray, np.ndarray]:
    """The rectified image at the vote scale (float32): grey plus the board's own colour, and grey
    plus 'blueness' (B - R), where the warm paper loses against the neutral white face, so white
    discs stand out from the plate as much as black ones do (a grey image gives grey twice).
    (The first: a black face on saturated felt can be as bright as the felt, but it is neutral:
    grey plus each pixel's component along the board's chroma (the unit vector from the neutral
    grey of the board's median colour to that colour), weighted by the board's saturation (its
    chroma over its brightness), leaves a neutral face as it is and lifts saturated felt by about
    its chroma; the kit's paper or a wood board, nearly neutral, by a few levels.)"""
    import cv2

    f = params.vote_scale_px_per_unit / params.scale_px_per_unit
    rect = rect.astype(np.float32)
    if f < 1:
        rect = cv2.resize(rect, None, fx=f, fy=f, interpolation=cv2.INTER_AREA)
    if rect.ndim == 2:
        return rect, rect
    w = params.chroma_weight
    # (the board's colour: the median of every fourth pixel of every fourth row; discs cover
    # less than half of it. np.median's, from one partition of each channel's contiguous row:
    # np.median itself also looks for NaNs, and along a strided axis, three times the cost)
    samples = np.ascontiguousarray(rect[::4, ::4].reshape(-1, 3).T)  # (3, M)
    mid = ((samples.shape[1] - 1) // 2, samples.shape[1] // 2)
    middle = np.partition(samples, sorted(set(mid)), axis=1)
    board = (middle[:, mid[0]] + middle[:, mid[1]]) * np.float32(0.5)
    chroma = board - board.mean()
    norm = float(np.linalg.norm(chroma))
    lift = chroma / max(norm, 1e-6) * min(norm / max(float(board.mean()), 1.0), 1.0)
    grey = cv2.transform(rect, (np.array([0.114, 0.587, 0.299]) + lift).astype(np.float32)[None, :])
    bright = cv2.transform(rect, np.array([[0.114 + w, 0.587, 0.299 - w]], dtype=np.float32))
    return grey, bright


def _candidates(
    dark_img: np.ndarray, bright_img: np.ndarray, params: DiscParams
) -> tuple[np.ndarray, np.ndarray]:
    """(N, 2) candidate centres in rectified pixels (at `scale_px_per_unit`) and their vote
    counts. Dark discs vote from `dark_img` (grey), bright discs from `bright_img` (grey plus
    blueness), both at the coarser `vote_scale_px_per_unit` (`_vote_channels`; the sub-pixel
    work happens later, in the original frame)."""
    import cv2

    f = min(params.vote_scale_px_per_unit / params.scale_px_per_unit, 1.0)
    s = params.scale_px_per_unit * f
    r = 0.5 * params.disc_diameter_board * s
    h, w = dark_img.shape
    # votes land in an accumulator padded by more than a radius (those outside the image are
    # cropped off): a vote's target is its pixel's flat index there plus an offset
    pad = math.ceil(r) + 2
    wp = w + 2 * pad
    base = _accumulator_index(h, w, pad)
    thr_edge = np.float32(params.min_edge_strength)
    acc = []
    for sign, img in ((-1.0, dark_img), (1.0, bright_img)):
        # dark disc: vote against the gradient; bright disc: along it (the filters reflect the
        # image at its borders, BORDER_REFLECT_101, their default)
        blur = cv2.GaussianBlur(img, (0, 0), 0.6)
        gx = cv2.Sobel(blur, cv2.CV_32F, 1, 0, ksize=3, scale=0.125).ravel()
        gy = cv2.Sobel(blur, cv2.CV_32F, 0, 1, ksize=3, scale=0.125).ravel()
        idx, g = _strong_gradients(gx, gy, thr_edge)
        k = np.float32(sign * r) / g
        # (whole numbers of pixels, exact in float32 at these sizes: the accumulator has fewer
        # than 2^24 cells; one conversion to integers at the end)
        target = np.rint(gy[idx] * k)
        target *= np.float32(wp)
        target += np.rint(gx[idx] * k)
        target += base[idx]
        target = target.astype(np.intp)
        wgt = np.minimum(g * np.float32(0.5 / params.min_edge_strength), np.float32(1.0))
        votes = np.bincount(target, weights=wgt, minlength=(h + 2 * pad) * wp).reshape(h + 2 * pad, wp)
        acc.append(votes[pad:pad + h, pad:pad + w].astype(np.float32))
    # edges are ~2 px thick after the blur: each edge contributes ~2 votes per unit length
    sigma_acc = 1.0
    best = cv2.max(*(cv2.GaussianBlur(a, (0, 0), sigma_acc) for a in acc))
    # a full circle's votes: ~2 px-thick edge * circumference, spread by the blur kernel
    full = 2 * math.pi * r * 2.0 / (2 * math.pi * sigma_acc**2)
    # (a weaker peak is a start only where a face ring can be clipped all around, which
    # `detect_discs` then asks of it (`_clipped_annulus` at `clip_level`): there the ring of
    # 0.2-0.4 diameters is, 0.59 of the square of 0.8 diameters about it; 0.4 leaves the vote
    # scale's averaging room. Elsewhere, on bright paper, weak peaks of its grain cost 4x the
    # frame's candidates and were all dropped)
    ksz = round(params.min_separation_board * s) | 1
    box = round(0.8 * params.disc_diameter_board * s) | 1
    clipped_near = cv2.blur((dark_img >= params.clip_level).astype(np.float32), (box, box)) >= 0.4
    thr = np.where(clipped_near, np.float32(params.clipped_start_fraction * full),
                   np.float32(params.min_vote_fraction * full))
    dil = cv2.dilate(best, np.ones((ksz, ksz), np.uint8))  # a square max filter is separable
    above = np.flatnonzero(best > thr)
    py, px = np.divmod(above[best.ravel()[above] >= dil.ravel()[above]], w)
    if len(px) == 0:
        return np.zeros((0, 2)), np.zeros(0)
    val = best[py, px]
    order = np.argsort(-val)
    pts = np.stack([px, py], axis=1)[order]
    val = val[order]
    # plateaus give duplicate maxima: drop any peak near a stronger one
    if len(pts) > 1:
        keep = _suppress_on_grid(pts, params.min_separation_board * s, (h, w))
        pts, val = pts[keep], val[keep]
    # sub-pixel peak: 3x3 centroid
    xx = np.clip(pts[:, 0, None, None] + np.arange(-1, 2)[None, None, :], 0, w - 1)
    yy = np.clip(pts[:, 1, None, None] + np.arange(-1, 2)[None, :, None], 0, h - 1)
    win = best[yy, xx]
    tot = win.sum(axis=(1, 2))
    sub = np.stack([(win * xx).sum(axis=(1, 2)) / tot, (win * yy).sum(axis=(1, 2)) / tot], axis=1)
    # back to rectified pixels (pixel centres scale about -0.5)
    sub = (sub + 0.5) / f - 0.5
    return sub.astype(np.float64), val / full * (2 * math.pi * r)


def _greedy_keep(n: int, pairs: np.ndarray) -> np.ndarray:
    """Greedy suppression in index order: which of `n` items stay when each, in turn, drops
    every later one it is paired with (`pairs` (M, 2), any order in a pair), itself dropped by
    no earlier kept one. Solved for all at once, each round fixing one more step of the chains
    of pairs (a weak vote threshold on a bright board gives millions of pairs: a Python loop
    over them took a quarter of a second a frame). A round keeps every item that no undecided
    earlier one is paired with (all earlier ones it is paired with were dropped) and drops the
    later ones paired with those; the pairs of decided items are done with (fewer each round)."""
    keep = np.ones(n, bool)
    if len(pairs) == 0:
        return keep
    # (column by column: numpy's reductions over a last axis of 2 cost 15 times as much)
    a, b = pairs[:, 0].astype(np.int32), pairs[:, 1].astype(np.int32)
    first, later = np.minimum(a, b), np.maximum(a, b)
    undecided = np.ones(n, bool)
    while len(first):
        ready = undecided.copy()
        ready[later] = False
        undecided[ready] = False
        dropped = later[ready[first]]
        keep[dropped] = False
        undecided[dropped] = False
        active = undecided[first] & undecided[later]
        first, later = first[active], later[active]
    return keep


def _suppress_on_grid(pts: np.ndarray, radius_px: float, shape: tuple[int, int], chunk: int = 64) -> np.ndarray:
    """Which of the whole-pixel points `pts` (N, 2) x, y (in an image of `shape` (h, w); strongest
    first) stay when each kept one, in turn, drops every later one within `radius_px`: what
    `_greedy_keep` gives on all pairs within that distance, without the pairs. The points are
    taken `chunk` at a time: those that no earlier kept point covers (a mask of the discs around
    the kept ones, stamped as they are kept: a whole-pixel offset lies within the radius or not)
    are decided among themselves by `_greedy_keep` on their own pairs. (The weak vote peaks of
    clipped paper are thousands, most of them one plateau of equal votes, 27 pairs a peak; 5 %
    of them stay, so most of a later chunk is covered already: half the time of the pairs.)"""
    n = len(pts)
    reach = math.floor(radius_px)
    h, w = shape
    wp = w + 2 * reach
    covered = np.zeros((h + 2 * reach) * wp, bool)
    at_px = (pts[:, 1] + reach) * wp + (pts[:, 0] + reach)
    offsets = _disc_offsets(radius_px, wp)
    keep = np.zeros(n, bool)
    xy = pts.astype(np.float64)
    r2 = radius_px * radius_px
    for start in range(0, n, chunk):
        free = start + np.flatnonzero(~covered[at_px[start:start + chunk]])
        if len(free) > 1:
            p = xy[free]
            d2 = (p[:, None, 0] - p[None, :, 0]) ** 2 + (p[:, None, 1] - p[None, :, 1]) ** 2
            i, j = np.nonzero(np.triu(d2 <= r2, 1))
            free = free[_greedy_keep(len(free), np.stack([i, j], axis=1))]
        keep[free] = True
        covered[(at_px[free][:, None] + offsets[None, :]).reshape(-1)] = True
    return keep


@functools.lru_cache(maxsize=4)
def _disc_offsets(radius_px: float, row_px: int) -> np.ndarray:
    """Flat offsets (in an image of rows of `row_px`) of the whole-pixel offsets within
    `radius_px` of a pixel, itself included (read-only, shared)."""
    reach = math.floor(radius_px)
    dy, dx = np.mgrid[-reach:reach + 1, -reach:reach + 1]
    offsets = (dy * row_px + dx)[dx * dx + dy * dy <= radius_px * radius_px].astype(np.intp)
    offsets.flags.writeable = False
    return offsets


@functools.lru_cache(maxsize=4)
def _accumulator_index(h: int, w: int, pad: int) -> np.ndarray:
    """(h * w,) float32 flat index of each pixel of an h x w image in an accumulator padded by
    `pad` on every side (whole numbers, exact in float32 below 2^24; read-only, shared)."""
    wp = w + 2 * pad
    index = ((np.arange(h, dtype=np.float32)[:, None] + pad) * np.float32(wp)
             + (np.arange(w, dtype=np.float32)[None, :] + pad)).ravel()
    index.flags.writeable = False
    return index


def _proven_by_dot(closure: np.ndarray, beside_share: np.ndarray, dot_round: np.ndarray, rim_fitted: np.ndarray,
                   even: np.ndarray, face_delta: np.ndarray, noise_contrast: float,
                   min_closure: float) -> np.ndarray:
    """Which candidates (N,) prove themselves a disc by everything a Dition disc shows at once, so
    that their face needs to differ from the board only by what the frame's noise lets it show
    (`noise_contrast`: `face_snr` noise sigmas), not by the floor print is held to
    (`min_face_contrast`): a round grey dot of the dot's size (`dot_round`), the rim fitted at
    the radius the board's scale predicts (`rim_fitted`), an even face (`even`), an outline closed
    all around (`closure` >= `min_closure`), and a face that differs with its sign from what lies
    right beyond its rim, by the outline's step, on three quarters of the rays (`beside_share`;
    not the half a disc hemmed in by neighbours shows). A white face under a cool light is clipped in
    blue and green and shows 10-14 grey levels over its paper, less than it has, yet all of that
    is seen. The print the floor keeps out has no such dot and outline around an even face; a
    printed circle with a dot in it (a carrom board's) has the board inside (2 levels) and the
    same paper beyond its line on half the rays; bare paper between discs has no dot."""
    return ((closure >= min_closure) & (beside_share >= 0.75) & dot_round & rim_fitted & even
            & (face_delta >= noise_contrast))


def _clipped_outline(rim_bgr: np.ndarray, u: np.ndarray, starts: np.ndarray, r_top: float,
                     noise_bgr: np.ndarray, params: DiscParams, neighbours: np.ndarray | None = None,
                     line_band_board: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The outline of a white face clipped at the sensor's white in every channel, in the one
    channel its surroundings still show: for each candidate (profiles `rim_bgr` (N, R,
    RIM_RADII, 3) from `starts` (N, 2), ray directions `u`) the channel whose ring beyond the
    rim (0.6-0.7 diameters) is darkest; on each ray the step down outward nearest the predicted
    rim `r_top`, counted where it stands `outline_snr` of that channel's noise sigmas out
    (`noise_bgr` (3,), the frame's; clipped pixels carry none, so the floor `min_noise`); a
    circle of free radius through those steps. A ray is on it where its crossing lies within
    `RIM_REFIT_BOARD` of it, or where, at the circle, the face holds its level inside, falls by
    the step within the rim's reach outside and is lighter again beyond (a ring: the side band
    and the shadow). A disc: the circle within 10 % of the radius the
    board's scale predicts, on three quarters of the rays (closed all around, more than the
    `min_closure` a face that differs from the board needs: here the face's contrast is cut
    off by the sensor). Under glare warm paper clips in red and green but keeps 15-20 levels
    of blue under a neutral white face; bare paper there is the paper's own blue, with no
    round step at a disc's radius, and a face on paper clipped in all three shows nothing.
    Or, given the readings accepted so far `neighbours` (M, 2), on half the rays that point at
    none of them and cross no drawn line near the rim (within `line_band_board`,
    `_own_half_outline`): the side band and the shadow of a face on clipped paper.
    Returns which (N,), the top face's centres (N, 2), their 1-sigma (N,), the rays' share on
    the circle (N,)."""
    n = len(rim_bgr)
    beyond = row_median(rim_bgr[:, :, RIM_RADII >= 0.6, :].reshape(n, -1, 3))  # (N, 3)
    ch = np.argmin(beyond, axis=1)
    vals = np.take_along_axis(rim_bgr, ch[:, None, None, None], axis=3)[..., 0]  # (N, R, K)
    step = np.maximum(params.min_rim_step, params.outline_snr * np.maximum(noise_bgr[ch], params.min_noise))
    # (on each ray: the face's level inside the rim, the least level out to the side band and
    # the shadow beyond it, and where the profile first crosses halfway between them: the edge
    # of a step however blurred, which a slope test would miss on a step of 15 levels)
    inner = RIM_RADII < r_top - 0.1
    face = vals[..., inner].mean(axis=2)  # (N, R)
    reach = (RIM_RADII > r_top - 0.1) & (RIM_RADII < r_top + 0.12)
    low = vals[..., reach].min(axis=2)
    half = 0.5 * (face + low)
    below = (vals < half[..., None]) & (RIM_RADII > r_top - 0.1)[None, None, :]
    k = np.clip(np.argmax(below, axis=2), 1, len(RIM_RADII) - 1)  # the first sample below halfway
    v0 = np.take_along_axis(vals, (k - 1)[..., None], axis=2)[..., 0]
    v1 = np.take_along_axis(vals, k[..., None], axis=2)[..., 0]
    t = np.clip((v0 - half) / np.maximum(v0 - v1, 1e-6), 0.0, 1.0)
    r_edge = RIM_RADII[k - 1] + t * (RIM_RADII[1] - RIM_RADII[0])
    crossed = ((face - low) > step[:, None]) & below.any(axis=2)
    seen = crossed & (np.abs(r_edge - r_top) < RIM_REACH_BOARD)
    c, sig, good, _cover, radius = _fit_circles(starts, u, r_edge, seen, r_top, False, radius_tolerance=0.1)
    # (the rays on that circle: within `RIM_REFIT_BOARD` of it, what a piece a little off round
    # leaves; bare paper among discs whose shadows close around it crosses halfway along a ragged
    # line, which a fit rejecting by the spread of its own residuals would take for a circle;
    # measured from the circle, not from the start: a vote peak lies up to a rim's reach off the
    # centre, and a thick disc's side band widens its outline on the far side by the band, so
    # its crossings there lie beyond the reach of `r_top` from the start but on the circle,
    # Othello-thick with its thickness stated, seed 1 frame 11: 0.057 off, 0.083 out)
    shift = c - starts
    px, py = r_edge * u[None, :, 0] - shift[:, :1], r_edge * u[None, :, 1] - shift[:, 1:]
    on = crossed & (np.abs(np.hypot(px, py) - radius[:, None]) < RIM_REFIT_BOARD)
    # (and on each ray, where that circle crosses it: a clipped face's outline is the occlusion
    # edge of its rim over its side band and its shadow's ring, a step a few grey levels deep and
    # as wide as the rim's reach, whose halfway crossing the shadow's depth moves by up to that
    # reach; the face holds its level to within the reach inside the circle and falls by the
    # step within it outside: a ray counts where it shows exactly that)
    along = (shift[:, None, :] * u[None, :, :]).sum(axis=2)
    across = shift[:, None, 0] * u[None, :, 1] - shift[:, None, 1] * u[None, :, 0]
    rho = (along + np.sqrt(np.maximum(radius[:, None] ** 2 - across**2, 0.0)))[..., None]  # (N, R, 1)
    outside = (RIM_RADII >= rho - RIM_REFIT_BOARD) & (RIM_RADII <= rho + RIM_REACH_BOARD)
    inside = (RIM_RADII >= rho - 0.1) & (RIM_RADII <= rho - RIM_REACH_BOARD)
    low_out = np.where(outside, vals, np.inf).min(axis=2)
    low_in = np.where(inside, vals, np.inf).min(axis=2)
    # (a ring, lighter again beyond it: a gap among touching discs has their rims at a disc's
    # radius too, but a black neighbour's face runs on beyond; the rays the halfway crossing puts
    # on the circle count as before)
    high_beyond = np.where(RIM_RADII > rho + RIM_REACH_BOARD, vals, -np.inf).max(axis=2)
    # (or a shadow, not a dark face, beyond: its soft fall-off runs on past the reach, 10-50
    # levels under the face, where a black neighbour's face is darker than `black_ratio` of it
    # (the reader's own bound between a black face and a white one), and deep enough (below);
    # there the face must hold at the sensor's white up to the rim's
    # reach inside the circle: bare paper among the discs' shadows slopes down into them from
    # well inside, 220-250 (seed 1 glare frame 17), and the face is clipped
    # free of noise in that channel (its robust sigma inside the rim at most `max_clipped_noise`:
    # clipped pixels carry none; bright paper just below the sensor's white, the sensor's noise
    # added after the clip, 242-254, steps a few noise sigmas into its own unevenness on some
    # rays, seed 1 objects frame 8)
    inner_vals = vals[..., inner].reshape(n, -1)
    inner_mid = np.median(inner_vals, axis=1)
    noiseless = 1.4826 * np.median(np.abs(inner_vals - inner_mid[:, None]), axis=1) <= params.max_clipped_noise
    # (deep enough: the mean of the ray's samples from the circle out to the reach the halfway
    # crossing is sought in (`reach` above) stands the step under the face. A mean carries less
    # noise than the single sample the step is set for (4 noise sigmas of one pixel: the window
    # spans two pixels of the rectified board, so at least as sure), and it asks the fall to hold
    # across the window, where a least sample also counts a dip at its far end: clipped paper's
    # slow slopes onto a drawn line or a neighbour's shadow drop 5-10 levels at the circle but
    # less on the mean (seed 1 jpeg frame 8: a phantom with a least sample one step deep, none
    # with two steps or with the mean); shadows 5-15 levels deep at the circle, under the two
    # steps a least sample had to clear, now count (seed 1 glare frames 11 and 24, lamp 11))
    window = (RIM_RADII >= rho) & (RIM_RADII < rho + 0.12)
    mean_out = np.where(window, vals, 0.0).sum(axis=2) / np.maximum(window.sum(axis=2), 1)
    deep = face - mean_out > step[:, None]
    shadow_beyond = ((low_out >= params.black_ratio * face) & deep
                     & (low_in >= params.clip_level) & noiseless[:, None])
    on |= (np.isfinite(low_out) & (face - low_out > step[:, None]) & (face - low_in <= step[:, None])
           & ((high_beyond - low_out > step[:, None]) | shadow_beyond))
    # (and a disc's own ring is darkest by its rim: its shadow lightens outward, or a black
    # neighbour's face begins, darker than `black_ratio` of the face. Bare paper in a hot spot,
    # ringed by the shadows of the discs around it, slopes on down towards them past the rim's
    # reach, by more than the step, on most of the rays its halfway crossings put on a circle:
    # 0.8 of them (printed paper, seed 1 frame 17); the clipped faces, 0-0.4)
    low_far = np.where(RIM_RADII > rho + RIM_REACH_BOARD, vals, np.inf).min(axis=2)
    falls_on = on & (low_far < low_out - step[:, None]) & (low_far >= params.black_ratio * face)
    cover = on.mean(axis=1)
    closed = (cover >= 0.75) | _own_half_outline(on, c, sig, u, neighbours, line_band_board, params)
    return good & closed & (falls_on.sum(axis=1) <= 0.5 * on.sum(axis=1)), c, sig, cover


def _own_half_outline(on: np.ndarray, centres: np.ndarray, sigma: np.ndarray, u: np.ndarray,
                      neighbours: np.ndarray | None, line_band_board: float, params: DiscParams) -> np.ndarray:
    """Whether a white face clipped on paper clipped at the sensor's white shows its own outline
    on half the rays (N,): of a face whose contrast the sensor cut off, only what is darker than
    the paper's white is left to see: its side band on the camera's side and its shadow on the
    side away from the light, each a crescent, together about half of its outline (the varied
    table's lamp and glare: 0.5-0.7 of the rays; the rest of its rim lies clipped against clipped
    paper, nothing to see there). Only the rays that do not point at an accepted reading near
    it speak (`neighbours` (M, 2), `_towards_neighbours`): bare paper ringed by discs has their
    rims, their sides and the soft fall-off of their shadows at a disc's radius, a ring of halos
    on up to 0.7 of the rays (seed 1 glare frame 9: five discs 1.12-1.27 away), which is theirs,
    not a face's here. Near: the ring the profiles see beyond this rim (out to the last of
    `RIM_RADII`) and a neighbour's own ring of side band and shadow, as wide, meet. Accepted:
    every face closed all around included (the caller asks this after those; Othello-thick
    discs, seed 1 frame 8, (2.46, 3.84): clipped paper between the corner of the inner square and
    two such discs 1.2-1.3 away, read as a disc while they were not yet). Nor the rays that
    come within `line_band_board` of a drawn line (`_distance_to_lines`) where their halfway
    crossing is sought (0.1 inside the rim to 0.12 out, `_clipped_outline`): a line's edge is
    ink, not a rim (JPEG 60, seed 1 frame 8, (2.50, 12.39): clipped paper with the inner square's
    line 0.5 away and discs 1.3-1.6 away). A disc: at
    least half of its rays left to speak, the circle (`centres` (N, 2)) through the rays `on`
    (N, R) on half of those (`min_closure`, what any face that differs from the board must show),
    and located as a rim is (its 1-sigma `sigma` (N,) within half of what a piece a little off
    round leaves, `RIM_REFIT_BOARD`, as the grey and colour rims of clipped faces are held to)."""
    if neighbours is None:
        return np.zeros(len(on), bool)
    ring = float(RIM_RADII[-1]) - 0.5 * params.disc_diameter_board
    hidden = _towards_neighbours(centres, np.asarray(neighbours, np.float64).reshape(-1, 2), u,
                                 params.disc_diameter_board + 2.0 * ring)
    r_top = 0.5 * params.disc_diameter_board
    radii = np.linspace(r_top - 0.1, r_top + 0.12, 6)
    along = centres[:, None, None, :] + radii[None, None, :, None] * u[None, :, None, :]  # (N, R, K, 2)
    on_ink = _distance_to_lines(along.reshape(-1, 2)).reshape(along.shape[:3]) <= line_band_board
    hidden |= on_ink.any(axis=2)
    left = (~hidden).sum(axis=1)
    own = (on & ~hidden).sum(axis=1) / np.maximum(left, 1)
    return ((left >= params.min_closure * on.shape[1]) & (own >= params.min_closure)
            & (sigma <= 0.5 * RIM_REFIT_BOARD))


def _hemmed_in(centres: np.ndarray, free: np.ndarray, hemmed: np.ndarray, params: DiscParams) -> np.ndarray:
    """Which readings (N,) have at least `min_hemming_neighbours` accepted readings touching them
    (centres within `hemming_distance_board`): those that show only part of their outline must
    be hemmed in by discs that show theirs, or by such discs' hemmed-in neighbours (a packed
    cluster is accepted from its edge inward, one ring a round). A letter or a stripe on its
    own has no neighbours."""
    from scipy.spatial import cKDTree

    ok = free.copy()
    cand = np.flatnonzero(hemmed & ~free)
    if len(cand) == 0 or not free.any():
        return ok
    for _ in range(params.hemming_rounds):
        count = cKDTree(centres[ok]).query_ball_point(centres[cand], params.hemming_distance_board,
                                                      return_length=True)
        new = cand[(count >= params.min_hemming_neighbours) & ~ok[cand]]
        if len(new) == 0:
            break
        ok[new] = True
    return ok


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
    # from the strongest down: a dropped reading suppresses nothing
    return np.sort(idx[_greedy_keep(len(idx), pos[pairs])[pos]])


@functools.lru_cache(maxsize=32)
def _ring_offsets(radii_px: tuple[float, ...], n_angles: int) -> tuple[np.ndarray, np.ndarray]:
    """(1, len(radii) * n_angles) float32 x and y offsets of points on rings (radius-major)."""
    ang = np.linspace(0, 2 * math.pi, n_angles, endpoint=False)
    r = np.asarray(radii_px, dtype=np.float64)[:, None]
    ox = (r * np.cos(ang)[None, :]).astype(np.float32).reshape(1, -1)
    oy = (r * np.sin(ang)[None, :]).astype(np.float32).reshape(1, -1)
    ox.flags.writeable = oy.flags.writeable = False
    return ox, oy


def _ring_indices(shape: tuple[int, ...], centres_px: np.ndarray, radii_px: tuple[float, ...],
                  n_angles: int) -> np.ndarray:
    """(N, len(radii) * n_angles) flat indices of the nearest pixels of an image of `shape` on
    rings around each centre (clamped to the image)."""
    ox, oy = _ring_offsets(tuple(float(r) for r in radii_px), n_angles)
    h, w = shape[:2]
    c = np.asarray(centres_px, dtype=np.float32).reshape(-1, 2)
    # (in float32, exact for whole numbers below 2^24; one conversion to integers at the end)
    xi = np.clip(np.rint(c[:, :1] + ox), 0, w - 1)
    yi = np.clip(np.rint(c[:, 1:] + oy), 0, h - 1)
    yi *= np.float32(w)
    yi += xi
    return yi.astype(np.intp)


def _ring_samples(img: np.ndarray, centres_px: np.ndarray, radii_px: tuple[float, ...], n_angles: int) -> np.ndarray:
    """(N, len(radii) * n_angles) values of the nearest pixels of a one-channel `img` on rings
    around each centre (clamped to the image)."""
    return img.reshape(-1)[_ring_indices(img.shape, centres_px, radii_px, n_angles)]


def _clipped_annulus(rect: np.ndarray, cands_px: np.ndarray, params: DiscParams,
                     level: float | None = None) -> np.ndarray:
    """Whether every rectified pixel between 0.2 and 0.4 diameters of each candidate is clipped
    white (no ink shows through: the drawn line or corner there is under a disc's face), at
    `level` (by default `hidden_ink_margin` below `clip_level`)."""
    r = params.disc_diameter_board * params.scale_px_per_unit
    level = params.clip_level - params.hidden_ink_margin if level is None else level
    # a quick look at a third of one ring first: most candidates fail there
    out = np.min(_ring_samples(rect, cands_px, (0.33 * r,), 16), axis=1) >= level
    if out.any():
        ring = _ring_samples(rect, np.asarray(cands_px)[out], (0.2 * r, 0.26 * r, 0.33 * r, 0.4 * r), 48)
        out[out] = np.min(ring, axis=1) >= level
    return out


def _dot_colour(rect_bgr: np.ndarray, cands_px: np.ndarray, params: DiscParams) -> tuple[np.ndarray, np.ndarray]:
    """B - R and grey (grey levels) at each candidate's centre (the dot), from the rectified BGR
    image (nearest pixels)."""
    s = params.scale_px_per_unit
    bgr = _mean_colour(rect_bgr, cands_px, (0.0, 0.03 * s, 0.06 * s))
    return bgr[:, 0] - bgr[:, 2], bgr @ np.array([0.114, 0.587, 0.299], np.float32)


def _mean_colour(rect_bgr: np.ndarray, cands_px: np.ndarray, radii_px: tuple[float, ...]) -> np.ndarray:
    """(N, 3) mean BGR of the nearest pixels on rings (24 points each) around each candidate."""
    idx = _ring_indices(rect_bgr.shape, cands_px, radii_px, 24)
    sums = np.take(rect_bgr.reshape(-1, 3), idx, axis=0).sum(axis=1, dtype=np.float32)  # (rows: np.take)
    return sums / np.float32(idx.shape[1])


def _colour_cast(rect_bgr: np.ndarray, dots_px: np.ndarray, params: DiscParams) -> float | None:
    """The light's colour cast as (B - R) / grey of a neutral grey: the median over the grey
    dots of black discs (not clipped), or None from fewer than `min_cast_dots` of them."""
    if len(dots_px) < params.min_cast_dots:
        return None
    blue_minus_red, grey = _dot_colour(rect_bgr, dots_px, params)
    ok = (grey > 20) & (grey < params.clip_level - 20)
    if ok.sum() < params.min_cast_dots:
        return None
    return float(np.median(blue_minus_red[ok] / grey[ok]))


def _neutral_dots(rect_bgr: np.ndarray, cands_px: np.ndarray, cast: float | None, params: DiscParams) -> np.ndarray:
    """Whether each candidate's centre is as neutral in colour as a grey dot: its B - R no more
    than `-min_clipped_dot_chroma` grey levels below the face's around it (the ring at 0.3
    diameters), or below what the light's colour cast gives a grey of its brightness."""
    s = params.scale_px_per_unit
    blue_minus_red, grey = _dot_colour(rect_bgr, cands_px, params)
    face = _mean_colour(rect_bgr, cands_px, (0.3 * s,))
    neutral = blue_minus_red - (face[:, 0] - face[:, 2]) >= params.min_clipped_dot_chroma
    if cast is not None:
        neutral |= blue_minus_red - cast * grey >= params.min_clipped_dot_chroma
    return neutral


def _off_ink(centres_board: np.ndarray, calibrated: bool, params: DiscParams) -> np.ndarray:
    """Whether each point lies clear of the drawn squares: the corners of the squares look like
    dots (an L of ink on paper; a disc centred on one still has its outline to vote with), and
    so does noise on a drawn line (a hemmed-in disc centred exactly on a line is rare enough to
    leave to the players). Without the lens model a distorted line bows away from where the
    square is drawn in the rectified image, so the band is wider."""
    corners = np.array([(a, b) for lo, hi in DITION_SQUARES for a in (lo, hi) for b in (lo, hi)])
    d_corner = np.min(np.hypot(centres_board[:, None, 0] - corners[None, :, 0],
                               centres_board[:, None, 1] - corners[None, :, 1]), axis=1)
    band = params.line_exclusion_board if calibrated else max(
        params.line_exclusion_board, params.line_exclusion_uncalibrated_board)
    return (d_corner > params.corner_exclusion_board) & (_distance_to_lines(centres_board) > band)


def _distance_to_lines(points_board: np.ndarray) -> np.ndarray:
    """Distance of each point to the nearest drawn line of the Dition board."""
    p = np.asarray(points_board, dtype=np.float64).reshape(-1, 1, 2)
    lo = np.array([sq[0] for sq in DITION_SQUARES])[None, :, None]
    hi = np.array([sq[1] for sq in DITION_SQUARES])[None, :, None]
    # (N, squares, axis): distance to the square's nearer line across `axis`, where the point
    # lies along that line's span
    across = np.minimum(np.abs(p - lo), np.abs(p - hi))
    along = p[..., ::-1]
    on_span = (along >= lo) & (along <= hi)
    return np.min(np.where(on_span, across, np.inf), axis=(1, 2))


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
    # the response is sqrt(det H); its square (det H) has the same local maxima above 0
    det = dxx
    det *= dyy
    det -= dxy * dxy
    ksz = round(params.dot_nms_board * s) | 1
    dil = cv2.dilate(det, np.ones((ksz, ksz), np.uint8))
    low = params.min_dot_response * params.clipped_dot_response
    # (local maxima above the lower threshold, as one mask over the image: cheaper than
    # gathering the tens of thousands of pixels above it)
    ys, xs = np.divmod(np.flatnonzero((det > low * low) & (det >= dil)), det.shape[1])
    # a dot on a white face clipped at the sensor's white keeps little contrast, but clipped
    # pixels carry no noise either: a weaker blob counts there when the face all around is clipped
    weak = det[ys, xs] <= params.min_dot_response**2
    if weak.any():
        rr = 0.3 * params.disc_diameter_board * s
        around = _ring_samples(rect, np.stack([xs[weak], ys[weak]], axis=1), (rr,), 16)
        clipped = np.min(around, axis=1) >= params.clip_level
        keep = ~weak
        keep[np.flatnonzero(weak)[clipped]] = True
        xs, ys = xs[keep], ys[keep]
    return np.stack([xs, ys], axis=1).astype(np.float64)


def _ring_stats(
    rect: np.ndarray, cands_px: np.ndarray, face_idx: np.ndarray, params: DiscParams
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Median face brightness (between dot and rim), dot brightness and the spread (robust
    sigma) of the face samples, from the rectified image (nearest pixels; `face_idx`: the flat
    indices of the face's samples, `FACE_RING_BOARD`)."""
    s = params.scale_px_per_unit
    ring = rect.reshape(-1)[face_idx]
    dot = _ring_samples(rect, cands_px, (0.0, 0.05 * s, 0.08 * s), 24)
    face = row_median(ring)
    spread = 1.4826 * row_median(np.abs(ring - face[:, None]))
    return face, row_median(dot), spread


def _spread_off_plane(rect: np.ndarray, face_idx: np.ndarray, params: DiscParams) -> np.ndarray:
    """The face samples' spread (robust sigma, as `_ring_stats`') about the plane that fits them
    best (least squares over `FACE_RING_BOARD` x `FACE_RING_ANGLES`): the light across a face is
    smooth, a lamp's glare a slope over it, which a plane takes off; print, a letter's strokes,
    a logo's, is no plane."""
    s = params.scale_px_per_unit
    ox, oy = _ring_offsets(tuple(r * s for r in FACE_RING_BOARD), FACE_RING_ANGLES)
    design = np.stack([np.ones(ox.shape[1]), ox[0], oy[0]], axis=1)
    ring = rect.reshape(-1)[face_idx].astype(np.float64)
    coef = np.linalg.lstsq(design, ring.T, rcond=None)[0]
    off = ring - (design @ coef).T
    return 1.4826 * row_median(np.abs(off - row_median(off)[:, None]))


def _frame_noise(rect: np.ndarray, channels: tuple[int, ...] | None = None) -> float | np.ndarray:
    """The noise the frame shows (grey levels, robust sigma of one pixel) on the rectified
    board (uint8): differences of horizontal neighbours on every eighth row (some fifteen
    thousand: their median is steady to a percent; edges are rare: the median). A colour image
    (H, W, 3) gives each channel's (3,), or those of `channels` only. (The differences are whole
    grey levels: their median is read off their histogram, exactly, at a fraction of a sort's
    cost; OpenCV counts each channel of the interleaved differences in place, where numpy would
    copy it out first.)"""
    import cv2

    rows = rect[1::8]
    d = cv2.absdiff(rows[:, 1:], rows[:, :-1])
    if channels is None:
        channels = tuple(range(1 if rect.ndim == 2 else rect.shape[2]))
    med = np.array([_median_of_levels(cv2.calcHist([d], [c], None, [256], [0, 256]).ravel())
                    for c in channels])
    sigma = 1.4826 * med / math.sqrt(2.0)
    return float(sigma[0]) if rect.ndim == 2 else sigma


def _median_of_levels(counts: np.ndarray) -> float:
    """The median of uint8 values (np.median's: the mean of the two middle ones of an even
    count) from their histogram `counts` (256,) (whole numbers, exact in float32 below 2^24)."""
    cum = np.cumsum(counts.astype(np.int64))
    n = int(cum[-1])
    lo, hi = np.searchsorted(cum, [(n - 1) // 2, n // 2], side="right")
    return 0.5 * (float(lo) + float(hi))


def _outline_closure(rim_vals: np.ndarray, r_top: float, band: np.ndarray, min_step: np.ndarray,
                     polarity: np.ndarray, span: int = 1) -> np.ndarray:
    """Share of the rays (N,) with a step (over 0.04 diameters) larger than `min_step` (N,) of
    the face's sign (`polarity` (N,): +1 a dark face, brighter outward; -1 a light one) on the
    disc's outline: at the predicted rim, or out to the visible side band's edge (`band` (N, R),
    diameters). A disc's outline is seen all round, and a face darker (lighter) than the board
    is darker (lighter) than its own side band's far half, its shadow or the gap beside a
    neighbour too, so its rim steps all have one sign; a drawn line, a crossing, the board's edge
    or a patch of texture crosses that circle on a few rays, or with steps of both signs.
    `span`: the step is taken between the samples this many (0.02 diameters each) either side
    of each radius (`_rim_span`: 1, over 0.04 diameters, in a sharp frame)."""
    rr = RIM_RADII[span:-span]
    if len(rim_vals) == 0:
        return np.zeros(0)
    limit = r_top + np.maximum(band, 0.0)[..., None] + 0.05  # (N, R, 1)
    # (the steps only at the radii where some ray's outline can be: from 0.05 inside the rim
    # out to the widest band's edge, a half of the profile)
    lo = int(np.searchsorted(rr, r_top - 0.05, side="right"))
    hi = int(np.searchsorted(rr, limit.max(), side="left"))
    if hi <= lo:
        return np.zeros(len(rim_vals))
    d2 = (rim_vals[..., 2 * span + lo:2 * span + hi] - rim_vals[..., lo:hi]) \
        * polarity.astype(rim_vals.dtype)[:, None, None]
    return ((d2 > min_step[:, None, None]) & (rr[None, None, lo:hi] < limit)).any(axis=2).mean(axis=1)


def _around_shares(vals: np.ndarray, r_top: float, band: np.ndarray, min_step: np.ndarray,
                   polarity: np.ndarray, span: int = 1, hidden: np.ndarray | None = None
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """How much of each face's outline (N,) is seen (`vals` (N, R, DOT_RADII + RIM_RADII), `band`
    (N, R) the visible side band, `min_step` (N,) the least step that counts, `polarity` (N,) +1 a
    dark face, -1 a light one, `span` the rim's width in samples, `_rim_span`; `hidden` (N, R) rays
    left out): (the share of the rays used on which the profile steps with the face's sign at the
    rim (as `_outline_closure` takes it) or the face differs, by that step and with its sign, from
    what lies beyond the rim (as `_face_against_beside`); the share on which the latter; the number
    of rays used (N,); the rays used on which the outline is seen (N, R))."""
    nd = len(DOT_RADII)
    rim = vals[..., nd:]
    rr = RIM_RADII[span:-span]
    limit = r_top + np.maximum(band, 0.0)[..., None] + 0.05  # (N, R, 1)
    lo = int(np.searchsorted(rr, r_top - 0.05, side="right"))
    hi = max(int(np.searchsorted(rr, limit.max(), side="left")), lo + 1)
    sign = polarity.astype(rim.dtype)[:, None, None]
    # (a dark face steps up outward, a light one down)
    out = (rim[..., 2 * span + lo:2 * span + hi] - rim[..., lo:hi]) * sign
    step = ((out > min_step[:, None, None]) & (rr[None, None, lo:hi] < limit)).any(axis=2)
    face, beyond = _face_and_beyond(vals, r_top, band)
    beside = (beyond - face) * sign[..., 0] > min_step[:, None]
    use = np.ones(step.shape, bool) if hidden is None else ~hidden
    n_use = use.sum(axis=1)
    seen = (step | beside) & use
    share = seen.sum(axis=1) / np.maximum(n_use, 1)
    share_beside = (beside & use).sum(axis=1) / np.maximum(n_use, 1)
    return share, share_beside, n_use, seen


def _median_step_beyond(vals: np.ndarray, r_top: float, band: np.ndarray) -> np.ndarray:
    """Each dark face's (N,) median over its rays of what lies beyond the rim less the face
    (`vals` (N, R, DOT_RADII + RIM_RADII), `band` (N, R), as `_face_against_beside` takes them):
    the step its outline shows on most rays."""
    face, beyond = _face_and_beyond(vals, r_top, band)
    return np.median(beyond - face, axis=1)


#: a dark reading's rays towards another reading are left out (its face may run on beyond the
#: rim there) only from this far: the two ends of one dark bar 1.4 long (a domino, a shoe's toe)
#: are read 0.70 apart (0.698 with OpenCV 4.10), and each would excuse the other's missing
#: outline; a chip lying over another on the real photos (`chips_poker_table`) lies 0.72-0.75
#: from it (at 0.75 it is lost), touching discs 0.95-1.0. Little margin either side: measured
#: on one synthetic bar and one real chip
NEIGHBOUR_NEAREST_BOARD = 0.72


def _dark_seen_all_around(seen: np.ndarray, band: np.ndarray, hidden: np.ndarray | None = None) -> np.ndarray:
    """Which dark faces (N,) show their outline all around, from the rays `seen` (N, R) on which
    it is seen in some channel (`_around_shares`, polarity +1; `band` (N, R) the visible side
    band, `hidden` (N, R) rays that may be left out): on `DARK_ALL_AROUND_SHARE` of the rays
    used, or on `BESIDE_ALL_AROUND_SHARE` of them with the rest one arc centred on the direction
    away from the camera, where the camera sees the pieces' sides (a piece thicker than the kit's
    seen obliquely, `DARK_ALL_AROUND_SHARE`). With fewer than half the rays left, the outline is
    taken as seen (hemmed in: the rules of the hemmed-in discs speak for it)."""
    # (a ray towards a neighbour is left out only where the outline is not seen on it: a disc
    # that shows its rim between itself and a neighbour has shown it there)
    use = np.ones(seen.shape, bool) if hidden is None else ~(hidden & ~seen)
    n_use = use.sum(axis=1)
    share = seen.sum(axis=1) / np.maximum(n_use, 1)
    missing = use & ~seen
    n_rays = seen.shape[1]
    # (one arc: the missing rays start a run once around the circle)
    one_arc = (missing & ~np.roll(missing, 1, axis=1)).sum(axis=1) == 1
    # (centred within a ray and a half of the ray the side band is widest behind, `band` least:
    # the top face of a thick piece lies further away from the camera; and only where the camera
    # sees the kit's sides a profile sample wide at least: from straight above no piece's top
    # face lies off its foot)
    ang = np.arange(n_rays) * (2 * math.pi / n_rays)
    arc = np.arctan2((missing * np.sin(ang)).sum(axis=1), (missing * np.cos(ang)).sum(axis=1))
    away = ang[np.argmin(band, axis=1)]
    centred = np.abs(np.angle(np.exp(1j * (arc - away)))) <= 1.5 * (2 * math.pi / n_rays)
    sides = band.max(axis=1) >= RIM_RADII[1] - RIM_RADII[0]
    thick = one_arc & centred & sides & (share >= BESIDE_ALL_AROUND_SHARE)
    return (share >= DARK_ALL_AROUND_SHARE) | thick | (2 * n_use < n_rays)


def _seen_all_around(vals: np.ndarray, r_top: float, band: np.ndarray, min_step: np.ndarray,
                     span: int | np.ndarray = 1, hidden: np.ndarray | None = None,
                     along: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Which light faces (N,) show their outline all around (`_around_shares`, polarity -1): on
    `ALL_AROUND_SHARE` of the rays the profile steps down at the rim (as `_outline_closure`
    takes it) or the face differs from what lies beyond the rim (as `_face_against_beside`), and
    on `BESIDE_ALL_AROUND_SHARE` of them the latter. A light disc is lighter than its side, its
    shadow and the gap beside a neighbour all round: a Go stone touching others, on real photos,
    on 21-24 rays of 24 (a bowl's shadow or a highlight takes out up to 3), and differs from what
    lies beyond on 17 (the shadow's gap against a lighter neighbour). The light wedge of a square between a man and the square's
    dark corner neighbours is bounded by them on two sides, but the square's own colour runs on
    past it on two runs of 3-8 rays (13-21 such phantoms a photo on a roll-up checkers board);
    a playing card's symbol or lattice has a line for an outline, the card's own colour beyond
    it (the face differs from what lies beyond on 3-17 rays of 24, and where on 17, the outline
    is missing on 4 rays or more). `hidden` (N, R): rays left out (towards a touching neighbour
    of its colour, whose face runs on beyond the rim); with fewer than half the rays left, the
    outline is taken as seen (hemmed in: the rules of the hemmed-in discs speak for it). `span`:
    the rim's width in samples, the frame's or each face's own (`_own_rim_span`). `along`: the
    faces' profiles (N, R, K) in another channel where the face is darker than the board, and
    their least step (N,) (a face of the board's own tint, `_pale_board_tint`, along its colour
    to the board; a row with an infinite step has none): a ray counts where either shows it."""
    n, n_rays = vals.shape[:2]
    spans = np.broadcast_to(np.asarray(span), (n,))
    seen, beside = np.zeros((n, n_rays), bool), np.zeros((n, n_rays), bool)
    for sp in np.unique(spans):
        j = np.flatnonzero(spans == sp)
        ways = [(vals[j], min_step[j], -1.0)] + ([] if along is None else [(along[0][j], along[1][j], 1.0)])
        for v, step, pol in ways:
            seen[j] |= _around_shares(v, r_top, band[j], step, np.full(len(j), pol), int(sp))[3]
            face, beyond = _face_and_beyond(v, r_top, band[j])
            beside[j] |= (beyond - face) * pol > step[:, None]
    use = np.ones(seen.shape, bool) if hidden is None else ~hidden
    n_use = use.sum(axis=1)
    share = (seen & use).sum(axis=1) / np.maximum(n_use, 1)
    share_beside = (beside & use).sum(axis=1) / np.maximum(n_use, 1)
    return (((share >= ALL_AROUND_SHARE) & (share_beside >= BESIDE_ALL_AROUND_SHARE))
            | (2 * n_use < n_rays))


def _towards_neighbours(centres: np.ndarray, neighbours: np.ndarray, u: np.ndarray,
                        touching: float, nearest: float = 0.0) -> np.ndarray:
    """Which rays `u` (R, 2) from each of `centres` (N, 2) point at a disc among `neighbours`
    (M, 2) touching it (centres within `touching`, and further than `nearest`, board units; the
    reading itself, at distance 0, left out): those within the neighbour's half-width as seen from
    the centre, asin(0.5 / d), and half a ray's spacing (N, R)."""
    d = neighbours[None, :, :] - centres[:, None, :]  # (N, M, 2)
    dist = np.linalg.norm(d, axis=2)
    near = (dist > max(nearest, 1e-6)) & (dist <= touching)
    half = np.arcsin(np.minimum(1.0, 0.5 / np.maximum(dist, 0.5))) + math.pi / len(u)
    cosang = (d @ u.T) / np.maximum(dist, 1e-6)[..., None]  # (N, M, R)
    within = np.arccos(np.clip(cosang, -1.0, 1.0)) <= half[..., None]
    return (within & near[..., None]).any(axis=1)


def _across_rays(rim_vals: np.ndarray) -> np.ndarray:
    """The profiles `rim_vals` (N, R, K) averaged with their two neighbouring rays' (the rays run
    round the circle: weights 1/4, 1/2, 1/4; independent noise falls to `ACROSS_RAYS_NOISE`)."""
    return 0.5 * rim_vals + 0.25 * (np.roll(rim_vals, 1, axis=1) + np.roll(rim_vals, -1, axis=1))


def _rim_span(rim_vals: np.ndarray, fitted: np.ndarray, rays: np.ndarray, polarity: np.ndarray,
              noise: float) -> int:
    """How many profile samples (0.02 diameters each) either side of a rim its step takes in this
    frame: the blur the frame shows, measured on the rims the fits found (`fitted` (N,), on the
    rays `rays` (N, R) where no side shows; `rim_vals` (N, R, RIM_RADII), `polarity` (N,): +1
    where the face is darker) as a Gaussian edge's sigma, the whole step C over its steepest
    slope g per sample: sigma = C / (sqrt(2 pi) g), the median over the rays whose step stands
    20 noise sigmas out (a black disc's ~200 levels, a white face's on dark felt). From a sigma
    of 2.5 samples (0.05 diameters) the 0.04 diameters the outline tests were made for see less
    than a third of C (erf(0.02 / (sigma sqrt 2))): there the step is taken over one sigma
    either side, which sees 68 % of it. Sharper frames keep the 0.04 diameters (the kit's
    table shows 0.9-2.2 samples, a 2-px defocus 2.1-3.7)."""
    if not fitted.any():
        return 1
    v = rim_vals[fitted] * polarity[fitted].astype(rim_vals.dtype)[:, None, None]
    whole = v[..., -3:].mean(axis=2) - v[..., :3].mean(axis=2)  # (M, R): beyond minus face
    slope = np.diff(v, axis=2).max(axis=2)
    use = rays[fitted] & (whole > 20.0 * noise) & (slope > 0)
    if use.sum() < 12:  # (half a disc's rays at least)
        return 1
    sigma = float(np.median(whole[use] / (math.sqrt(2 * math.pi) * slope[use])))
    return min(round(sigma), 4) if sigma >= 2.5 else 1  # (4: half the 0.36 diameters a profile spans)


def _own_rim_span(rim_vals: np.ndarray, min_step: np.ndarray) -> np.ndarray:
    """How many profile samples either side of its rim each light face's own step takes (N,),
    as `_rim_span` measures the frame's (a Gaussian edge's sigma, the whole step over its
    steepest slope, 1 below 2.5 samples, at most 4), on each face's own rays (`rim_vals` (N, R,
    RIM_RADII)) whose face stands `min_step` (N,) above what lies beyond, on half of its rays at
    least (else 1). A turned wooden coin's rim is rounded, its edge falls over 3-4 samples where
    the frame's black rims fall over 2."""
    v = -rim_vals  # (a light face: up outward)
    whole = v[..., -3:].mean(axis=2) - v[..., :3].mean(axis=2)  # (N, R)
    slope = np.diff(v, axis=2).max(axis=2)
    use = (whole > min_step[:, None]) & (slope > 0)
    sigma = np.where(use, whole / (math.sqrt(2 * math.pi) * np.maximum(slope, 1e-6)), np.nan)
    out = np.ones(len(rim_vals), int)
    enough = 2 * use.sum(axis=1) >= rim_vals.shape[1]
    if enough.any():
        med = np.nanmedian(sigma[enough], axis=1)
        out[enough] = np.clip(np.round(med), 1, 4).astype(int)
    return out


def _along_face_to_board(vals_bgr: np.ndarray, face_colour: np.ndarray,
                         board_colour: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The BGR profiles `vals_bgr` (N, R, K, 3) projected on each candidate's unit vector from
    its face's colour to the board's (`face_colour`, `board_colour` (N, 3)): (N, R, K), where the
    face is darker than the board whatever their colours (the outline steps up outward), and the
    unit vectors (N, 3)."""
    d = (board_colour - face_colour).astype(np.float32)
    e = d / np.maximum(np.linalg.norm(d, axis=1, keepdims=True), 1e-6)
    # (channel by channel: twice as fast as einsum's contraction, the same sums)
    return (vals_bgr[..., 0] * e[:, 0, None, None] + vals_bgr[..., 1] * e[:, 1, None, None]
            + vals_bgr[..., 2] * e[:, 2, None, None]), e


def _face_against_beside(vals: np.ndarray, r_top: float, band: np.ndarray, min_step: np.ndarray,
                         polarity: np.ndarray) -> np.ndarray:
    """Share of the rays (N,) on which the face (the profile between the dot and the rim,
    0.19-0.26 diameters; `vals` (N, R, DOT_RADII + RIM_RADII)) differs by more than `min_step`
    (N,), with the face's sign (`polarity`), from what lies beyond the rim and its visible side
    band (the mean of the ray from 0.04 diameters past them; the last samples where the band
    reaches the end of the ray)."""
    face, beyond = _face_and_beyond(vals, r_top, band)
    return ((beyond - face) * polarity[:, None] > min_step[:, None]).mean(axis=1)


def _face_and_beyond(vals: np.ndarray, r_top: float, band: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per ray (N, R): the face (the profile between the dot and the rim, 0.19-0.26 diameters;
    `vals` (N, R, DOT_RADII + RIM_RADII)) and what lies beyond the rim and its visible side band
    `band` (N, R) (the mean of the ray from 0.04 diameters past them; the last samples where the
    band reaches the end of the ray)."""
    nd = len(DOT_RADII)
    face = vals[..., :nd][..., DOT_RADII >= 0.19].mean(axis=2)
    rim = vals[..., nd:]
    start = r_top + np.maximum(band, 0.0) + 0.04  # (N, R)
    start = np.minimum(start, RIM_RADII[-2])
    beyond_rim = RIM_RADII[None, None, :] >= start[..., None]
    return face, (rim * beyond_rim).sum(axis=2) / beyond_rim.sum(axis=2)


def _disc_sized(starts: np.ndarray, u: np.ndarray, r_edge: np.ndarray, ok: np.ndarray, r_top: float) -> np.ndarray:
    """Whether the outline's edges (`r_edge` (N, R) along the rays `u` from `starts`, on the rays
    `ok`) lie on a circle of the top face's radius `r_top`: a free-radius fit of them within two
    rim samples of it (the step that finds an edge spans two samples, `_outline_closure`; a
    ring printed 1.2 diameters wide fits 0.05-0.07 wider)."""
    tol = 2.0 * float(RIM_RADII[1] - RIM_RADII[0])
    _, _, good, _, radius = _fit_circles(starts, u, r_edge, ok, r_top, False)
    return good & (np.abs(radius - r_top) <= tol)


def _coloured(bgr: np.ndarray, noise: float, params: DiscParams) -> np.ndarray:
    """Which samples (..., 3) are coloured rather than black, white or grey (`_neutral_face`)."""
    # (of the three channels pairwise: numpy's reduction over a last axis of 3 is ten times slower)
    b, g, r = bgr[..., 0], bgr[..., 1], bgr[..., 2]
    hi = np.maximum(np.maximum(b, g), r).astype(np.float32)
    lo = np.minimum(np.minimum(b, g), r).astype(np.float32)
    return (hi - lo) > params.max_face_saturation * (hi + 30.0) + params.outline_snr * noise


def _runs_on_beyond_rim(col_face: np.ndarray, col_out: np.ndarray, n_angles: int) -> np.ndarray:
    """Whether what colours each candidate's face crosses its rim: most directions where the
    face's outermost ring (`col_face` (N, rings x n_angles), radius-major) is coloured have the
    ring beyond the rim (`col_out`, likewise) coloured too, within two directions (an object's
    edge that crosses the rim off its centre is seen at the outer ring up to two directions of
    24 further round: a chord 0.3 diameters off the centre meets the rings at 0.34 and 0.6
    diameters 32 degrees apart). A printed mark inside drawn lines that only happens to have
    colour nearby (a carrom board's arrow between its two lines) fails it."""
    edge = col_face.reshape(len(col_face), -1, n_angles)[:, -1, :]
    beyond = col_out.reshape(len(col_out), -1, n_angles).any(axis=1)
    near = np.zeros_like(beyond)
    for step in range(-2, 3):
        near |= np.roll(beyond, step, axis=1)
    n_edge = edge.sum(axis=1)
    return (n_edge > 0) & ((edge & near).sum(axis=1) * 2 >= n_edge)


def _under_object(face_bgr: np.ndarray, out_bgr: np.ndarray, board_colour: np.ndarray, noise: float,
                  min_contrast: float, params: DiscParams, n_angles: int = 24) -> tuple[np.ndarray, np.ndarray]:
    """Whether each candidate's coloured face samples (`face_bgr` (N, P, 3)) are an object lying
    across it (a pencil, a sleeve) rather than its own face: they cover no more of the face than
    the disc's outline may miss (1 - `min_closure`: a disc hidden more than that is not in view),
    the object runs on beyond the rim (a coloured sample of the ring just outside it, `out_bgr`
    (N, Q, 3), of the same colour: their medians within `min_contrast` in every channel) and it is
    not the board (its colour differs from the board's, `board_colour` (N, 3), by `min_contrast`:
    felt or wood around a candidate is the board, not something on it). The rest of the face must
    then be neutral, as a whole face must (`_neutral_face`). And which samples are coloured
    (N, P)."""
    col_face = _coloured(face_bgr, noise, params)
    col_out = _coloured(out_bgr, noise, params)
    out = np.zeros(len(face_bgr), bool)
    share = col_face.mean(axis=1)
    ok = (share > 0) & (share <= 1.0 - params.min_closure) & col_out.any(axis=1)
    ok &= _runs_on_beyond_rim(col_face, col_out, n_angles)
    for i in np.flatnonzero(ok):
        obj = np.median(face_bgr[i][col_face[i]].astype(np.float32), axis=0)
        beyond = np.median(out_bgr[i][col_out[i]].astype(np.float32), axis=0)
        out[i] = (np.abs(obj - beyond).max() < min_contrast
                  and np.abs(obj - board_colour[i]).max() >= min_contrast)
    return out, col_face


def _rays_under_object(covered: np.ndarray) -> np.ndarray:
    """The directions (N, FACE_RING_ANGLES) an object lying across each face hides at its rim,
    from its covered face samples (`covered` (N, rings * FACE_RING_ANGLES), ring-major as
    `_ring_indices` lays out `FACE_RING_BOARD`, the angles the profiles' rays' own): an angle
    whose sample on the outermost face ring is covered, and the angle on either side of it (the
    object's edge falls between two rays; a pencil a quarter of a diameter wide across a disc
    hides 9-12 of 24). An object hiding more than half of them would leave too few to judge by
    (`_seen_all_around` takes fewer than half as hemmed in, and seen): then none is left out."""
    hit = covered.reshape(len(covered), -1, FACE_RING_ANGLES)[:, -1, :]
    hit = hit | np.roll(hit, 1, axis=1) | np.roll(hit, -1, axis=1)
    hit[2 * hit.sum(axis=1) > FACE_RING_ANGLES] = False
    return hit


def _without_object(face_bgr: np.ndarray, face_grey: np.ndarray, covered: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The faces' samples (`face_bgr` (N, P, 3), `face_grey` (N, P)) with those under an object
    (`covered` (N, P)) replaced by the median of the rest, and the faces' grey medians and spreads
    (robust sigma) from the rest alone."""
    bgr = face_bgr.astype(np.float32)
    grey = face_grey.astype(np.float32)
    med_g, spread = np.zeros(len(bgr), np.float32), np.zeros(len(bgr), np.float32)
    for k in range(len(bgr)):
        seen = ~covered[k]
        bgr[k][~seen] = np.median(bgr[k][seen], axis=0)
        med_g[k] = np.median(grey[k][seen])
        spread[k] = 1.4826 * np.median(np.abs(grey[k][seen] - med_g[k]))
    return bgr.astype(face_bgr.dtype), med_g, spread


def _neutral_face(face_bgr: np.ndarray, noise: float, params: DiscParams) -> np.ndarray:
    """Whether each candidate's face (`face_bgr` (N, P, 3): its samples) is black or white rather
    than coloured: its colour spread (max - min of B, G, R) below `max_face_saturation` of its
    brightness (+30 levels: on a dark face noise and a colour cast dominate) plus what the
    frame's `noise` (grey levels) gives one sample's channels (`outline_snr` sigmas: a codec's
    colour subsampling smears the board's colour into a black face's samples). Felt, wood, a
    printed red circle are coloured."""
    coloured = _coloured(face_bgr, noise, params)
    # (per sample, not of the mean colour: a ring half on a red print and half on the board
    # around it averages to a pale, nearly neutral colour; a disc's face is neutral all over,
    # but for a few samples on a highlight's coloured fringe or on the rim)
    return coloured.mean(axis=1) <= params.max_coloured_share


def _pale_board_tint(face_bgr: np.ndarray, board_colour: np.ndarray, noise: float,
                     params: DiscParams) -> np.ndarray:
    """Whether each candidate's face (`face_bgr` (N, P, 3): its samples) is the board's own tint
    (`board_colour` (N, 3), BGR), no more saturated than the board: a light piece of the board's
    material, or a white one under the light that tints the board (cream turned wooden carrom
    coins on plywood: the wood's hue, 0.33-0.6 of their brightness, which `_neutral_face` calls
    coloured). Per sample, as `_neutral_face`: its chroma (the colour minus its grey, a vector
    in B, G, R) points within `MAX_TINT_ANGLE_DEG` of the board's and is no larger, in units of
    brightness, than the board's plus what `outline_snr` noise sigmas give a sample; on all but
    `max_coloured_share` of the samples. A print on the board is of another hue (a carrom
    board's red circles, 35-40 degrees off its wood) or more saturated than the board."""
    f = face_bgr.astype(np.float32)
    b = board_colour.astype(np.float32)[:, None, :]
    mf, mb = f.mean(axis=2, keepdims=True), b.mean(axis=2, keepdims=True)
    vf, vb = f - mf, b - mb
    nf, nb = np.linalg.norm(vf, axis=2), np.linalg.norm(vb, axis=2)
    cos = (vf * vb).sum(axis=2) / np.maximum(nf * nb, 1e-6)
    # (a face with no chroma beyond its noise has no hue: it is neutral, `_neutral_face`'s case)
    tol = params.outline_snr * noise
    same_hue = (cos >= math.cos(math.radians(MAX_TINT_ANGLE_DEG))) | (nf <= tol)
    paler = nf <= nb * mf[..., 0] / np.maximum(mb[..., 0], 1.0) + tol
    return (~(same_hue & paler)).mean(axis=1) <= params.max_coloured_share


def _saturated(face_bgr: np.ndarray, params: DiscParams) -> np.ndarray:
    """Whether each face (`face_bgr` (N, P, 3): its samples) is clipped at the sensor's white in
    all three channels (each sample's darkest channel at `clip_level` or above) on all but
    `max_coloured_share` of its samples (its rim, a highlight's fringe)."""
    darkest = np.minimum(np.minimum(face_bgr[..., 0], face_bgr[..., 1]), face_bgr[..., 2])
    return (darkest >= params.clip_level).mean(axis=1) >= 1.0 - params.max_coloured_share


def _face_against_board(small: np.ndarray, rect_shape: tuple[int, ...], rect_bgr: np.ndarray | None,
                        face_bgr: np.ndarray | None, cands_px: np.ndarray, face: np.ndarray,
                        min_contrast: float, lighter: np.ndarray, params: DiscParams
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
    """How much each candidate's face differs from the board around it (grey levels: the largest
    difference of a colour channel where in colour, black on green felt differs in green), with
    its reading's sign (`lighter` (N,): lighter than the board, else darker; the other way it is
    negative) and without (N,) each, and
    the faces' and the board's colours (N, 3), BGR (None for a grey frame). `small`: the grey
    rectified image of `rect_shape` at a quarter of its scale; `face_bgr` (N, P, 3): the faces'
    samples in colour. The board: the median over ~5 diameters (discs, even a packed cluster,
    cover less than half); for a face lighter than that, again without the darker candidates
    whose faces differ from it by `min_contrast` (`_board_around`: where discs crowd, the bare
    board between black discs or the paper inside a printed ring has a board darkened by the
    discs around it)."""
    import cv2

    k = round(5 * params.scale_px_per_unit / 4) | 1
    planes, faces = small[..., None], None
    if rect_bgr is not None:
        colour_small = _quarter(rect_bgr)  # the same 4 x 4 blocks as `small`
        planes = np.concatenate([planes, colour_small], axis=2)
        faces = row_median(face_bgr.astype(np.float32))
    # (grey and colour in one 4-channel median: each channel's is its own, in one pass)
    board = _plate_brightness(cv2.medianBlur(planes if faces is not None else small, k), rect_shape,
                              cands_px).reshape(len(cands_px), -1)  # (N, 1 or 4)
    all_faces = face[:, None] if faces is None else np.concatenate([face[:, None], faces], axis=1)
    delta = np.abs(all_faces - board).max(axis=1)
    # (what counts is the difference with the reading's sign, `lighter` (N,): a light reading's
    # face lighter than the board in some channel, a dark one's darker; the paper in a gap
    # between black discs, darkened by their shadows, is darker than the board in every channel
    # and no white disc. Unsigned, it picks the dark candidates to leave out below. A dark
    # reading's difference stays unsigned: a lit black disc on saturated green felt is a grey
    # surface lighter than the felt in grey, blue and red and only 14 levels darker in green
    # (varied table, green felt, seed 1 frame 10), and differs from the felt by its lack of colour)
    signed = np.where(lighter, (all_faces - board).max(axis=1), delta)
    stands_out = delta >= min_contrast
    # (the board beside a light candidate, without the dark candidates that stand out: black
    # discs around a patch of bare board, or beside the paper inside a printed ring, darken the
    # median; light candidates left in keep a light square of a grid between its lines from a
    # board of lines. A dark face, a letter or a line's ink, keeps the median of everything: the
    # light discs it would leave out are not what brightens a board)
    # (only ever less: a light face may be darker than the board in a colour channel, and the
    # board without its dark discs must not make it differ more there)
    light, dark = face >= board[:, 0], stands_out & (face < board[:, 0])
    if light.any() and dark.any():
        bare = _board_around(planes, rect_shape, cands_px[dark], cands_px[light], board[light], params)
        delta[light] = np.minimum(delta[light], np.abs(all_faces[light] - bare).max(axis=1))
        off_bare = all_faces[light] - bare
        signed[light] = np.minimum(signed[light], np.where(lighter[light], off_bare.max(axis=1),
                                                           np.abs(off_bare).max(axis=1)))
    return signed, delta, faces, (board[:, 1:] if faces is not None else None)


def _board_around(planes: np.ndarray, rect_shape: tuple[int, ...], discs_px: np.ndarray, at_px: np.ndarray,
                  fallback: np.ndarray, params: DiscParams) -> np.ndarray:
    """The board's level (N, C) at each of `at_px` (rectified pixels) in each plane of `planes`
    (h, w, C; the rectified image at a lower scale): the median over a square of 5 diameters
    (every other pixel) of what lies on the playing area and further than 0.6 diameters (a
    disc's face, rim and side) from each of `discs_px`. Where those cover nearly all of the
    square (under 15 % left: a packed cluster), `fallback` (N, C)."""
    import cv2

    h, w = planes.shape[:2]
    f = w / rect_shape[1]
    per_unit = params.scale_px_per_unit * f
    covered = np.zeros((h, w), np.uint8)
    r = 0.6 * params.disc_diameter_board * per_unit
    # (the centres in 1/16 px rounded all at once, half to even as round() does: the loop only
    # draws)
    r16 = round(r * 16)
    for cx, cy in np.rint(np.asarray(discs_px, np.float64).reshape(-1, 2) * f * 16).astype(int).tolist():
        cv2.circle(covered, (cx, cy), r16, 1, -1, cv2.LINE_8, 4)
    # (nor the table beyond the board's edge: the rectified image has a margin around the
    # playing area, and nothing there is under a disc)
    m = round(params.margin_board * per_unit)
    covered[:m], covered[h - m:], covered[:, :m], covered[:, w - m:] = 1, 1, 1, 1
    half = round(2.5 * per_unit)
    off = np.arange(-half, half + 1, 2)
    c = np.rint(np.asarray(at_px, np.float64).reshape(-1, 2) * f).astype(np.intp)
    xi = np.clip(c[:, :1] + off[None, :], 0, w - 1)
    yi = np.clip(c[:, 1:] + off[None, :], 0, h - 1)
    flat = (yi[:, :, None] * w + xi[:, None, :]).reshape(len(c), -1)  # (N, k * k)
    free = covered.reshape(-1)[flat] == 0
    n_free = free.sum(axis=1)
    vals = np.where(free[..., None], np.take(planes.reshape(-1, planes.shape[2]), flat, axis=0).astype(np.float32),
                    np.inf)
    srt = np.sort(vals, axis=1)  # the covered ones last
    rows = np.arange(len(c))[:, None]
    lo, hi = np.maximum(n_free - 1, 0) // 2, n_free // 2
    med = 0.5 * (srt[rows, lo[:, None], np.arange(planes.shape[2])[None, :]]
                 + srt[rows, np.minimum(hi, srt.shape[1] - 1)[:, None], np.arange(planes.shape[2])[None, :]])
    return np.where((n_free >= 0.15 * flat.shape[1])[:, None], med, fallback)


def _face_to_plate(rect_bgr: np.ndarray, face_idx: np.ndarray, ks: int, cands_px: np.ndarray) -> np.ndarray:
    """Each candidate's face brightness over the local plate's (N,), both in each pixel's
    brightest channel, max(B, G, R): the face's median over its samples (`face_idx`), the plate's
    a closing (`ks` pixels) of the rectified image at the quarter scale (`_quarter`).
    (In grey a black face on saturated felt can be brighter than the felt: black (30, 30, 34)
    lit brightly reads 105 on blue felt (118, 62, 26) of grey 60. But the felt reflects its
    own colour as well as a white face does and a black face does not: in the felt's own
    channel a black face is darker than the felt and a white one brighter, whatever the light
    (a tint or a hot spot scales both alike). A neutral face's brightest channel is its grey, so
    on paper, wood or a grey board the ratio is what grey gives, give or take the board's tint.
    A ratio, not a difference in noise units: the light scales face and plate alike, and the
    ratio black / white faces keep (~0.15) is far from `black_ratio`.)"""
    import cv2

    b, g, r = cv2.split(rect_bgr)
    value = cv2.max(cv2.max(b, g), r)  # (numpy's max over the last axis is several times slower)
    face = row_median(value.reshape(-1)[face_idx].astype(np.float32))
    return face / np.maximum(_plate_brightness(_closing(_quarter(value), ks), value.shape, cands_px), 1.0)


def _quarter(rect: np.ndarray) -> np.ndarray:
    """The rectified image (grey, colour or one channel) at a quarter of its scale: the mean of
    each whole 4 x 4 block (given as a factor, OpenCV's fast block path, several times cheaper
    than an area resize to a size that is not a whole multiple; and one grid for all of them)."""
    import cv2

    return cv2.resize(rect, None, fx=0.25, fy=0.25, interpolation=cv2.INTER_AREA)


def _closing(small: np.ndarray, ks: int) -> np.ndarray:
    """A morphological closing with a disc of `ks` pixels: removes what is darker than the plate
    and smaller than the disc (discs, drawn lines), keeps the plate."""
    import cv2

    return cv2.morphologyEx(small, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (ks, ks)))


def _plate_brightness(bg_small: np.ndarray, rect_shape: tuple[int, ...], cands_px: np.ndarray) -> np.ndarray:
    """The local plate brightness (`bg_small`: a closing of the rectified image at a smaller
    scale) at the rectified pixel nearest each candidate, interpolated as a resize of it back to
    `rect_shape` would: (N,), or (N, C) for a `bg_small` of C channels."""
    import cv2

    h, w = rect_shape[:2]
    hs, ws = bg_small.shape[:2]
    xi = np.clip(np.rint(cands_px[:, 0]), 0, w - 1)
    yi = np.clip(np.rint(cands_px[:, 1]), 0, h - 1)
    mx = ((xi + 0.5) * (ws / w) - 0.5).astype(np.float32).reshape(1, -1)
    my = ((yi + 0.5) * (hs / h) - 0.5).astype(np.float32).reshape(1, -1)
    out = cv2.remap(bg_small.astype(np.float32), mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return out.reshape(mx.shape[1], *bg_small.shape[2:])


# --------------------------------------------------------------------------------------------
# sub-pixel refinement in the original frame
# --------------------------------------------------------------------------------------------


def _sample_profiles(
    frame: np.ndarray,
    lookup_px: tuple[np.ndarray, np.ndarray],
    centres: np.ndarray,
    radii: np.ndarray,
    n_rays: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """Grey values (N, n_rays, len(radii)) float32 along rays in the board plane, the ray
    directions (n_rays, 2), grey + (B - R) and the BGR samples (N, n_rays, len(radii), 3) float32
    (a grey frame: grey twice and None). `frame` is BGR or grey; a BGR frame is sampled first and only the
    samples are converted to grey. The sample points are looked up in the board's board -> image
    tables `lookup_px` (`DiscTables`; exact bilinear interpolation of float32 tables)."""
    import cv2

    ang = np.linspace(0, 2 * math.pi, n_rays, endpoint=False)
    u = np.stack([np.cos(ang), np.sin(ang)], axis=1)
    sc, mg = LOOKUP_SCALE_PX_PER_UNIT, LOOKUP_MARGIN_BOARD
    # the mapping is smooth along a ray: look up a few nodes on each ray (one row per disc:
    # remap wants fewer than 32767 rows; in table cells) and interpolate the samples between them
    nodes, weights = _ray_interpolation(tuple(float(r) for r in radii))
    n = len(np.asarray(centres).reshape(-1, 2))
    off = ((nodes[None, :, None] * u[:, None, :]).reshape(-1, 2) * sc).astype(np.float32)
    base = ((np.asarray(centres, dtype=np.float64).reshape(-1, 2) + mg) * sc).astype(np.float32)
    tu = base[:, :1] + off[None, :, 0]
    tv = base[:, 1:] + off[None, :, 1]
    mx, my = lookup_px
    x_nodes = cv2.remap(mx, tu, tv, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    y_nodes = cv2.remap(my, tu, tv, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    # (einsum, not `@`: a product this small is faster on one core than on BLAS's threads, which
    # on a busy machine wait for a core: 8 ms of CPU and 30 ms of wall time instead of 0.3 ms)
    x = np.einsum("ik,kj->ij", x_nodes.reshape(-1, len(nodes)), weights).reshape(n, -1)
    y = np.einsum("ik,kj->ij", y_nodes.reshape(-1, len(nodes)), weights).reshape(n, -1)
    # fixed-point maps (1/32 px) are cheaper to remap a colour frame with than float maps
    m1, m2 = cv2.convertMaps(x, y, cv2.CV_16SC2)
    vals = cv2.remap(frame, m1, m2, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    shape = (len(base), n_rays, len(radii))
    if vals.ndim == 3:
        bgr = vals.astype(np.float32)
        bright = cv2.transform(bgr, np.array([[1.114, 0.587, -0.701]], np.float32))
        vals = cv2.cvtColor(vals, cv2.COLOR_BGR2GRAY)
        return vals.reshape(shape).astype(np.float32), u, bright.reshape(shape), bgr.reshape(*shape, 3)
    vals = vals.reshape(shape).astype(np.float32)
    return vals, u, vals, None


@functools.lru_cache(maxsize=8)
def _ray_interpolation(radii: tuple[float, ...], n_nodes: int = 6) -> tuple[np.ndarray, np.ndarray]:
    """Chebyshev nodes spanning `radii` and the (n_nodes, len(radii)) float32 Lagrange weights
    that interpolate a smooth function of the radius at `radii` from its values at the nodes."""
    r = np.asarray(radii, dtype=np.float64)
    lo, hi = float(r.min()), float(r.max())
    k = np.arange(n_nodes)
    nodes = 0.5 * (lo + hi) - 0.5 * (hi - lo) * np.cos((2 * k + 1) * math.pi / (2 * n_nodes))
    weights = np.ones((n_nodes, len(r)))
    for i in range(n_nodes):
        for j in range(n_nodes):
            if i != j:
                weights[i] *= (r - nodes[j]) / (nodes[i] - nodes[j])
    weights = weights.astype(np.float32)
    nodes.flags.writeable = weights.flags.writeable = False
    return nodes, weights


def _edge_positions(vals: np.ndarray, radii: np.ndarray, polarity: np.ndarray,
                    near: tuple[float, float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Sub-sample radius of the strongest step of the given polarity (+1: brighter outward)
    on each ray, and its strength. vals (N, R, S); polarity (N,). `near` (radius, least step):
    the step nearest that radius among the local maxima stronger than the least step (the
    strongest where there is none) instead of the strongest."""
    d = np.diff(vals, axis=2)  # (N, R, S-1), positive at the edge once signed
    d *= polarity.astype(d.dtype)[:, None, None]
    # smooth the derivative a little (the end samples stay as they are)
    ds = d.copy()
    inner = ds[..., 1:-1]
    np.add(d[..., :-2], d[..., 2:], out=inner)
    inner *= np.float32(0.25)
    inner += d[..., 1:-1] * np.float32(0.5)
    k = np.argmax(inner, axis=2) + 1
    if near is not None:
        target, least = near
        peak = (inner >= ds[..., :-2]) & (inner > ds[..., 2:]) & (inner > least)
        r_mid = radii[0] + (np.arange(1, ds.shape[2] - 1) + 0.5) * (radii[1] - radii[0])
        # (the first maximum in the order of the distance to `target`, of two as far the inner
        # one: the samples reordered once, the first one set in each row)
        nearest = np.argsort(np.abs(r_mid - target), kind="stable")
        first = np.argmax(peak[..., nearest], axis=2)
        k = np.where(peak.any(axis=2), nearest[first] + 1, k)
    m = ds.shape[2]
    flat = ds.reshape(-1)
    at = np.arange(k.size).reshape(k.shape) * m + k
    y0, y1, y2 = flat[at - 1], flat[at], flat[at + 1]
    den = y0 - 2 * y1 + y2
    off = np.where(den < -1e-9, 0.5 * (y0 - y2) / np.where(den < -1e-9, den, -1.0), 0.0)
    off = np.minimum(np.maximum(off, -0.5), 0.5)
    step = radii[1] - radii[0]
    off = _step_centroid(ds, k, off)
    r_edge = radii[0] + (k + 0.5 + off) * step  # diff index k sits between samples k and k+1
    return r_edge, y1


def _step_centroid(ds: np.ndarray, k: np.ndarray, off: np.ndarray, reach: int = 6) -> np.ndarray:
    """Where a blurred step is: the centroid of its derivative over the run of samples around
    the peak `k` (N, R) of `ds` (N, R, S) that stay above half of it, as an offset from `k`
    (samples); `off` (the parabola's) where that run is 3 samples or fewer. A blur spreads a
    step into a plateau of its derivative as wide as the blur (a motion blur of 7 px: up to 11
    samples on the rays along the blur, 5 on those across it), on which the parabola's peak lands
    anywhere; a symmetric blur leaves the plateau centred on the step. The run is held to half
    the width this frame's steps show along each ray's direction on either side of the peak (the
    median over the profiles' strongest quarter of steps: a sharp frame's rims 4-5 samples, a
    defocused one's 8-9), so that a neighbour's rim, a line or a shadow next to the step does not
    join it, and a sample more (the peak need not be the plateau's middle). A sharp step,
    after the 1-2-1 smoothing, is 3 samples at half its peak: the parabola through them is its
    centre already. `reach`: six samples each side at most (a quarter of a diameter)."""
    m = ds.shape[2]
    j = np.arange(-reach, reach + 1)
    at = k[..., None] + j
    # (gathered from the flat array: twice as fast as np.take_along_axis; the peak is at j = 0)
    flat = np.clip(at, 0, m - 1)
    flat += (np.arange(k.size) * m).reshape(*k.shape, 1)
    w = np.take(ds.reshape(-1), flat)
    peak = w[..., reach]
    above = (at >= 0) & (at < m) & (w >= 0.5 * peak[..., None])
    # (the run is what is contiguous with the peak on either side)
    left = np.logical_and.accumulate(above[..., reach - 1::-1], axis=2)[..., ::-1]
    right = np.logical_and.accumulate(above[..., reach + 1:], axis=2)
    width = 1 + left.sum(axis=2) + right.sum(axis=2)
    strong = peak >= _upper_quartile(peak)[None, :]
    # (each ray's median of the strong steps' widths, all rays at once: the two middle ones of
    # the strong widths sorted first, the others after them)
    count = strong.sum(axis=0)
    ordered = np.sort(np.where(strong, width, width.max(initial=0) + 1), axis=0)
    rays = np.arange(width.shape[1])
    middle = ordered[np.maximum(count - 1, 0) // 2, rays] + ordered[np.minimum(count // 2, len(width) - 1), rays]
    frame_width = np.where(count > 0, 0.5 * middle, 1.0)
    # (and only along the directions whose steps this frame shows spread: a sharp frame's, 4-5
    # samples, are the parabola's; its centroid there would also take in what lies beside them)
    out = off.astype(np.float64)
    spread = np.flatnonzero(frame_width > SHARP_STEP_SAMPLES)
    if len(spread) == 0:
        return out
    run = np.concatenate([left[:, spread], np.ones_like(left[:, spread, :1]), right[:, spread]], axis=2)
    run &= np.abs(j)[None, None, :] <= (frame_width[spread] // 2 + 1)[None, :, None]
    wr = np.where(run, w[:, spread], 0.0)
    wide = (run.sum(axis=2) > 3) & (peak[:, spread] > 0)
    out[:, spread] = np.where(wide, (wr * j).sum(axis=2) / np.maximum(wr.sum(axis=2), 1e-9), off[:, spread])
    return out


def _strong_gradients(gx: np.ndarray, gy: np.ndarray, threshold: np.float32) -> tuple[np.ndarray, np.ndarray]:
    """Where the gradient's magnitude exceeds `threshold`, and that magnitude there: (indices
    into the flat arrays, float32 magnitudes). The same bits wherever the arrays lie in memory:
    cv2.magnitude's optimised path rounds some elements by its buffers' alignment, which moved
    the readings by ~1e-7 d from one call to the next; numpy's products, sum and square root are
    exact per element."""
    mag2 = gx * gx
    mag2 += gy * gy
    idx = np.flatnonzero(mag2 > np.float32(threshold) * np.float32(threshold))
    return idx, np.sqrt(mag2[idx])


#: np.percentile's result type for float32 values: float64 on numpy < 2 (the floor's 1.26), float32
#: on numpy 2 (NEP 50), so that `_upper_quartile` is it exactly on both
_PERCENTILE_WEIGHS_IN_FLOAT64 = np.percentile(np.zeros((2, 1), np.float32), 75, axis=0).dtype == np.float64


def _upper_quartile(values: np.ndarray) -> np.ndarray:
    """np.percentile(values, 75, axis=0), exactly (its linear interpolation between the two
    order statistics around (N - 1) * 0.75, in the values' dtype), from one partition of the
    columns: (C,) of (N, C). (np.percentile's own checks and index bookkeeping cost twice the
    work on the profiles' (N, 24) steps.)"""
    n = values.shape[0]
    at = (n - 1) * 0.75
    if n < 2:
        return np.percentile(values, 75, axis=0)
    lo = math.floor(at)
    t = at - lo
    part = np.partition(values.T, (lo, lo + 1), axis=1)
    a, b = part[:, lo], part[:, lo + 1]
    diff = b - a
    # (numpy's _lerp: from the nearer end; numpy < 2 weighs float32 values in float64, its weights
    # being a float64 array, numpy 2 in the values' dtype)
    weight = np.array([t]) if _PERCENTILE_WEIGHS_IN_FLOAT64 else t
    return b - diff * (1 - weight) if t >= 0.5 else a + diff * weight


def _fit_circles(
    centres: np.ndarray, u: np.ndarray, r_edge: np.ndarray, ok: np.ndarray, radius: float | np.ndarray,
    fixed_radius: bool | np.ndarray,
    radius_tolerance: float | np.ndarray = 0.25,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Robust least-squares circles through the edge points c0 + r u, all at once (Gauss-Newton
    on the geometric distance, then 3-sigma rejection, twice); `radius` (the start, or the
    known radius where `fixed_radius`) and `fixed_radius` per circle or for all.
    Returns centres (N, 2), 1-sigma centre uncertainty (N,), success (N,), share of the rays
    that agree with the circle (N,), radius (N,)."""
    n, n_rays = r_edge.shape
    fixed = np.broadcast_to(np.asarray(fixed_radius, bool), (n,))
    r0 = np.broadcast_to(np.asarray(radius, np.float64), (n,))
    # edge points (N, R) relative to the start, x and y apart (cheaper than (N, R, 2) stacks;
    # float32 is plenty for offsets below a diameter)
    f32 = np.float32
    px = r_edge.astype(f32) * u[None, :, 0].astype(f32)
    py = r_edge.astype(f32) * u[None, :, 1].astype(f32)
    cx, cy = np.zeros(n, f32), np.zeros(n, f32)
    rr = r0.astype(f32)
    sel = ok.copy()
    free = (~fixed).astype(f32)

    def residuals() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        dx, dy = px - cx[:, None], py - cy[:, None]
        dist = np.sqrt(dx * dx + dy * dy)
        inv = f32(1.0) / np.maximum(dist, f32(1e-9))
        return dx * inv, dy * inv, dist - rr[:, None]

    for round_ in range(2):
        # (the selection as weights, and its count, once a round: it changes between rounds only)
        wsel = sel.astype(f32)
        f = np.where(fixed, f32(1.0), wsel.sum(1)) + f32(1e-9)
        for _ in range(2):
            nx, ny, res = residuals()
            # normal equations of J = -(nx, ny, 1) over the selected rays: J^T J step = -J^T res
            # (symmetric 3x3, solved by cofactors); a known radius decouples the third unknown
            wnx, wny = nx * wsel, ny * wsel
            a, b, d = (wnx * nx).sum(1), (wnx * ny).sum(1), (wny * ny).sum(1)
            c, e = wnx.sum(1) * free, wny.sum(1) * free
            r1, r2, r3 = (wnx * res).sum(1), (wny * res).sum(1), (res * wsel).sum(1) * free
            a += f32(1e-9)
            d += f32(1e-9)
            c11, c12, c13 = d * f - e * e, c * e - b * f, b * e - c * d
            c22, c23, c33 = a * f - c * c, b * c - a * e, a * d - b * b
            det = a * c11 + b * c12 + c * c13
            inv = np.divide(f32(1.0), det, out=np.zeros_like(det), where=np.abs(det) > 1e-20)
            cx = cx + (c11 * r1 + c12 * r2 + c13 * r3) * inv
            cy = cy + (c12 * r1 + c22 * r2 + c23 * r3) * inv
            rr = rr + (c13 * r1 + c23 * r2 + c33 * r3) * inv
        if round_ == 1:
            break
        res = residuals()[2]
        absr = np.where(sel, np.abs(res), np.inf)
        cnt_sel = sel.sum(axis=1)
        srt = np.sort(absr, axis=1)
        mid = np.maximum((cnt_sel - 1) // 2, 0)  # (at most (n_rays - 1) // 2)
        mad = 1.4826 * np.where(cnt_sel > 0, srt[np.arange(n), mid], 0.0)
        sel = ok & (np.abs(res) < np.maximum(3 * mad, 0.01)[:, None])
    res = residuals()[2]
    cnt = sel.sum(axis=1)
    npar = np.where(fixed, 2, 3)
    # (a diverged circle's residuals, kept rays' too, can overflow in the square: its spread is
    # then inf and its sigma refuses it, as it should; the rays left out squared as 0)
    with np.errstate(over="ignore"):
        s_res = np.sqrt(np.sum(np.where(sel, res, 0.0) ** 2, axis=1) / np.maximum(cnt - npar, 1))
    # coverage of directions: a centre from a short arc is poorly determined
    cover = np.hypot(*np.einsum("nr,rk->kn", sel.astype(np.float64), u)) / np.maximum(cnt, 1)
    sig = s_res.astype(np.float64) * np.sqrt(2.0 / np.maximum(cnt, 1)) / np.maximum(1 - cover, 0.2)
    rr = rr.astype(np.float64)
    c = centres + np.stack([cx, cy], axis=1).astype(np.float64)
    good = (cnt >= 6) & (np.abs(rr - r0) < radius_tolerance * r0) & np.all(np.isfinite(c), axis=1)
    c = np.where(good[:, None], c, centres)
    sig = np.where(good, sig, np.inf)
    return c, sig, good, cnt / n_rays, rr


def _dot_edges(
    vals: np.ndarray,
    is_black: np.ndarray,
    params: DiscParams,
    clear: np.ndarray | None = None,
    neutral: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The grey dot's rim on each ray of the profiles `vals` (N, rays, DOT_RADII): radius (N, R),
    which rays found it (N, R), whether the face around the dot is clipped at the sensor's white
    (N,), the share of the radius the fit may deviate by (N,), and where the lenient rules of a
    neutral dot on a clipped face apply (N,). `clear` (N,): where the face
    may count as clipped (no ink around the dot); `neutral` (N,): where the dot is as neutral in
    colour as a grey dot is (a still weaker step counts there)."""
    r_dot = params.dot_diameter_board / 2
    radii = DOT_RADII
    # dot on black: brighter inside -> darker outward (-1); on white: darker inside (+1)
    polarity = np.where(is_black, -1.0, 1.0)
    # the edge points are true rim points wherever the rays start
    r_edge, strength = _edge_positions(vals, radii, polarity)
    # a dot in glare looks smaller (its rim clips at white): be lenient with its radius; on a
    # white face clipped at the sensor's white the blurred rim is cut below its midpoint, and
    # the steepest step moves well inside (to ~0.6 of the radius); clipped pixels carry no
    # noise, so a weaker step is still an edge there
    outer = vals[:, :, radii >= 0.2].reshape(len(vals), -1)
    clipped = ~is_black & (row_median(outer) >= params.clip_level)
    if clear is not None:
        clipped &= clear
    # (a neutral dot on such a face, more so: weaker steps, and it may look smaller still)
    lenient = clipped & neutral if neutral is not None else np.zeros_like(clipped)
    min_step = np.where(lenient, params.neutral_clipped_dot_step, np.where(clipped, params.clipped_dot_step, 4.0))
    shrink = np.where(lenient, params.neutral_clipped_dot_shrink,
                      np.where(clipped, max(params.clipped_dot_shrink, 0.4), 0.4))
    ok = (strength > min_step[:, None]) & (np.abs(r_edge - r_dot) < 0.09)
    return r_edge, ok, clipped, shrink, lenient


def _rim_edges(
    vals: np.ndarray,
    u: np.ndarray,
    starts: np.ndarray,
    is_black: np.ndarray,
    geom: CameraGeometry,
    params: DiscParams,
) -> tuple[np.ndarray, np.ndarray, float, np.ndarray]:
    """The top face's rim on each ray of the profiles `vals` (N, rays, RIM_RADII) from `starts`:
    radius (N, R), which rays to fit it on (N, R), the rim's radius on the board plane, and on
    which rays a rim step is seen where the side shows (N, R; `_refit_rims`).
    The disc's side shows as a band outside the rim on the camera's side (its colours are
    unknown: half white, half black on a two-faced disc), so only rays where that band is
    thinner than `max_band_board` are used: there the rim borders the plate (or a neighbour),
    dark disc brighter outward, bright disc darker outward."""
    t = params.thickness_board
    delta = geom.thickness_shift(starts, t)  # (N, 2)
    r_top = 0.5 * params.disc_diameter_board * geom.height_board / max(geom.height_board - t, 1e-6)
    polarity = np.where(is_black, 1.0, -1.0)
    # (the rim nearest the top face's predicted circle, not the strongest step on the ray: a
    # white face on light paper steps down less than a dark neighbour's rim or its shadow
    # just beyond it do)
    r_edge, strength = _edge_positions(vals, RIM_RADII, polarity, near=(r_top, params.min_rim_step))
    band = -(delta @ u.T)  # width of the visible side outside the rim
    seen = (strength > params.min_rim_step) & (np.abs(r_edge - r_top) < 0.08)
    return r_edge, seen & (band < params.max_band_board), r_top, seen & (band >= params.max_band_board)


def _whole_outline(
    rim_edges: tuple[np.ndarray, np.ndarray, float, np.ndarray],
    is_black: np.ndarray,
    band: np.ndarray,
    r_base: float,
    light_rim: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The rim steps of the whole outline, for `_refit_rims`: each ray's step moved to where the
    top face's rim is (N, R), and the rays where the side shows that may add theirs (N, R).
    `band` (N, R): the visible side's width outside the top face's rim; `r_base`: the disc's
    radius on the board; `light_rim` (N, R): where the board beyond is lighter than a light
    face's side (its first step down outward is its rim)."""
    r_edge, _, r_top, near_ok = rim_edges
    # (a dark face's step where the side shows, moved to where the top face's rim is)
    edge = np.where(is_black[:, None], r_edge - np.maximum(band, 0.0) + (r_top - r_base), r_edge)
    return edge, near_ok & (is_black[:, None] | light_rim)


def _refit_rims(
    starts: np.ndarray,
    u: np.ndarray,
    rim_edges: tuple[np.ndarray, np.ndarray, float, np.ndarray],
    rims_fit: tuple[np.ndarray, ...],
    whole: tuple[np.ndarray, np.ndarray],
    whole_fit: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> tuple[np.ndarray, ...]:
    """The rim fits again on all the rays that show the disc's outline, not only where no side
    shows (`whole`: `_whole_outline`'s steps and rays). A lit top face is brighter than its own
    side in the shade below it: a light face's rim is the first step down outward on the
    camera's side too, on the rays where the board beyond is lighter than that side. A dark
    face's side is as dark as the face: there the step up outward is the side's foot on the
    board, a band further out. Those rays are added where their step lies within
    `RIM_REFIT_BOARD` of where a first fit predicts it (its own uncertainty; on a two-coloured
    side its halves meet half a band out): the free-radius fit of every ray that shows a step
    (`whole_fit`: its centres, success, radii, made in `_fit_dots_and_rims`' batch), else the
    fit on the rays where no side shows (`rims_fit`). A fit from the whole outline is not pulled
    towards the far side as one from half of it is when the piece is not quite round. Returns
    `rims_fit` with the centres and sigmas of the successful refits replaced (success and cover,
    which the tests of a disc use, stay the first fit's)."""
    _, far_ok, r_top, _ = rim_edges
    c1, sig1, ok1, cover1 = rims_fit
    i = np.flatnonzero(ok1)
    if len(i) == 0:
        return rims_fit
    # (first on every ray that shows a step, its radius free: a rim drawn as a dark line on a
    # light face (a draughts man's) is found at the line's inner edge all round, which puts a
    # fit of the far half at the known radius a line's width towards the camera; then on the
    # rays that agree with that fit)
    edge, near = whole[0][i], whole[1][i]
    c0, ok0, r0 = (a[i] for a in whole_fit)
    pred = np.where(ok0[:, None], r0[:, None] + (c0 - starts[i]) @ u.T, r_top + (c1[i] - starts[i]) @ u.T)
    use = far_ok[i] | (near & (np.abs(edge - pred) < RIM_REFIT_BOARD))
    c2, sig2, ok2, _, _ = _fit_circles(starts[i], u, edge, use, r_top, True)
    c, sig = c1.copy(), sig1.copy()
    c[i[ok2]], sig[i[ok2]] = c2[ok2], sig2[ok2]
    return c, sig, ok1, cover1


def _fit_dots_and_rims(
    starts: np.ndarray,
    u: np.ndarray,
    dot_edges: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    rim_edges: tuple[np.ndarray, np.ndarray, float, np.ndarray],
    whole: tuple[np.ndarray, np.ndarray],
    params: DiscParams,
) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
    """The circle fits of every start in one batch (a fit's cost is mostly its fixed share: one
    call for all three). Dots (free radius): centres (= top face centres, projected on the board
    plane), 1-sigma, success, the share of rays that agree with the circle, whether the face is
    clipped. Rims (radius known): centres, 1-sigma, success, share of the rays on the circle.
    The whole outline (`whole`: `_whole_outline`; free radius, on the rays where no side shows
    and those it adds): centres, success, radii (`_refit_rims`)."""
    n = len(starts)
    r_dot = params.dot_diameter_board / 2
    d_edge, d_ok, clipped, d_tol, lenient = dot_edges
    r_edge, r_ok, r_top, _ = rim_edges
    w_edge, w_near = whole
    c, sig, good, cover, radius = _fit_circles(
        np.concatenate([starts, starts, starts]), u, np.concatenate([d_edge, r_edge, w_edge]),
        np.concatenate([d_ok, r_ok, r_ok | w_near]),
        np.concatenate([np.full(n, r_dot), np.full(n, r_top), np.full(n, r_top)]),
        np.concatenate([np.zeros(n, bool), np.ones(n, bool), np.zeros(n, bool)]),
        radius_tolerance=np.concatenate([d_tol, np.full(n, 0.25), np.full(n, 0.25)]))
    # share of the rays whose rim agrees with one circle: all around for a real dot; rays
    # across a drawn line find its edges at 0.03 / sin(angle), which no circle fits (this
    # decides dot-only candidates: on a clipped face the notch between two touching discs looks
    # like a small dot, so the radius may shrink less there)
    shrink = np.where(lenient, params.neutral_clipped_dot_shrink, np.where(clipped, params.clipped_dot_only_shrink, 0.3))
    d_cover = np.where((radius[:n] > (1 - shrink) * r_dot) & (radius[:n] < 1.3 * r_dot), cover[:n], 0.0)
    dots = (c[:n], sig[:n], good[:n], d_cover, clipped.copy())
    rims = (c[n:2 * n], sig[n:2 * n], good[n:2 * n], cover[n:2 * n])
    return dots, rims, (c[2 * n:], good[2 * n:], radius[2 * n:])


# --------------------------------------------------------------------------------------------
# discs of any colour (issue 21: real pieces)
# --------------------------------------------------------------------------------------------

#: the board's local colour is the median over a square of this side (board units): discs cover
#: less than half of it even where they crowd, and a chessboard's squares are both in it
COLOUR_BOARD_WINDOW_BOARD = 5.0
#: radii (board units) of a coloured candidate's face (inside the rim, past a chip's rim marks
#: and a draughts man's ridges) and of the board just beyond its rim (past its side band)
COLOUR_FACE_BOARD = (0.20, 0.38)
COLOUR_BEYOND_BOARD = (0.62, 0.76)
#: ... that ring's inner half (radii up to this) and outer half (`_coloured_outline`)
COLOUR_BEYOND_SPLIT_BOARD = 0.69
#: the rim a coloured disc shows lies within this of the radius the board's scale predicts
#: (board units: the side band of a disc 0.3 diameters high seen 45 degrees off the vertical,
#: 0.1 on the camera's side, averaged over the circle, and a piece's own size against the set's)
COLOUR_RIM_TOLERANCE_BOARD = 0.08
#: ... on this share of the rays at least (`_coloured_outline`)
COLOUR_MIN_CLOSURE = 0.75
#: ... and a circle fits its crossings to this rms (board units: the rims of draughts men
#: 0.005-0.02 on the real photos, of chips up to 0.044, their moulded ring and rim marks crossing
#: the rim in colour, and a carrom coin 15 px across 0.03-0.05; a bowl's squarish rim, a card's
#: corner, the corner of a felt cell fit 0.027-0.044 too: the face's, the outline's and the
#: board's tests refuse them)
COLOUR_RIM_RMS_BOARD = 0.045


def detect_discs(
    frame: np.ndarray,
    board: BoardFit,
    params: DiscParams = DiscParams(),
    *,
    intrinsics: Intrinsics | None = None,
    tables: DiscTables | None = None,
    name_colours: bool = True,
) -> list[DiscReading]:
    """Every disc on the Dition board, sorted by (y, x). Without intrinsics, the lens model
    estimated with the board (vision.lens, BoardFit.extra["intrinsics"]) is used if any.
    `tables`: the board's `DiscTables` (built here when not given, or of another board).

    Black and white discs are read by their outline, face and dot against the board's
    brightness; discs of a colour of their own (a red draughts man, a green chip, a white chip
    on yellow wood) besides, by their outline and face in the colour-distance to the board
    (`_coloured_discs`): such a disc is reported as the darker or the lighter colour by its
    face's brightness against the board right beside it. In a colour frame each reading's `seen`
    names the colour its face shows (`vision.colour_names`: a red man is "red"); with
    `name_colours=False` (the referee loop, which needs only the player colour) `seen` stays None
    and its cost (~2 ms for 60 discs) is saved."""
    intrinsics = board_intrinsics(board, intrinsics)
    check_frame(frame)
    frame_size = (frame.shape[1], frame.shape[0])
    if tables is None or not tables.matches(board, frame_size, params, intrinsics):
        tables = DiscTables(board, frame_size, params, intrinsics)
    if frame.ndim != 3:
        return _detect_neutral_discs(frame, board, params, intrinsics=intrinsics, tables=tables)
    once = _RectifiedOnce(tables, frame)  # (both passes read the same rectified board)
    readings = _detect_neutral_discs(frame, board, params, intrinsics=intrinsics, tables=once)  # type: ignore[arg-type]
    taken = np.array([r.centre_board for r in readings], dtype=np.float64).reshape(-1, 2)
    centres, black, conf, sigma = _coloured_discs(once.rectify(frame), taken, tables.geometry, board.size_board,
                                                  params)
    if len(centres):
        px = board_to_image(centres, board, intrinsics)
        readings = readings + [DiscReading((cx, cy), (ix, iy), "black" if b else "white", cf, sg)
                               for (cx, cy), (ix, iy), b, cf, sg in zip(centres.tolist(), px.tolist(),
                                                                        black.tolist(), conf.tolist(), sigma.tolist())]
        readings = sorted(readings, key=lambda r: (r.centre_board[1], r.centre_board[0]))
    if not name_colours:
        return readings
    return _with_seen_colours(frame, board, readings, tables.geometry, params, intrinsics)


def _with_seen_colours(frame: np.ndarray, board: BoardFit, readings: list[DiscReading], geom: CameraGeometry,
                       params: DiscParams, intrinsics: Intrinsics | None) -> list[DiscReading]:
    """The readings with the colour each face shows the camera (`vision.colour_names`), its top
    face `thickness_board` above where it touches the board."""
    if not readings:
        return readings
    centres = np.array([r.centre_board for r in readings], dtype=np.float64)
    tops = centres + geom.thickness_shift(centres, params.thickness_board)
    seen = seen_colours(frame, board, centres, [r.colour for r in readings], tops_board=tops,
                        diameter_board=params.disc_diameter_board, intrinsics=intrinsics)
    return [DiscReading(r.centre_board, r.centre_px, r.colour, r.confidence, r.sigma_board, sn)
            for r, sn in zip(readings, seen)]


class _RectifiedOnce:
    """A board's `DiscTables` with one frame's rectification made once (`detect_discs`'s two
    passes share it); everything else is the tables'."""

    def __init__(self, tables: DiscTables, frame: np.ndarray) -> None:
        self._tables, self._frame, self._rect = tables, frame, tables.rectify(frame)

    def rectify(self, frame: np.ndarray) -> np.ndarray:
        return self._rect if frame is self._frame else self._tables.rectify(frame)

    def __getattr__(self, name: str):
        return getattr(self._tables, name)


class _ColourPlanes:
    """The rectified board (uint8 BGR) in the planes `_coloured_discs` reads, in YCrCb's 8-bit
    levels: `dist`, each pixel's chroma distance to the board's local colour (float32, Cr and
    Cb); `noise`, the noise `dist` carries (the larger of the Cr and Cb channels' robust sigmas,
    floor `min_noise`); and, made on first use (only for the candidates that reach the tests
    that read them, `_coloured_outline`: none on most frames), `light`, each pixel's brightness
    Y, and `chroma`, its own chroma (the distance to the neutral grey of its brightness), float32.
    A draughts man's red, a chip's green or a white chip's neutral on yellow wood stand out in
    `dist`; a chessboard's grey and off-white squares, both neutral, do not, and a board's grain
    and light fall-off change its chroma slowly, within the window's median. (YCrCb: a linear
    transform, a tenth of Lab's cost.)"""

    def __init__(self, rect_bgr: np.ndarray, params: DiscParams) -> None:
        import cv2

        self._ycc = ycc = cv2.cvtColor(rect_bgr, cv2.COLOR_BGR2YCrCb)
        s = params.scale_px_per_unit
        small = cv2.resize(ycc, None, fx=0.25, fy=0.25, interpolation=cv2.INTER_AREA)
        ks = max(3, round(COLOUR_BOARD_WINDOW_BOARD * s / 4) | 1)
        # (the board's Cr and Cb only: its brightness is not asked)
        size = (ycc.shape[1], ycc.shape[0])
        cr0, cb0 = (cv2.resize(cv2.medianBlur(cv2.extractChannel(small, c), ks), size, interpolation=cv2.INTER_LINEAR)
                    for c in (1, 2))
        self._cr, self._cb = cv2.extractChannel(ycc, 1), cv2.extractChannel(ycc, 2)
        self.dist: np.ndarray = _chroma_distance(self._cr, self._cb, cr0, cb0)
        self.noise = max(float(np.max(_frame_noise(ycc, channels=(1, 2)))), params.min_noise)

    @functools.cached_property
    def light(self) -> np.ndarray:
        import cv2

        return cv2.extractChannel(self._ycc, 0).astype(np.float32)

    @functools.cached_property
    def chroma(self) -> np.ndarray:
        grey = np.full_like(self._cr, 128)
        return _chroma_distance(self._cr, self._cb, grey, grey)


def _chroma_distance(cr: np.ndarray, cb: np.ndarray, cr0: np.ndarray, cb0: np.ndarray) -> np.ndarray:
    """Each pixel's distance in (Cr, Cb) (uint8 planes) to (cr0, cb0), float32. The same bits
    wherever the arrays lie in memory (the differences' squares and their sum are whole numbers,
    exact in float32, and numpy's square root is rounded exactly; cv2.magnitude's optimised path
    rounds some elements by its buffers' alignment: the colour pass's readings moved by ~1e-9
    from one call to the next, as `_strong_gradients`' did)."""
    import cv2

    d2 = cv2.subtract(cr, cr0, dtype=cv2.CV_32F)
    d2 *= d2
    db = cv2.subtract(cb, cb0, dtype=cv2.CV_32F)
    db *= db
    d2 += db
    return np.sqrt(d2, out=d2)


def _near_points(shape: tuple[int, ...], points_px: np.ndarray, radius_px: float) -> np.ndarray:
    """(h, w) bool: the pixels surely closer than `radius_px` to one of `points_px` (N, 2) x, y:
    the whole-pixel offsets within `radius_px` - sqrt(1/2) of each point's nearest pixel, which
    lies within sqrt(1/2) of it (points off the image are left out)."""
    h, w = shape[:2]
    r = radius_px - math.sqrt(0.5) - 1e-6
    xy = np.rint(np.asarray(points_px, np.float64).reshape(-1, 2)).astype(np.intp)
    xy = xy[(xy[:, 0] >= 0) & (xy[:, 0] < w) & (xy[:, 1] >= 0) & (xy[:, 1] < h)]
    if r < 0 or len(xy) == 0:
        return np.zeros((h, w), bool)
    reach = math.floor(r)
    wp = w + 2 * reach
    near = np.zeros((h + 2 * reach) * wp, bool)
    near[((xy[:, 1] + reach) * wp + xy[:, 0] + reach)[:, None] + _disc_offsets(r, wp)[None, :]] = True
    return near.reshape(h + 2 * reach, wp)[reach:reach + h, reach:reach + w]


@functools.lru_cache(maxsize=8)
def _face_minus_ring_kernel(scale_px_per_unit: float) -> np.ndarray:
    """The coloured candidates' template at `scale_px_per_unit` (float32, odd square, read only):
    the mean over the face (`COLOUR_FACE_BOARD`'s outer radius) minus the mean over the ring
    beyond the rim (`COLOUR_BEYOND_BOARD`)."""
    sh = scale_px_per_unit
    rad = math.ceil(COLOUR_BEYOND_BOARD[1] * sh)
    yy, xx = np.mgrid[-rad:rad + 1, -rad:rad + 1]
    rr = np.hypot(xx, yy) / sh
    face_k = (rr <= COLOUR_FACE_BOARD[1]).astype(np.float32)
    ring_k = ((rr >= COLOUR_BEYOND_BOARD[0]) & (rr <= COLOUR_BEYOND_BOARD[1])).astype(np.float32)
    kernel = face_k / face_k.sum() - ring_k / ring_k.sum()
    kernel.flags.writeable = False
    return kernel


def _coloured_discs(rect_bgr: np.ndarray, taken_board: np.ndarray, geom: CameraGeometry, size_board: float,
                    params: DiscParams) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Discs whose face differs from the board in colour, away from the discs already read
    (`taken_board` (N, 2)): (centres_board (K, 2) where each touches the board, black (K,) bool:
    a face darker than the board beside it, confidence (K,), sigma_board (K,)).

    What a disc shows whatever its colour, in the chroma distance to the board (`_ColourPlanes`):
    a face that differs from the board by `face_snr` noise sigmas and varies across the face less
    than `max_face_spread` of that; an outline closed on `min_closure` of 24 rays (the face's
    median on each ray above the board's just beyond the rim by `outline_snr` noise sigmas and
    half the face's contrast), and round at the radius the board's scale predicts: the rim (where
    each such ray crosses halfway) fits a circle within `COLOUR_RIM_TOLERANCE_BOARD` of it, to
    `COLOUR_RIM_RMS_BOARD`."""
    import cv2

    s, m = params.scale_px_per_unit, params.margin_board
    planes = _ColourPlanes(rect_bgr, params)
    noise = planes.noise
    # candidates: the face's mean distance over the ring beyond the rim's (a box of two disc
    # templates, at half the scale: 8 px a diameter still resolves a 0.38-radius face)
    f = 0.5
    half = cv2.resize(planes.dist, None, fx=f, fy=f, interpolation=cv2.INTER_AREA)
    sh = s * f
    resp = cv2.filter2D(half, cv2.CV_32F, _face_minus_ring_kernel(sh), borderType=cv2.BORDER_REPLICATE)
    # (a face that stands out from the ring around it by the least contrast that counts)
    thr = params.face_snr * noise
    nms = round(params.min_separation_board * sh) | 1
    peak = (resp >= thr) & (resp >= cv2.dilate(resp, np.ones((nms, nms), np.uint8)))
    if len(taken_board):
        # (no peak within `min_separation_board` of a disc read is a candidate, below: those
        # surely that near are left out here already, most of a crowded board's)
        peak &= ~_near_points(peak.shape, (taken_board + m + 0.5 / s) * sh - 0.5, params.min_separation_board * sh)
    py, px = np.nonzero(peak)
    empty = (np.zeros((0, 2)), np.zeros(0, bool), np.zeros(0), np.zeros(0))
    if len(px) == 0:
        return empty
    cands_board = (np.stack([px, py], axis=1) + 0.5) / sh - 0.5 / s - m
    # (only where no disc was read, and with its whole face on the playing area: at the board's
    # edge against the table the board's local colour is half the table's, and the board
    # beside the edge differs from it as a face does, along a straight outline that a circle
    # fits to 0.036-0.044 over the rays it closes on)
    tol = -0.5 * params.disc_diameter_board
    ok = np.all((cands_board > -tol) & (cands_board < size_board + tol), axis=1)
    if len(taken_board):
        from scipy.spatial import cKDTree

        d_taken, _ = cKDTree(taken_board).query(cands_board)
        ok &= d_taken >= params.min_separation_board
    cands_board = cands_board[ok]
    if len(cands_board) == 0:
        return empty
    # verify each at its peak, then those accepted again at the centre their rim's circle gives
    accepted, centres_top, *_ = _coloured_outline(planes, cands_board, params)
    cands_board = centres_top[accepted]
    if len(cands_board) == 0:
        return empty
    accepted, centres_top, black, closure, contrast, rms, _ = _coloured_outline(planes, cands_board, params,
                                                                                centred=True)
    cands_board = np.where(accepted[:, None], centres_top, cands_board)
    keep = accepted & np.all((cands_board > -tol) & (cands_board < size_board + tol), axis=1)
    if len(taken_board) and keep.any():
        from scipy.spatial import cKDTree

        d_taken, _ = cKDTree(taken_board).query(cands_board)
        # (its face ring clear of every disc read: white discs around a gap on warm paper,
        # 0.75-0.82 from it, make a light "face" there (kit's table, seed 1 frame 8, plain and
        # defocused); touching discs lie a diameter apart)
        keep &= d_taken >= 0.5 * params.disc_diameter_board + COLOUR_FACE_BOARD[1]
    idx = np.flatnonzero(keep)
    if len(idx) == 0:
        return empty
    # (two readings closer than discs can lie are one: the more closed outline stays)
    idx = _non_overlapping(cands_board, idx, closure + 1e-3 * contrast, params.min_separation_board)
    top = cands_board[idx]
    centre = top - geom.thickness_shift(top, params.thickness_board)
    conf = np.clip(0.45 + 0.55 * closure[idx], 0.0, 1.0)
    n_rays = params.n_rays
    sigma = np.sqrt(rms[idx] ** 2 / (closure[idx] * n_rays) + (0.003 if not geom.estimated else 0.008) ** 2)
    return centre, black[idx], conf, sigma


def _coloured_outline(planes: _ColourPlanes, cands_board: np.ndarray, params: DiscParams,
                      centred: bool = False) -> tuple[np.ndarray, ...]:
    """For each candidate (board units, top face): (accepted, circle centre (N, 2), black,
    closure, contrast, rim rms) of `_coloured_discs`'s tests, on 24 rays in D sampled every 0.02
    diameters out to the board beyond the rim. `centred`: the candidates lie at the centres their
    rims' circles gave (the second pass), where the face's fall-off must have ended beyond the rim."""
    import cv2

    s, m = params.scale_px_per_unit, params.margin_board
    dist, noise = planes.dist, planes.noise
    n_rays = params.n_rays
    ang = np.arange(n_rays) * (2 * math.pi / n_rays)
    u = np.stack([np.cos(ang), np.sin(ang)], axis=1)  # (R, 2)
    radii = np.arange(0.10, COLOUR_BEYOND_BOARD[1] + 1e-9, 0.02)
    # (rectified pixels: each candidate's plus the rays' offsets, float32 as remap takes them)
    off = (radii[None, :, None] * u[:, None, :] * s).reshape(-1, 2).astype(np.float32)
    at = ((cands_board + m) * s).astype(np.float32)
    mx = at[:, :1] + off[None, :, 0]
    my = at[:, 1:] + off[None, :, 1]
    shape = (len(cands_board), n_rays, len(radii))
    n_all = len(cands_board)
    prof = cv2.remap(dist, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE).reshape(shape)
    in_face = (radii >= COLOUR_FACE_BOARD[0]) & (radii <= COLOUR_FACE_BOARD[1])
    beyond = radii >= COLOUR_BEYOND_BOARD[0]
    inner = np.median(prof[..., in_face], axis=2)  # (N, R)
    outer = np.median(prof[..., beyond], axis=2)
    face_d = np.median(inner, axis=1)
    contrast = face_d - np.median(outer, axis=1)
    # (the face is one surface: its rays' medians spread less than `max_face_spread` of its
    # contrast, robust sigma)
    spread = 1.4826 * np.median(np.abs(inner - face_d[:, None]), axis=1)
    step = inner - outer
    ray_ok = step >= np.maximum(params.outline_snr * noise, 0.5 * contrast)[:, None]
    closure_all, contrast_all = ray_ok.mean(axis=1), contrast
    # (the tests below only for the candidates that pass these: most peaks, on grain and print,
    # do not)
    alive = np.flatnonzero((closure_all >= COLOUR_MIN_CLOSURE) & (contrast >= params.face_snr * noise)
                           & (spread <= params.max_face_spread * contrast))
    if len(alive) == 0:
        return (np.zeros(n_all, bool), np.full((n_all, 2), np.nan), np.zeros(n_all, bool), closure_all, contrast_all,
                np.full(n_all, np.inf), np.zeros(n_all, bool))
    prof, inner, outer, contrast, ray_ok = prof[alive], inner[alive], outer[alive], contrast[alive], ray_ok[alive]
    cands_board = cands_board[alive]
    mx, my, shape = mx[alive], my[alive], (len(alive), *shape[1:])
    lprof = cv2.remap(planes.light, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE).reshape(shape)
    cprof = cv2.remap(planes.chroma, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE).reshape(shape)
    # the rim on each such ray: where D first falls below halfway between face and board
    # outward from the face
    mid = 0.5 * (inner + outer)
    start = int(np.argmax(radii >= COLOUR_FACE_BOARD[1] - 1e-9))
    below = prof[..., start:] < mid[..., None]
    k = np.argmax(below, axis=2) + start  # first index below
    found = below.any(axis=2) & ray_ok & (k > start)
    k = np.clip(k, start + 1, len(radii) - 1)
    a = np.take_along_axis(prof, (k - 1)[..., None], axis=2)[..., 0]
    b = np.take_along_axis(prof, k[..., None], axis=2)[..., 0]
    t = np.clip((a - mid) / np.maximum(a - b, 1e-6), 0.0, 1.0)
    r_edge = radii[k - 1] + t * (radii[1] - radii[0])
    # a circle through those rim points (algebraic least squares, per candidate)
    pts_b = r_edge[..., None] * u[None]  # (N, R, 2) relative to the candidate
    w = found.astype(np.float64)
    n_found = w.sum(axis=1)
    A = np.stack([pts_b[..., 0], pts_b[..., 1], np.ones_like(r_edge)], axis=2) * w[..., None]
    y = (pts_b ** 2).sum(axis=2) * w
    AtA = np.einsum("nri,nrj->nij", A, A) + 1e-9 * np.eye(3)
    Aty = np.einsum("nri,nr->ni", A, y)
    sol = np.linalg.solve(AtA, Aty[..., None])[..., 0]
    cx, cy = sol[:, 0] / 2, sol[:, 1] / 2
    r_fit = np.sqrt(np.maximum(sol[:, 2] + cx**2 + cy**2, 0.0))
    resid = np.hypot(pts_b[..., 0] - cx[:, None], pts_b[..., 1] - cy[:, None]) - r_fit[:, None]
    rms = np.sqrt((resid**2 * w).sum(axis=1) / np.maximum(n_found, 1))
    r_disc = 0.5 * params.disc_diameter_board
    # the face's lightness and the board's just beyond its rim (the reported colour: the face
    # darker than that board is the darker player's)
    face_l = np.median(lprof[..., in_face].reshape(len(cands_board), -1), axis=1)
    board_l = np.median(lprof[..., beyond].reshape(len(cands_board), -1), axis=1)
    # (what lies beyond the rim is one board: its lightness varies across the rays less than
    # `max_face_spread` of the face's contrast (robust sigma; the board beyond the men, chips and
    # coins 1-12 levels, the star printed around a carrom board's red centre circle 36-50 against
    # a face 34-59 off the board's colour), and its colour is nearer the board's than the face's
    # by twice (the rays' median: a patch at the board's corner has the frame beyond on a
    # quarter of the rays, 18 off the board's colour against a face 12 further)
    beyond_l = np.median(lprof[..., beyond], axis=2)  # (N, R)
    beyond_spread = 1.4826 * np.median(np.abs(beyond_l - board_l[:, None]), axis=1)
    board_beyond = ((beyond_spread <= params.max_face_spread * contrast)
                    & (np.median(outer, axis=1) <= 0.5 * contrast))
    # (and the face's fall-off has ended there: a disc is of the size the board's scale predicts,
    # its rim at 0.5 and its side band past by 0.62, so the inner half of that ring is no nearer
    # the face than its outer half by the least step an outline shows (`outline_snr` noise
    # sigmas, a bound on a median of medians). A carrom striker, 1.3 diameters, a light disc with
    # a picture, still falls there by 7.6 sigmas, its rim at 0.65 and its halfway crossing pulled
    # in to 0.55 by that ring; the men, chips and coins of the real photos by 2.9 at most)
    # (asked at the centre the rim's circle gives, `centred`: from a peak of the face's response
    # off the centre the ring takes in the face's fall-off on one side; asked there too, 1 of the
    # 95 draughts men of the real photos was lost)
    if centred:
        near_half = np.median(np.median(prof[..., beyond & (radii <= COLOUR_BEYOND_SPLIT_BOARD)], axis=2), axis=1)
        far_half = np.median(np.median(prof[..., radii > COLOUR_BEYOND_SPLIT_BOARD], axis=2), axis=1)
        board_beyond &= near_half - far_half <= params.outline_snr * noise
    # (read by its outline and face alone, with no dot and no black-or-white rule to speak for
    # it, a disc of its own colour closes its outline on three quarters of the rays, as a clipped
    # face's outline in colour must (`_clipped_outline`): a patch of felt at the board's edge
    # against the table closes 0.58-0.67; the chips and men read on the real photos 0.79-1)
    accepted = ((n_found >= 0.5 * params.min_closure * n_rays)
                & (np.abs(r_fit - r_disc) <= COLOUR_RIM_TOLERANCE_BOARD) & (rms <= COLOUR_RIM_RMS_BOARD)
                & board_beyond)
    # (a colour of its own: a face with more chroma than the board beyond it, or a light face;
    # a dark neutral face is a black disc, read or refused by the rules for black and white
    # discs (`_detect_neutral_discs`): its distance to warm paper's colour is the paper's own
    # chroma, and a printed dark hexagon as large as a disc has it too)
    face_c = np.median(cprof[..., in_face].reshape(len(cands_board), -1), axis=1)
    board_c = np.median(cprof[..., beyond].reshape(len(cands_board), -1), axis=1)
    own = face_c > board_c
    # (a face with no chroma of its own is a light disc only by its lightness: it is lighter than
    # the board beyond its rim by the least contrast that counts, in grey levels, as a face
    # differs from the board under it (`min_face_contrast`, `face_snr` noise sigmas). A lighter
    # streak of wood grain, its colour as near the board's, closes a round outline there in the
    # chroma distance at 4.6 noise sigmas, 8 levels lighter than the wood beyond (real photos,
    # poker table); the light chips and men of the real photos all have chroma of their own)
    light_enough = face_l - board_l >= max(params.min_face_contrast, params.face_snr * noise)
    accepted &= own | light_enough
    # (and the board beyond the rim not clipped at the sensor's white: clipped paper has no
    # chroma and no noise, the thresholds fall to the noise floor, and any print on it stands out
    # in colour: a printed ring of 0.7 diameters on paper clipped in a hot spot, its ink for a
    # face, read as a black disc (decorated board, seed 1 frame 18). A piece there is left to the
    # black-and-white reader, whose rules for clipped paper are made for it)
    accepted &= board_l < params.clip_level
    ok_all, centres, black, rms_all, own_all = (np.zeros(n_all, bool), np.full((n_all, 2), np.nan),
                                                np.zeros(n_all, bool), np.full(n_all, np.inf), np.zeros(n_all, bool))
    ok_all[alive], centres[alive], black[alive], rms_all[alive], own_all[alive] = (
        accepted, cands_board + np.stack([cx, cy], axis=1), face_l < board_l, rms, own)
    return ok_all, centres, black, closure_all, contrast_all, rms_all, own_all


if __name__ == "__main__":  # python -m vision.dition IMAGE  (board from its lines or markers)
    import cv2

    from vision.board import find_board

    img = cv2.imread(sys.argv[1])
    fit = find_board(img)
    for d in detect_discs(img, fit):
        print(d.to_dict())
