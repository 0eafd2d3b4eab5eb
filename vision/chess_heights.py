"""Heights of the stacks of men on a chessboard, through a camera model (issue 19).

Stage function: `stack_heights(frame, board, cells, *, intrinsics=None, thickness=0.12,
tops=None, params=StackHeightParams()) -> StackHeights`, for the occupied `cells` a tops reader
found (`tops`: its colour per cell, for grouping the tops).

Why it works. Seen from the camera's centre, the plane `z` above the board maps onto the board
plane by a homothety about the camera's nadir of ratio s = Z / (Z - z) (Z: the camera's height
above the board). So in the board plane (the frame rectified through the board's fit and lens),
a stack's top face, a circle of the men's radius R at height k t (t: one man's thickness), is an
exact circle of radius R s centred at nadir + (centre - nadir) s. Per stack:

1. radial colour profiles in the board plane around the top the tops reader expects;
2. on the top's far side and flanks (away from the nadir) the top face is the stack's outline
   against the squares: along each such direction, the first place from which the profile is
   nearer the square's own colour (`_board_colours`, by the squares' parity) than the top's
   for 0.05 squares (past a chip's printed ring; 1.5 px where the profile does not stay so
   that far), to a fraction of a sample at the steepest colour change within 3 samples of
   it (a shadow or the lamp beside the man moves where the top's and the square's colours
   cross, not the blurred step's centre); where a short break of the top's colour lies
   within 0.1 R inside that (a lower man's crescent sticking out past the top), a second
   reading there, the consensus taking the one that agrees. (The near side is not
   used: there the side band lies between the top's rim and the board, and a circle through
   every side's strongest edges, as this module once fitted, is as often the outline of top
   and band together: larger, nearer the nadir, a height too low.)
   The circle is the one most of those points agree with (`_consensus_circle`: circles
   through three points spread over the side, the one with the most points within 0.4 px of
   it, refitted on them): a lower man's crescent sticking out past the top, a chip's stripe or
   printed ring and a shade put whole arcs off the rim, which a least-squares fit (even one
   dropping points three sigmas off) follows; the consensus does not. (A rim read again in a
   window about that circle, by the area under the board-likeness, was tried and dropped: the
   top's rim line and the square's colour move it by up to a pixel, and it made the heights
   worse.)
   Then the centre from the top's own pattern where it has one (`_centred_on_pattern`): a
   draughts man's embossed rings, a chip's printed ring are circles about the top's centre seen
   all around; each direction's change profile (0.2-0.93 of the radius) is matched against the
   median of all, a centre off by d shifting direction e by d . e. They give the centre to
   ~0.02 px where the far side's rim alone put it 0.2-0.3 px off, and since a half circle's
   radius moves with its centre (it is ~2 times as uncertain as about a known centre), the
   radius is then the median distance of the rim's points from that centre: its scatter
   within a group of tops halves (0.19 -> 0.09 px draughts, 0.23 -> 0.10 px chips, measured
   against the truth). A plain counter has no pattern (its directions disagree): its rim's
   own circle stands. A circle that no stack of 1..max men of the frame's radius (step 3's
   pooled R) has, a lower man's crescent, a king's crown or a neighbour's rim taken for the
   top's (2-8 px off on ~14 % of the tops, a third of the wrong heights), is sought again among
   the same rim points with its radius within what those stacks allow, and re-centred.
3. the frame's men radius R: the radius over the ratio s the centre's displacement gives, pooled
   with weights by how far each top lies from the nadir (the displacement's resolution); then
   per group of tops (one colour on squares of one parity: a rim line darker than the top
   against a light square reads the rim up to a pixel inside, alike for the whole group) the R
   that best explains the group's rims as whole pieces with their displacements
   (`_group_radii`); the colour is the tops reader's when given (`tops`), else the top's
   measured colour;
4. per stack, a height k = Z (1 - 1 / s) / t from the radius (s = r / R) and one from the
   displacement (a man's off-centre placement is its noise: measured across the nadir
   direction, where no height moves a top), how well the radius tells it measured on the frame
   (the two disagree by both errors; no less than the stack's rim fit and a group's rim scatter
   about its common offset say, `rim_scatter_px`), a radius more than three joint sigmas off is
   a wrong rim;
   the two combined by inverse variance, and the sigma with them.

What it reaches (`benchmarks/bench_vision_chess.py`): see the README's Figures. What limits it:
the displacement alone cannot reach far (a man lies up to 0.03 squares off its square's centre
as sigma, one piece moves a top 3 squares from the nadir by 0.035); the radius grows by only
1.2 % a piece (~0.45 px at 100 px a square), and a rim's radius is read off by the scene itself
(rim lines, lower men's crescents, shades: the same scene with fresh noise moves it by only
0.05 px): plain counters (no rings to centre them) and rims of little contrast (black on dark
wood, red on red) stay 0.5-1.5 px off; with the true top circles this combination gives 94 %
exact, 97 % with the true men's radius too. The chessboard finder's homography puts a top
0.15 px off at the median, 1.3 px at the 95th percentile (docs/vision-chessboard.md).
Tried and not kept: the height from the scale of each top's radial pattern against the median
pattern of the tops of its colour (to ~0.3 of a piece on one frame of draughts with the true
centres, but no better than the rims over frames, +1 point, at ten times the time; the centre
from the pattern's shifts is what step 2 keeps of it).

Without a calibration the camera is the one the chessboard finder estimated from the board's
own grid (`vision.chessboard.camera_from_grid`): its focal length sets Z, so every height by the
same factor (the grid's focal length is 5-10 % off on a tilted view, its principal point taken
at the image centre, and up to twice off seen head on). Step 3 then fits that factor together
with the groups' radii: the factor and radii that best explain the tops as whole pieces,
weighed against the grid's focal sigma (as `vision.domination.height_scale` does for the kit),
and the heights' sigmas carry the factor's own: the spread of the tops' likelihood about it
under the focal length's whole sigma, its principal point's share included (the grid's own
sigma takes the image centre as the principal point; the factor stays chosen against that).
The focal length's error is the camera's, not the frame's (two frames of one table were off by
the same 1-38 %): pooling it over frames of one camera would not remove it.

Arrays: points in board units `(N, 2) float64 (x, y)` (DESIGN.md's Domination board frame);
frames BGR `uint8 (H, W, 3)`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from vision.camera import Intrinsics
from vision.domination import cell_centre_board
from vision.geometry import (
    BoardFit,
    board_intrinsics,
    board_to_image,
    camera_geometry,
    sample_points,
)

#: a top's circle in the board plane: centre (2,), radius, radius sigma (board units) and the
#: rim points (N, 2) it rests on
Circle = tuple[np.ndarray, float, float, np.ndarray]


@dataclass(frozen=True)
class StackHeightParams:
    """Tuning (shipped defaults, each with its reason)."""

    #: the tallest stack
    max_height: int = 5
    #: radial directions per top (a rim is a few hundred px around: 64 keep ~1 px of it apart)
    directions: int = 64
    #: radii (board units) sampled from the expected top's centre: a man is 0.3-0.48 across
    #: half, its centre up to 0.1 off the guess (placement, a height off by one)
    profile_radii: tuple[float, float] = (0.14, 0.7)
    #: profile sample step (board units: ~0.45 px where a square is 90 px)
    profile_step: float = 0.005
    #: the men's radius range (board units): from a small counter to a man filling the square;
    #: the silhouette is looked for from 0.8 of its smallest
    radius_range: tuple[float, float] = (0.26, 0.5)
    #: the rim is read on the top's far side and flanks: directions within this angle of the
    #: way away from the nadir (the near side's band lies between rim and board; at 90 degrees
    #: the band's outline and the top's meet, beyond a little of the band's flank would count)
    far_side_deg: float = 95.0
    #: where the tallest stack's band is narrower than this (board units: under 3 px at 100 px
    #: a square), the band is no hindrance and every direction reads the rim
    all_sides_band: float = 0.03
    #: how far (board units) the profile must stay nearer the square's colour than the top's
    #: to be the board: 0.05, ~6 px, past a chip's printed ring (0.04 R, ~2 px) and a draughts
    #: man's grooves, and within the 0.16-0.26 between two men's rims
    board_run: float = 0.05
    #: how much a group's rims may read off the men's radius, as a fraction of it (a rim line
    #: and the square's colour move a rim by up to a pixel, ~2 % of a radius of 45 px)
    group_bias: float = 0.04
    #: how far (px) a top's rim reads off its group's common offset besides its own fit's
    #: scatter (a rim line, the square's colour, a shade: 0.1-2 px, measured against the truth;
    #: `_group_radii` takes 0.2 px likewise)
    rim_scatter_px: float = 0.2
    #: a rim point agrees with a circle within this many pixels (its scatter about the rim where
    #: the rim is clean: blur and noise move a crossing by a few tenths of a pixel)
    rim_band_px: float = 0.4
    #: how far inside the board's start (a fraction of it) a short break of the top's colour is
    #: read as the top's rim past a lower man's crescent: a man lies up to ~0.05 off its stack
    #: (2.8 sigma of placement), 0.1 of a small man's radius; a draughts man's embossed ring,
    #: 0.12 R in, stays out
    crescent: float = 0.1
    #: the rim's steepest change is looked for this many samples either side of where the
    #: board begins (~1.5 px: a shadow or the lamp moves the crossing by up to a pixel)
    edge_window: int = 3
    #: the top's centre from its own rotationally symmetric pattern (a draughts man's embossed
    #: rings, a chip's printed ring) between these fractions of its radius: in from the near
    #: side's rim line (0.93: 3 px at a radius of 45 px) and out past the crown's middle
    pattern_radii: tuple[float, float] = (0.2, 0.93)
    #: the pattern's sample step (px): a ring's blurred edge is 1-2 px wide, the shifts are read
    #: to a fraction of a step between samples
    pattern_step_px: float = 0.5
    #: how far (px) a direction's pattern is looked for off the template: the rim circle's
    #: centre is within ~1 px of the top's (its median error 0.3-0.6 px)
    pattern_shift_px: float = 2.0
    #: the pattern's directions: 32 keep ~8 px of a ring at 0.9 of a 45 px radius apart, and a
    #: chip's stripe (a sixth of the turn at most) off a minority
    pattern_directions: int = 32
    #: a pattern tells the centre where its directions' shifts agree within this (px, robust
    #: sigma about the fitted centre): rings agree to ~0.1 px, a plain counter's noise does not
    pattern_spread_px: float = 0.5


@dataclass(frozen=True)
class StackHeights:
    """Per cell measured: height (1..max), its sigma (pieces), the continuous estimate; the
    men's radius found (board units) and the ratio by which the heights were scaled; per cell
    the top's circle found, in the board plane (centre (x, y) and radius, board units)."""

    heights: dict[str, int]
    sigma: dict[str, float]
    estimate: dict[str, float]
    radius_board: float
    scale: float = 1.0
    top_centre_board: dict[str, tuple[float, float]] = field(default_factory=dict)
    top_radius_board: dict[str, float] = field(default_factory=dict)


def stack_heights(
    frame: np.ndarray, board: BoardFit, cells: Sequence[str], *, intrinsics: Intrinsics | None = None,
    thickness: float = 0.12, guess_heights: Sequence[int] | None = None,
    tops: Mapping[str, str] | None = None, params: StackHeightParams = StackHeightParams(),
) -> StackHeights | None:
    """The heights of the stacks on `cells` (see the module); None without a camera model (a
    board fit carrying no intrinsics and none given) or without any rim found. `tops`: the
    tops reader's colour per cell (`TopsReading.tops`), which groups the tops for the men's
    radius (step 3); without it, by their measured colours."""
    if not 0 < thickness < 1:
        raise ValueError(f"thickness must be in (0, 1) squares, got {thickness}")
    cam = board_intrinsics(board, intrinsics)
    if cam is None or not cells:
        return None
    h, w = frame.shape[:2]
    geo = camera_geometry(board, (w, h), cam)
    nadir = np.asarray(geo.centre_board, np.float64)
    Z = float(geo.height_board)
    centres = np.array([cell_centre_board(c) for c in cells], np.float64)
    # the profiles are centred where a stack of mid height has its top: a stack two pieces
    # off is within the profiles' reach all the same
    mid = 0.5 * (1 + params.max_height)
    guess = np.full(len(cells), mid) if guess_heights is None else np.asarray(guess_heights, np.float64)
    s_guess = Z / np.maximum(Z - guess * thickness, 1e-6)
    expect = nadir + (centres - nadir) * s_guess[:, None]
    s_max = Z / max(Z - (params.max_height + 0.5) * thickness, 1e-6)
    d = centres - nadir
    dist = np.maximum(np.linalg.norm(d, axis=1), 1e-6)
    u = d / dist[:, None]
    v = np.stack([-u[:, 1], u[:, 0]], 1)
    vals, rad, dirs = _profiles(frame, board, cam, expect, params)
    board_bgr = _board_colours(frame, board, cam)
    # board units a pixel: the mean side of the board's squares in the frame
    corners = np.asarray(board.corners_px, np.float64)
    px_per_unit = float(np.mean(np.linalg.norm(corners - np.roll(corners, 1, axis=0), axis=1))) / 8.0
    band = params.rim_band_px / max(px_per_unit, 1e-6)
    circles, rim_points = _silhouettes(vals, rad, dirs, expect, board_bgr, centres, nadir, s_max, band, params)
    ok = np.array([c is not None for c in circles])
    if not ok.any():
        return None
    circles = _centred_on_pattern(frame, board, cam, circles, px_per_unit, params)
    centre_fit = np.array([c[0] if c is not None else (np.nan, np.nan) for c in circles])
    radius_fit = np.array([c[1] if c is not None else np.nan for c in circles])
    radius_sig = np.array([c[2] if c is not None else np.nan for c in circles])
    off = centre_fit - centres
    along, across = np.sum(off * u, axis=1), np.sum(off * v, axis=1)
    # a man's placement off its square's centre: what the displacement across the nadir
    # direction shows (no height moves a top that way), robustly
    placement = max(1.4826 * float(np.nanmedian(np.abs(across[ok]))), 0.004)
    s_disp = 1.0 + along / dist
    s_disp_sig = placement / dist
    # the men's radius: r / s over the stacks, weighed by how well each s is known
    R_all = _pooled_radius(radius_fit[ok], radius_sig[ok], s_disp[ok], s_disp_sig[ok])
    # a circle no stack of 1..max men of the frame's radius has (a lower man's crescent, a
    # king's crown, a neighbour's rim taken for the top's: 2-8 px off on ~14 % of the tops,
    # a third of the wrong heights): the consensus again among the same rim points, its
    # radius within what those stacks allow (from the men's radius to the tallest stack's
    # half a piece up, the men's radius known to a quarter of `group_bias` as in
    # `_group_radii`), re-centred on the top's rings
    slack = 0.25 * params.group_bias
    r_lo, r_hi = R_all * (1.0 - slack), R_all * s_max * (1.0 + slack)
    redo = [i for i in range(len(cells)) if ok[i] and not r_lo - band < radius_fit[i] < r_hi + band
            and rim_points[i] is not None]
    if redo:
        again = [_consensus_circle(rim_points[i], band, r_lo, r_hi) for i in redo]
        again = _centred_on_pattern(frame, board, cam, again, px_per_unit, params)
        for i, c in zip(redo, again):
            if c is not None:
                circles[i] = c
                centre_fit[i], radius_fit[i], radius_sig[i] = c[0], c[1], c[2]
        off = centre_fit - centres
        along, across = np.sum(off * u, axis=1), np.sum(off * v, axis=1)
        placement = max(1.4826 * float(np.nanmedian(np.abs(across[ok]))), 0.004)
        s_disp = 1.0 + along / dist
        s_disp_sig = placement / dist
    # per stack, the radius its group of tops (one colour, one square parity) shows: a rim is
    # read off by up to a pixel, alike for the tops of a colour on squares of a parity
    inner = (rad >= 0.14) & (rad <= 0.26)
    top_bgr = np.median(vals[:, :, inner, :].reshape(len(cells), -1, 3), axis=1).astype(np.float64)
    parity = (np.floor(centres[:, 0]) + np.floor(centres[:, 1])).astype(np.int64) % 2
    if tops is not None and all(c in tops for c in cells):
        # the tops reader's colours: one group per colour and square parity, however the lamp,
        # a shade or glare move a top's measured colour (by colour distance alone a colour's tops
        # fell into ~9 groups a frame of ~3 tops each, a third of them too few for a radius of
        # their own)
        labels = sorted({tops[c] for c in cells})
        group = np.array([2 * labels.index(tops[c]) + int(parity[i]) for i, c in enumerate(cells)])
    else:
        group = _groups(top_bgr, parity)
    focal_sigma = board.extra.get("focal_sigma_px")
    scale, scale_sig = 1.0, 0.0
    joint_fit = intrinsics is None and isinstance(focal_sigma, float | int)
    if joint_fit:
        # the camera from the board's own grid: its focal length a times the true one puts the
        # camera a Z up and every height at a k. The factor and the groups' radii together that
        # best explain the tops as whole pieces (`_group_radii`'s likelihood), weighed against the
        # grid's focal length (log-normal, its relative sigma, at least 2 %, at most 0.35 as
        # `vision.domination.height_scale`), over three of its sigmas in steps of 1 % (one piece
        # of five is 20 %). Scaling the heights found at the grid's focal length afterwards, as
        # this module did, left each group's radius fitted to whole pieces at the wrong scale
        f0 = float(cam.camera_matrix[0, 0])
        prior = min(max(float(focal_sigma) / f0, 0.02), 0.35) if math.isfinite(float(focal_sigma)) else 0.35
        # the factor is chosen against that prior, but its sigma is the spread of the tops'
        # likelihood about it under the focal length's whole sigma: with what a principal point
        # off the image centre does (`focal_pp_sigma_px`; the grid's own sigma takes the centre
        # as known, and was a third of the focal length's error at the median of 80 benchmark
        # frames). Chosen against the whole sigma the factor wandered (seed 3 -1.1 points,
        # seed 5 -2.0); its sigma left out, uncalibrated heights' errors were 2-3 times their
        # sigmas on tilted frames
        pp_sigma = board.extra.get("focal_pp_sigma_px")
        honest = prior
        if isinstance(pp_sigma, float | int) and math.isfinite(float(pp_sigma)):
            honest = min(math.hypot(prior, float(pp_sigma) / f0), 0.35)
        half = max(math.ceil(3.0 * prior / 0.01), 4)
        step = 3.0 * prior / half
        # beyond the factor's own range only its sigma is read: in steps three times as wide
        # (the whole sigma reaches 0.35, 200 steps of 1 % doubled the heights' time)
        more = math.ceil(3.0 * max(honest - prior, 0.0) / (3.0 * step))
        out = 3.0 * prior + 3.0 * step * np.arange(1, more + 1)
        la = np.r_[-out[::-1], np.arange(-half, half + 1) * step, out]
        width = np.r_[np.full(more, 3.0 * step), np.full(2 * half + 1, step), np.full(more, 3.0 * step)]
        data, radii = [], []
        for a in np.exp(la):
            R_a, score = _group_radii(radius_fit, radius_sig, s_disp, s_disp_sig, ok, group, R_all, Z / a,
                                      thickness, params)
            data.append(score)
            radii.append(R_a)
        sc = np.where(np.abs(la) <= 3.0 * prior + 1e-9, np.asarray(data) - 0.5 * (la / prior) ** 2, -np.inf)
        best = int(np.argmax(sc))
        scale = float(np.exp(la[best]))
        sc_h = np.asarray(data) - 0.5 * (la / honest) ** 2
        pw = np.exp(sc_h - sc_h.max()) * width
        scale_sig = math.sqrt(float(pw @ (la - la[best]) ** 2) / float(pw.sum()))
        Z, R = Z / scale, radii[best]
    else:
        R, _ = _group_radii(radius_fit, radius_sig, s_disp, s_disp_sig, ok, group, R_all, Z, thickness, params)
    # heights from the top's size and from its displacement; how well the size tells them is
    # measured on the frame itself: the two disagree by both errors (a rim misplaced by the
    # side band, a ring or a shade under it is far more often than the fit's own scatter says)
    k_rad = Z * (1.0 - R / radius_fit) / thickness
    k_disp = Z * (1.0 - 1.0 / s_disp) / thickness
    sig_disp = Z / (thickness * s_disp**2) * s_disp_sig
    diff = (k_rad - k_disp)[ok]
    diff = diff - np.median(diff)
    # the radius's sigma that makes the disagreements, each over its joint sigma with the
    # displacement's own (which varies with the distance from the nadir), as a unit Gaussian's
    # (median |z| 0.6745): robust to the misfitted rims
    grid = np.exp(np.linspace(math.log(0.1), math.log(20.0), 200))
    z_med = np.array([np.median(np.abs(diff) / np.hypot(g, sig_disp[ok])) for g in grid])
    sig_rad = float(grid[min(int(np.searchsorted(-z_med, -0.6745)), len(grid) - 1)])
    # where the displacements are far less certain than the radii (a frame whose tops lie near
    # the nadir), their disagreements cannot tell the radius's sigma (it came out at the grid's
    # floor, 0.1 of a piece, and the heights' errors 2-3 times their sigmas): no less than the
    # stack's own rim fit and the scatter of a group's rims about their common offset
    # (`rim_scatter_px`) say, through dk/dr = Z R / (t r^2)
    sr = np.hypot(np.nan_to_num(radius_sig, nan=1.0), params.rim_scatter_px / max(px_per_unit, 1e-6))
    sig_rad = np.maximum(sig_rad, Z * R / (thickness * np.where(ok, radius_fit, 1.0) ** 2) * sr)
    # a size that disagrees with the displacement by more than three of their joint sigmas is
    # a wrong rim: the displacement alone is the height there
    joint = np.hypot(sig_rad, sig_disp)
    use_rad = ok & (np.abs(k_rad - k_disp) < 3.0 * joint)
    wr = np.where(use_rad, 1.0 / sig_rad**2, 0.0)
    wd = 1.0 / np.maximum(sig_disp, 1e-6) ** 2
    est = (wr * np.nan_to_num(k_rad) + wd * k_disp) / (wr + wd)
    sig = 1.0 / np.sqrt(wr + wd)
    good = [i for i in range(len(cells)) if ok[i] and math.isfinite(est[i])]
    estimate = {cells[i]: float(est[i]) for i in good}
    sigma = {cells[i]: float(max(sig[i], 0.05)) for i in good}
    if joint_fit:
        # the factor's own uncertainty: every height by as much
        sigma = {c: float(math.hypot(v, estimate[c] * scale_sig)) for c, v in sigma.items()}
    heights = {c: int(np.clip(np.rint(v), 1, params.max_height)) for c, v in estimate.items()}
    top_centre = {cells[i]: (float(centre_fit[i, 0]), float(centre_fit[i, 1])) for i in good}
    top_radius = {cells[i]: float(radius_fit[i]) for i in good}
    return StackHeights(heights, sigma, estimate, float(R_all), scale, top_centre, top_radius)


def _groups(top_bgr: np.ndarray, parity: np.ndarray) -> np.ndarray:
    """Group ids (N,) of the tops: one square parity and colours within 0.25 in log BGR (the
    tops reader's distance for telling a piece's colour from a square's) of the group's first."""
    lg = np.log(top_bgr + 16.0)
    group = np.full(len(top_bgr), -1)
    heads: list[int] = []
    for i in range(len(top_bgr)):
        for g, h in enumerate(heads):
            if parity[h] == parity[i] and float(np.linalg.norm(lg[i] - lg[h])) < 0.25:
                group[i] = g
                break
        else:
            heads.append(i)
            group[i] = len(heads) - 1
    return group


def _group_radii(r: np.ndarray, r_sig: np.ndarray, s_disp: np.ndarray, s_disp_sig: np.ndarray,
                 ok: np.ndarray, group: np.ndarray, R_all: float, Z: float, t: float,
                 p: StackHeightParams) -> tuple[np.ndarray, float]:
    """Per stack, the men's radius as its group's rims show it (N,), and the log-likelihood of
    the groups' rims at their radii: the radius R that best
    explains the group's tops as whole pieces, each top's likelihood summed over the heights
    1..max of its radius R s_k (sigma: its fit's, at least 0.2 px: the scatter of a group's
    rims about their common offset) and of its displacement's height; a top no height explains
    (a wrong rim) weighs no more than its displacement alone. Within `group_bias` of the pooled
    R (a prior of a quarter of that as sigma); a group under 3 tops keeps the pooled R."""
    ks = np.arange(1, p.max_height + 1, dtype=np.float64)
    s_k = Z / (Z - ks * t)
    k_disp = Z * (1.0 - 1.0 / s_disp) / t
    sig_disp = np.maximum(Z / (t * s_disp**2) * s_disp_sig, 1e-6)
    grid = R_all * (1.0 + np.linspace(-p.group_bias, p.group_bias, 161))
    prior = -0.5 * ((grid / R_all - 1.0) / (0.25 * p.group_bias)) ** 2
    out = np.full(len(r), R_all)
    score = 0.0
    # 0.2 px where a square is ~120 px
    sr = np.hypot(np.nan_to_num(r_sig, nan=1.0), 0.0015)
    for g in np.unique(group):
        m = np.flatnonzero((group == g) & ok)
        if len(m) < 3:
            continue
        zr = (r[m][None, :, None] - grid[:, None, None] * s_k[None, None, :]) / sr[m][None, :, None]
        zd = (k_disp[m][None, :, None] - ks[None, None, :]) / sig_disp[m][None, :, None]
        ll = -0.5 * (zr**2 + zd**2)
        top = ll.max(axis=2)
        lik = top + np.log(np.exp(ll - top[..., None]).sum(axis=2))
        lik = np.maximum(lik, -8.0 - 0.5 * zd.min(axis=2) ** 2)
        total = lik.sum(axis=1) + prior
        best = int(np.argmax(total))
        out[m] = grid[best]
        score += float(total[best])
    return out, score


def _pooled_radius(r: np.ndarray, r_sig: np.ndarray, s: np.ndarray, s_sig: np.ndarray) -> float:
    """The men's radius from per-stack radii `r` and their ratios `s`: a median of r / s weighed
    by how well each is known (a misfitted rim is a minority)."""
    q = r / s
    q_sig = np.hypot(r_sig / s, r * s_sig / s**2)
    wt = 1.0 / np.maximum(q_sig, 1e-9) ** 2
    order = np.argsort(q)
    cum = np.cumsum(wt[order])
    return float(q[order][np.searchsorted(cum, 0.5 * cum[-1])])


def _board_colours(frame: np.ndarray, board: BoardFit, cam: Intrinsics) -> np.ndarray:
    """The two square colours (2, 3) BGR, by parity (floor(x) + floor(y)) % 2: medians of
    samples next to every lattice point inside its four squares (0.1 from the corner, where a
    centred man does not reach: the corners blocked off and the few displaced tops are a
    minority)."""

    ij = np.array([(i, j) for i in range(9) for j in range(9)], np.float64)
    offs = np.array([(0.1, 0.1), (-0.1, 0.1), (0.1, -0.1), (-0.1, -0.1)])
    pts = (ij[:, None, :] + offs[None]).reshape(-1, 2)
    pts = pts[(pts > 0).all(axis=1) & (pts < 8).all(axis=1)]
    vals = sample_points(frame, board_to_image(pts, board, cam), np.float64)
    parity = (np.floor(pts[:, 0]) + np.floor(pts[:, 1])).astype(int) % 2
    return np.stack([np.median(vals[parity == k], axis=0) for k in (0, 1)])


def _silhouettes(vals: np.ndarray, rad: np.ndarray, dirs: np.ndarray, expect: np.ndarray,
                 board_bgr: np.ndarray, centres: np.ndarray, nadir: np.ndarray, s_max: float,
                 band: float, p: StackHeightParams) -> tuple[list[Circle | None], list[np.ndarray | None]]:
    """Per stack, the top's circle from its far side's silhouette against the board: along
    each direction of the top's far side and flanks, the first radius from which the profile
    is the square's own colour (nearer it than the top's) for `board_run`, to a fraction of a
    sample where the two distances cross; the circle most of those points agree with (within
    `band`, board units)."""
    n, _, M, _ = vals.shape
    pts = expect[:, None, None, :] + rad[None, None, :, None] * dirs[None, :, None, :]
    parity = (np.floor(pts[..., 0]) + np.floor(pts[..., 1])).astype(np.int64) % 2
    bcol = board_bgr[parity]  # (n, D, M, 3)
    inner = (rad >= 0.14) & (rad <= 0.26)
    top = np.median(vals[:, :, inner, :].reshape(n, -1, 3), axis=1)  # (n, 3)
    d_board = np.linalg.norm(vals - bcol, axis=3)
    d_top = np.linalg.norm(vals - top[:, None, None, :], axis=3)
    f = d_top - d_board  # > 0: nearer the board
    like = f > 0
    start = int(np.searchsorted(rad, p.radius_range[0] * 0.8))

    def first_run(length: float) -> tuple[np.ndarray, np.ndarray]:
        run = max(round(length / float(rad[1] - rad[0])), 1)
        ok_run = np.ones_like(like)
        for k in range(run):
            ok_run[..., : M - k] &= like[..., k:]
            ok_run[..., M - k:] = False
        ok_run[..., :start] = False
        first = np.argmax(ok_run, axis=2)  # (n, D)
        return first, ok_run.max(axis=2) & (first > start)

    first, found = first_run(p.board_run)
    # where the profile does not stay the square's colour that far (a neighbour close by, the
    # profile's end), 1.5 px of it (a rim line or a sample on the blurred outline is one or two)
    first_short, found_short = first_run(0.015)
    first = np.where(found, first, first_short)
    found = found | found_short

    # the rim is the steepest point of the colour's change near where the board begins: the
    # crossing itself moves with the board's colour next to the man (a shadow, the lamp), the
    # steepest change does not (a blurred step's centre whatever its two levels)
    step = float(rad[1] - rad[0])
    w = p.edge_window
    # the colour's change between samples i and i + 1 (at rad[i] + step / 2), smoothed [1 2 1],
    # read only in the window: samples from first - w - 3 to first + w + 2
    offs = np.arange(-w - 3, w + 3)

    def crossing(first: np.ndarray) -> np.ndarray:
        j = np.clip(np.maximum(first, 1), w + 3, M - w - 3)
        v = np.take_along_axis(vals, (j[..., None] + offs)[..., None], 2)  # (n, D, 2w + 6, 3)
        g = np.linalg.norm(np.diff(v, axis=2), axis=3)  # changes at offs[:-1]
        g = 0.25 * g[..., :-2] + 0.5 * g[..., 1:-1] + 0.25 * g[..., 2:]  # at offs[1:-2]
        # the window proper, changes j - 1 - w .. j - 1 + w: g entries 1 .. 2w + 1
        k = 1 + np.argmax(g[..., 1:-1], axis=2)
        g0, g1, g2 = (np.take_along_axis(g, (k + o)[..., None], 2)[..., 0] for o in (-1, 0, 1))
        den = g0 - 2.0 * g1 + g2
        delta = np.clip(np.where(den < -1e-6, 0.5 * (g0 - g2) / np.where(den < -1e-6, den, -1.0), 0.0), -0.5, 0.5)
        return rad[j + offs[1 + k]] + (0.5 + delta) * step

    rho = crossing(first)
    # a lower man lying off the stack's axis sticks out past the top as a crescent of its own
    # top face (the top's colour when the men match): there the board starts at the crescent's
    # outer edge, and the top's own rim is the first short break of the top's colour before it
    # (its rim line, or the lower man's side). That break is a second reading of the direction
    # when it lies within `crescent` of the board's start, a fraction of the radius (a draughts
    # man's embossed ring lies 0.12 R in from the rim: it is not taken for the rim); the
    # consensus circle takes whichever of a direction's readings agrees with the others
    rho_short = crossing(first_short)
    second = found & found_short & (rho_short < rho - 0.5 * float(rad[1] - rad[0])) & (
        rho_short > rho * (1.0 - p.crescent))
    out: list[Circle | None] = []
    pts_all: list[np.ndarray | None] = []
    for i in range(n):
        sel = found[i] & _far_side(dirs, centres[i], nadir, s_max, p)
        if sel.sum() < 8:
            out.append(None)
            pts_all.append(None)
            continue
        both = sel & second[i]
        # in order round the side, a direction's second reading after its first
        order = np.argsort(np.r_[np.flatnonzero(sel), np.flatnonzero(both) + 0.5], kind="stable")
        q = np.concatenate([expect[i] + rho[i, sel, None] * dirs[sel],
                            expect[i] + rho_short[i, both, None] * dirs[both]])[order]
        # where fewer than 8 points agree (a rim broken by stripes, a blurred or low-contrast
        # edge), a least-squares circle through them all: a rough rim rather than none (the
        # displacement still tells the height, and the radius's sigma says how rough)
        r_lo, r_hi = p.radius_range[0] * 0.8, p.radius_range[1] * s_max
        circle = _consensus_circle(q, band, r_lo, r_hi) or _robust_circle(q)
        out.append(circle)
        pts_all.append(q)
    return out, pts_all


def _centred_on_pattern(frame: np.ndarray, board: BoardFit, cam: Intrinsics, circles: list[Circle | None],
                        px_per_unit: float, p: StackHeightParams) -> list[Circle | None]:
    """The circles re-centred where the top shows a rotationally symmetric pattern, the radius
    then the median distance of their rim points from that centre. The far side's rim alone
    ties a circle's radius to its centre (a half circle's radius is ~2 times as uncertain as
    one about a known centre: an arc read off by a rim line or a shade moves both); a draughts
    man's rings or a chip's printed ring tell the centre to a few hundredths of a pixel
    (`_pattern_centres`). Where the pattern's directions disagree (a plain counter, a top
    under glare) the rim's own circle stands."""
    idx = [i for i, c in enumerate(circles) if c is not None]
    if not idx:
        return circles
    centre = np.array([circles[i][0] for i in idx])  # type: ignore[index]
    radius = np.array([circles[i][1] for i in idx])  # type: ignore[index]
    found, spread_px = _pattern_centres(frame, board, cam, centre, radius, px_per_unit, p)
    out = list(circles)
    for j, i in enumerate(idx):
        c = circles[i]
        assert c is not None
        q = c[3]
        if not spread_px[j] < p.pattern_spread_px or len(q) < 8:
            continue
        # the centre moved by no more than the shifts the pattern was searched over
        if float(np.linalg.norm(found[j] - c[0])) * px_per_unit > p.pattern_shift_px:
            continue
        dist = np.linalg.norm(q - found[j], axis=1)
        r = float(np.median(dist))
        # a radius about a known centre: the rim points' robust scatter over sqrt(n)
        mad = 1.4826 * float(np.median(np.abs(dist - r)))
        out[i] = (found[j], r, max(mad, 1e-4) / math.sqrt(len(q)), q)
    return out


def _pattern_centres(frame: np.ndarray, board: BoardFit, cam: Intrinsics, centre: np.ndarray,
                     radius: np.ndarray, px_per_unit: float, p: StackHeightParams
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Per top (circles `centre` (N, 2), `radius` (N,), board units), the centre of its
    rotationally symmetric pattern and how well the directions agree on it (px, robust sigma;
    inf where they do not). Radial colour profiles over `pattern_radii` of the radius in
    `directions` directions; each direction's change profile is matched against the median of
    all (the template) at shifts up to `pattern_shift_px`; a centre off by d shifts direction
    e by d . e, fitted by least squares with directions 3 robust sigmas off dropped (a chip's
    stripe, a crown, glare cover a minority); twice, from the centre found."""
    n = len(centre)
    n_dir = p.pattern_directions
    ang = np.arange(n_dir) * (2 * math.pi / n_dir)
    dirs = np.stack([np.cos(ang), np.sin(ang)], 1)
    lo, hi = p.pattern_radii
    step_px = p.pattern_step_px
    # one sample grid in fractions of the radius: step_px at the median radius
    m = max(int((hi - lo) * float(np.median(radius)) * px_per_unit / step_px) + 1, 8)
    frac = np.linspace(lo, hi, m)
    step = radius * (hi - lo) / (m - 1)  # (n,) board units a sample
    shifts = max(round(p.pattern_shift_px / step_px), 1)
    if m - 1 <= 2 * shifts + 2:
        return centre.copy(), np.full(n, np.inf)
    c = centre.astype(np.float64).copy()
    spread = np.full(n, np.inf)
    rows = np.arange(n)[:, None]
    cols = np.arange(n_dir)[None, :]
    for _ in range(2):
        pts = c[:, None, None, :] + (radius[:, None] * frac[None])[:, None, :, None] * dirs[None, :, None, :]
        vals = _sample(frame, board, cam, pts.reshape(-1, 2)).reshape(n, n_dir, m, 3).astype(np.float64)
        g = np.diff(vals, axis=2)  # (n, D, m - 1, 3)
        length = m - 1
        tpl = np.median(g, axis=1)[:, shifts:length - shifts]  # (n, L, 3)
        score = np.stack([np.einsum("ndlc,nlc->nd", g[:, :, shifts + k:length - shifts + k], tpl)
                          for k in range(-shifts, shifts + 1)], axis=2)  # (n, D, 2 shifts + 1)
        k = np.clip(np.argmax(score, axis=2), 1, 2 * shifts - 1)
        s0, s1, s2 = (score[rows, cols, k + o] for o in (-1, 0, 1))
        den = s0 - 2.0 * s1 + s2
        frac_k = np.clip(np.where(den < 0, 0.5 * (s0 - s2) / np.where(den < 0, den, -1.0), 0.0), -0.5, 0.5)
        shift = (k - shifts + frac_k) * step[:, None]  # (n, D): how far out the direction's pattern lies
        keep = np.ones((n, n_dir), bool)
        delta = np.zeros((n, 2))
        for _ in range(3):
            w = keep.astype(np.float64)
            ata = np.einsum("nd,di,dj->nij", w, dirs, dirs) + 1e-12 * np.eye(2)
            atb = np.einsum("nd,nd,di->ni", w, shift, dirs)
            delta = np.linalg.solve(ata, atb[..., None])[..., 0]
            res = shift - delta @ dirs.T
            mad = 1.4826 * np.nanmedian(np.where(keep, np.abs(res), np.nan), axis=1)
            mad = np.where(np.isfinite(mad), mad, np.inf)
            # at least a tenth of a pixel: the scatter of a clean ring's shifts
            keep = np.abs(res) < np.maximum(3.0 * mad, 0.1 / px_per_unit)[:, None]
        spread = np.where(keep.sum(axis=1) >= n_dir // 2, mad * px_per_unit, np.inf)
        c = c + delta
    return c, spread


def _far_side(dirs: np.ndarray, centre: np.ndarray, nadir: np.ndarray, s_max: float,
              p: StackHeightParams) -> np.ndarray:
    """Which of `dirs` (D, 2) look at the top's far side and flanks, away from the nadir (all
    of them where even the tallest stack's band is too narrow to hinder)."""
    d = centre - nadir
    dist = float(np.linalg.norm(d))
    u = d / dist if dist > 1e-6 else np.array([1.0, 0.0])
    if dist * (s_max - 1.0) < p.all_sides_band:
        return np.ones(len(dirs), bool)
    return (dirs @ u) >= math.cos(math.radians(p.far_side_deg))


def _consensus_circle(q: np.ndarray, band: float, r_min: float, r_max: float
                      ) -> Circle | None:
    """The circle most of the (N, 2) points `q` (in order round the side) agree with: circles
    through three points spread over them (a quarter, a third and a half of the way apart), the
    one of radius in [r_min, r_max] with the most points within `band`, refitted by least
    squares on its points (centre, radius, radius sigma); None under 8 points."""
    n = len(q)
    if n < 8:
        return None
    i = np.arange(n)
    tri = np.concatenate([np.stack([i, (i + a) % n, (i + b) % n], 1)
                          for a, b in ((n // 4, n // 2), (n // 3, 2 * n // 3), (n // 6, n // 2))])
    a, b, c = q[tri[:, 0]], q[tri[:, 1]], q[tri[:, 2]]
    den = 2.0 * (a[:, 0] * (b[:, 1] - c[:, 1]) + b[:, 0] * (c[:, 1] - a[:, 1]) + c[:, 0] * (a[:, 1] - b[:, 1]))
    valid = np.abs(den) > 1e-12
    den = np.where(valid, den, 1.0)
    na, nb, nc = (a * a).sum(1), (b * b).sum(1), (c * c).sum(1)
    cen = np.stack([na * (b[:, 1] - c[:, 1]) + nb * (c[:, 1] - a[:, 1]) + nc * (a[:, 1] - b[:, 1]),
                    na * (c[:, 0] - b[:, 0]) + nb * (a[:, 0] - c[:, 0]) + nc * (b[:, 0] - a[:, 0])], 1) / den[:, None]
    rr = np.linalg.norm(a - cen, axis=1)
    valid &= (rr > r_min) & (rr < r_max)
    if not valid.any():
        return None
    res = np.abs(np.linalg.norm(q[None] - cen[valid][:, None], axis=2) - rr[valid][:, None])
    votes = (res < band).sum(axis=1)
    best = int(np.argmax(votes))
    return _refit_circle(q, cen[valid][best], float(rr[valid][best]), band)


def _refit_circle(q: np.ndarray, centre: np.ndarray, r: float, band: float
                  ) -> Circle | None:
    """The circle (centre, radius) refitted by least squares on the points of `q` within
    `band` of it, until they stay the same (centre, radius, radius sigma); None under 8."""
    keep = np.abs(np.linalg.norm(q - centre, axis=1) - r) < band
    for _ in range(3):
        if keep.sum() < 8:
            return None
        pts = q[keep]
        centre, r = _refine_circle(pts, centre, r)
        new = np.abs(np.linalg.norm(q - centre, axis=1) - r) < band
        if (new == keep).all():
            break
        keep = new
    if keep.sum() < 8:
        return None
    res_k = (np.linalg.norm(q - centre, axis=1) - r)[keep]
    rms = max(float(np.sqrt(np.mean(res_k**2))), 1e-4)
    # a circle's radius from n points on its half: about 2 rms / sqrt(n)
    return centre, r, 2.0 * rms / math.sqrt(float(keep.sum())), q[keep]


def _refine_circle(pts: np.ndarray, centre: np.ndarray, r: float) -> tuple[np.ndarray, float]:
    """Three Gauss-Newton steps of the circle (centre, r) through (N, 2) points."""
    for _ in range(3):
        vec = pts - centre
        dn = np.maximum(np.linalg.norm(vec, axis=1), 1e-9)
        J = np.c_[-vec / dn[:, None], -np.ones(len(pts))]
        step, *_ = np.linalg.lstsq(J, -(dn - r), rcond=None)
        centre, r = centre + step[:2], r + float(step[2])
    return centre, r


def _robust_circle(q: np.ndarray) -> Circle | None:
    """Least-squares circle through (N, 2) points, points off it by more than three robust
    sigmas dropped: (centre, radius, radius sigma)."""
    keep = np.ones(len(q), bool)
    c, r = q.mean(axis=0), float(np.mean(np.linalg.norm(q - q.mean(axis=0), axis=1)))
    for _ in range(4):
        pts = q[keep]
        if len(pts) < 8:
            return None
        c, r = _refine_circle(pts, c, r)
        res = np.linalg.norm(q - c, axis=1) - r
        mad = 1.4826 * float(np.median(np.abs(res[keep])))
        new = np.abs(res) < max(3.0 * mad, 0.003)
        if (new == keep).all():
            break
        keep = new
    res = (np.linalg.norm(q - c, axis=1) - r)[keep]
    rms = max(float(np.sqrt(np.mean(res**2))), 1e-4)
    return c, r, 2.0 * rms / math.sqrt(max(keep.sum(), 1.0)), q[keep]


def _directions(p: StackHeightParams) -> np.ndarray:
    """The profiles' unit directions (directions, 2) in the board plane."""
    ang = np.arange(p.directions) * (2 * math.pi / p.directions)
    return np.stack([np.cos(ang), np.sin(ang)], 1)


def _profiles(frame: np.ndarray, board: BoardFit, cam: Intrinsics, expect: np.ndarray,
              p: StackHeightParams) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Radial colour profiles about `expect` (N, 2) in the board plane: (values (N, D, M, 3)
    BGR float32, radii (M,) board units, directions (D, 2))."""
    n = len(expect)
    dirs = _directions(p)
    lo, hi = p.profile_radii
    # about half a pixel a sample where a square is ~100 px: the rim's sub-pixel position
    rad = np.arange(lo, hi, p.profile_step)
    pts = expect[:, None, None, :] + rad[None, None, :, None] * dirs[None, :, None, :]
    vals = _sample(frame, board, cam, pts.reshape(-1, 2)).reshape(n, p.directions, len(rad), 3)
    return vals, rad, dirs


def _sample(frame: np.ndarray, board: BoardFit, cam: Intrinsics, pts_board: np.ndarray) -> np.ndarray:
    """The frame's colours (N, 3) float32 BGR at board points (N, 2), bilinear."""
    return sample_points(frame, board_to_image(pts_board, board, cam))
