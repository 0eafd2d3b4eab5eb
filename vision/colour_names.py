"""The colour a disc shows the camera, by name: `seen_colours(frame, board, centres_board, players)`.

A disc reading's `colour` is a player's, black or white (the rules need one of the two); a red
draughts man, a carrom queen or a green poker chip is read as the darker or the lighter of them.
What it looks like is named here, one of `SEEN_COLOURS`:

- **black / white**: a face as grey as a black or white piece under the frame's light
  (`off_neutral`: a blue-grey plastic, a dark navy chip); then the name is the player colour
  the reader gave it (which it tells from the board beside the disc: a light grey disc on dark
  felt is white, a dark grey one on paper black). A face coloured like a natural white (cream,
  ivory, light wood: `natural_white`) is "white" whatever the board beside it.
- **red, yellow, green, blue**: a face with more colour than that, by its hue (CIELAB) to the
  nearest of the hues of sRGB's red, yellow, green and blue (`HUE_PROTOTYPES`, 40, 103, 136 and
  306 degrees; the borders half-way, at 71, 119, 221 and 353): orange and pink are red, cyan
  and turquoise green, violet and magenta blue. No grey, brown or orange of their own: a grey
  piece is the player colour the reader gives it, a brown one red or yellow by its hue.

White balance: the camera's own colours are one reference (a camera balances its white, and a
Dition board or a chessboard is near neutral under it). The board right beyond the disc's rim
is the other, when its colour is one a light can give a grey surface (`plausible_light`: along
the daylight locus, warm or cool, not felt's green): light plywood or birch in a warm lamp's
light has that colour, and a cream coin no more yellow than the plywood around it is a white
coin. A face is neutral when it is neutral against either reference (a white Go stone on yellow
bamboo is neutral in the camera's colours, a cream coin on plywood against the plywood); a
red queen on plywood is red against both. A grey frame has no colours: every disc is named by
its player colour.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np

from vision.camera import Intrinsics
from vision.geometry import BoardFit, board_to_image, row_median, sample_points

#: the names `seen_colours` gives
SEEN_COLOURS = ("black", "white", "red", "yellow", "green", "blue")


def _prototype_hues() -> dict[str, float]:
    """CIELAB hue angle (degrees) of sRGB's red, yellow, green and blue (40, 103, 136, 306)."""
    bgr = {"red": (0.0, 0.0, 1.0), "yellow": (0.0, 1.0, 1.0), "green": (0.0, 1.0, 0.0), "blue": (1.0, 0.0, 0.0)}
    out = {}
    for name, c in bgr.items():
        _, a, b = _bgr_to_lab(np.array([c]) * 255.0)[0]
        out[name] = math.degrees(math.atan2(b, a)) % 360.0
    return out


#: face samples: rings at these radii (diameters) from the disc's top face centre, inside its
#: face whatever the piece (a chip's rim marks, a carrom coin's engraved outer ring lie beyond
#: 0.35), off a Dition disc's grey dot's centre, and still on the face where the reading is
#: 0.15 diameters off it (a thick piece seen aslant)
FACE_RADII_D = (0.11, 0.21, 0.31)
#: ... and the board beyond the rim, its side and its shadow
BOARD_RADII_D = (0.75, 0.9)
#: samples per ring (48 on a face: its median's noise a seventh of a sample's)
RING_ANGLES = 16
#: a board sample closer than this to another disc's centre lies on that disc
OTHER_DISC_D = 0.62
#: a median at or above this level in a channel is clipped (the sensor's top, 255, less the
#: noise's pull on a median of samples at it): its colour is not the surface's
CLIP_LEVEL = 254.0

#: the daylight locus's direction in CIELAB (a*, b*) from a grey under the light the camera is
#: balanced for: a grey under a light ~2500 K warmer moves by (+12, +24) (6500 K -> 4000 K,
#: blackbody), one under a cooler light by (+2.8, -22) (6500 K -> 10000 K); a warm light's
#: shift and a cool one's along these two
WARM_AXIS = np.array([12.5, 24.2]) / math.hypot(12.5, 24.2)
COOL_AXIS = np.array([2.8, -22.2]) / math.hypot(2.8, -22.2)
#: how far along that locus a neutral face may lie (CIELAB units): a white under a light 2500 K
#: off the camera's balance (26.4 units at 4000 K for 6500 K, 22.4 at 10000 K; a camera's auto
#: white balance leaves less) and a plastic's own few units of tint (a blue-grey chip)
ALONG_LOCUS = 30.0
#: ... and across it: lights do not move a grey there (a lamp's tint off the locus, a camera's
#: green-magenta error: a few units), a black or white plastic's own tint and JPEG's chroma
#: smear of a coloured board into a face's edge (4:2:0 subsampling: a quarter of a ring's
#: samples near the rim): ~10, and a margin
ACROSS_LOCUS = 12.0
#: a board is a white balance reference when a light can give a grey surface its colour: its
#: chroma across the locus within `ACROSS_LOCUS` and along it within a 2700 K lamp's on a
#: daylight balance (57 units: light plywood, birch, paper in lamplight; felt's green and a
#: saturated yellow or red board are not)
LIGHT_ALONG_MAX = 60.0
#: the natural whites a player calls white: wood a white man is turned from, cream, ivory,
#: aged plastic (sRGB's named colours, RGB: tan, burlywood, wheat, moccasin, navajowhite,
#: blanchedalmond, antiquewhite, cornsilk, lemonchiffon, cream, beige, ivory): CIELAB hues 77-110,
#: saturation (chroma / lightness) up to 0.40 (burlywood); khaki (0.51) and gold are yellow
NATURAL_WHITES_RGB = ((210, 180, 140), (222, 184, 135), (245, 222, 179), (255, 228, 181), (255, 222, 173),
                      (255, 235, 205), (250, 235, 215), (255, 248, 220), (255, 250, 205), (255, 253, 208),
                      (245, 245, 220), (255, 255, 240))
#: ... their hue band widened by this on each side (degrees: a camera's rendering of a hue)
NATURAL_HUE_MARGIN_DEG = 10.0
#: a face's chroma is measured against the noise of its samples' median: below this many
#: sigmas of it, no colour is named (a dark, noisy face's median chroma is noise)
CHROMA_SNR = 3.0
#: a light face of the board's own tint points its chroma within this of the board's (cream
#: turned carrom coins on plywood: 0-14 degrees off the wood's CIELAB hue, 3-13 in the reader's
#: B, G, R chroma, the wood's grain ~10; a red print on wood 35-40): the reader's
#: `vision.dition._pale_board_tint` takes such a face for a white piece, and so is it named
MAX_TINT_ANGLE_DEG = 25.0


def _srgb_to_linear(v: np.ndarray) -> np.ndarray:
    v = np.clip(np.asarray(v, np.float64) / 255.0, 0.0, 1.0)
    return np.where(v <= 0.04045, v / 12.92, ((v + 0.055) / 1.055) ** 2.4)


def _bgr_to_lab(bgr: np.ndarray) -> np.ndarray:
    """(N, 3) BGR levels 0-255 -> (N, 3) CIELAB (L 0-100, D65)."""
    return _linear_to_lab(_srgb_to_linear(bgr))


def _linear_to_lab(lin_bgr: np.ndarray) -> np.ndarray:
    """(N, 3) linear BGR 0-1 (sRGB primaries) -> (N, 3) CIELAB (L 0-100, D65)."""
    lin = lin_bgr[:, ::-1]  # RGB
    m = np.array([[0.4124564, 0.3575761, 0.1804375],
                  [0.2126729, 0.7151522, 0.0721750],
                  [0.0193339, 0.1191920, 0.9503041]])
    xyz = lin @ m.T / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.stack([116 * f[:, 1] - 16, 500 * (f[:, 0] - f[:, 1]), 200 * (f[:, 1] - f[:, 2])], axis=1)


HUE_PROTOTYPES = _prototype_hues()


def _natural_white_band() -> tuple[float, float, float]:
    """(least hue, greatest hue, greatest saturation) of `NATURAL_WHITES_RGB`, the hues widened
    by `NATURAL_HUE_MARGIN_DEG`."""
    lab = _bgr_to_lab(np.array(NATURAL_WHITES_RGB, np.float64)[:, ::-1])
    hue = np.degrees(np.arctan2(lab[:, 2], lab[:, 1])) % 360.0
    sat = np.hypot(lab[:, 1], lab[:, 2]) / lab[:, 0]
    return float(hue.min() - NATURAL_HUE_MARGIN_DEG), float(hue.max() + NATURAL_HUE_MARGIN_DEG), float(sat.max())


NATURAL_WHITE_BAND = _natural_white_band()


def natural_white(lab: np.ndarray) -> np.ndarray:
    """Whether each colour (N, 3) CIELAB is a natural white's (`NATURAL_WHITES_RGB`): a hue in
    their band and no more saturated than the most saturated of them."""
    lo, hi, sat = NATURAL_WHITE_BAND
    hue = np.degrees(np.arctan2(lab[:, 2], lab[:, 1])) % 360.0
    chroma = np.hypot(lab[:, 1], lab[:, 2])
    return (hue >= lo) & (hue <= hi) & (chroma <= sat * np.maximum(lab[:, 0], 1e-6))


def locus_coordinates(ab: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(along, across) of CIELAB chroma vectors (N, 2) a*, b*: the component along the daylight
    locus (warm positive, cool negative: `WARM_AXIS` where b* >= 0, else `COOL_AXIS`) and the
    distance across it."""
    ab = np.asarray(ab, np.float64).reshape(-1, 2)
    axis = np.where((ab[:, 1] >= 0)[:, None], WARM_AXIS[None], COOL_AXIS[None])
    along = (ab * axis).sum(axis=1)
    across = np.abs(ab[:, 0] * axis[:, 1] - ab[:, 1] * axis[:, 0])
    return np.where(ab[:, 1] >= 0, along, -along), across


def off_neutral(ab: np.ndarray, noise_ab: np.ndarray | float = 0.0) -> np.ndarray:
    """How far each chroma (N, 2) lies from neutral, in units of the tolerances (`ALONG_LOCUS`
    along the daylight locus, `ACROSS_LOCUS` across it, each at least `CHROMA_SNR` noise sigmas
    `noise_ab`): <= 1 is neutral."""
    along, across = locus_coordinates(ab)
    nz = CHROMA_SNR * np.asarray(noise_ab, np.float64)
    return np.hypot(along / np.maximum(ALONG_LOCUS, nz), across / np.maximum(ACROSS_LOCUS, nz))


def plausible_light(board_lab: np.ndarray, board_clipped: np.ndarray) -> np.ndarray:
    """Whether each board colour (N, 3) CIELAB could be a grey surface's under some light
    (`LIGHT_ALONG_MAX`, `ACROSS_LOCUS`), and is not clipped."""
    along, across = locus_coordinates(board_lab[:, 1:])
    return (np.abs(along) <= LIGHT_ALONG_MAX) & (across <= ACROSS_LOCUS) & ~board_clipped


def board_tint(face_lab: np.ndarray, board_lab: np.ndarray, noise_ab: np.ndarray | float = 0.0) -> np.ndarray:
    """Whether each face (N, 3) CIELAB is of its board's (N, 3) own tint, no more saturated: its
    hue within `MAX_TINT_ANGLE_DEG` of the board's and its saturation (chroma per lightness) no
    more than the board's plus `CHROMA_SNR` of its noise `noise_ab`: a light piece of the
    board's material, or a white one under the light that tints the board (a cream coin on
    yellow plywood, whose colour no light on the daylight locus gives a grey)."""
    fh = np.degrees(np.arctan2(face_lab[:, 2], face_lab[:, 1]))
    bh = np.degrees(np.arctan2(board_lab[:, 2], board_lab[:, 1]))
    same_hue = np.abs((fh - bh + 180.0) % 360.0 - 180.0) <= MAX_TINT_ANGLE_DEG
    fc = np.hypot(face_lab[:, 1], face_lab[:, 2]) - CHROMA_SNR * np.asarray(noise_ab, np.float64)
    bc = np.hypot(board_lab[:, 1], board_lab[:, 2])
    return same_hue & (fc / np.maximum(face_lab[:, 0], 1e-6) <= bc / np.maximum(board_lab[:, 0], 1e-6))


def adapt(face_lin: np.ndarray, white_lin: np.ndarray) -> np.ndarray:
    """The faces' colours (N, 3) linear BGR as they look when `white_lin` (N, 3, linear BGR) is
    balanced to grey: von Kries gains in linear light, the reference's brightness kept (N, 3)."""
    ref = np.maximum(white_lin, 1e-4)
    return np.clip(face_lin * (ref.mean(axis=1, keepdims=True) / ref), 0.0, 1.0)


def hue_name(ab: np.ndarray) -> list[str]:
    """The name of the nearest `HUE_PROTOTYPES` hue to each chroma (N, 2)."""
    names = list(HUE_PROTOTYPES)
    protos = np.array([HUE_PROTOTYPES[n] for n in names])
    h = np.degrees(np.arctan2(ab[:, 1], ab[:, 0])) % 360.0
    d = np.abs((h[:, None] - protos[None, :] + 180.0) % 360.0 - 180.0)
    return [names[i] for i in np.argmin(d, axis=1)]


def name_colours(face_bgr: np.ndarray, face_noise_bgr: np.ndarray, board_bgr: np.ndarray,
                 board_clipped: np.ndarray, players: Sequence[str]) -> list[str]:
    """The seen colour of each face (`face_bgr` (N, 3), the median of its samples, BGR levels;
    `face_noise_bgr` (N, 3) the noise of that median) against the board beyond it (`board_bgr`,
    `board_clipped` (N,)); `players`: each disc's player colour, black or white, which names a
    neutral face."""
    n = len(players)
    if n == 0:
        return []
    face_bgr = np.asarray(face_bgr, np.float64).reshape(n, 3)
    lin = _srgb_to_linear(np.concatenate([face_bgr, face_bgr + np.asarray(face_noise_bgr, np.float64).reshape(n, 3),
                                          np.asarray(board_bgr, np.float64).reshape(n, 3)]))
    # (the face in the camera's colours, the face plus its noise, the board, the face against the
    # board as the white)
    lab = _linear_to_lab(np.concatenate([lin, adapt(lin[:n], lin[2 * n:])]))
    own, hi, board, against = lab[:n], lab[n:2 * n], lab[2 * n:3 * n], lab[3 * n:]
    # (the noise of the median's chroma: the face's colour +- its noise, through CIELAB)
    noise_ab = np.hypot(*(hi[:, 1:] - own[:, 1:]).T) / math.sqrt(2.0)
    both = np.concatenate([own, against])
    grey2 = off_neutral(both[:, 1:], np.concatenate([noise_ab, noise_ab])) <= 1.0
    cream2 = natural_white(both)
    board_ok = plausible_light(board, np.asarray(board_clipped, bool))
    grey = grey2[:n] | (board_ok & grey2[n:])
    # (a face neutral only as a natural white is cream, ivory or light wood: white, whichever
    # player's colour the reader gave it against a lighter board)
    cream = ~grey & (cream2[:n] | (board_ok & cream2[n:]))
    # (a face the reader calls white, of the board's own tint and paler: the board's material or
    # a white under the light that tints it, as the reader took it; on an unclipped board)
    tint = ~grey & board_tint(own, board, noise_ab) & ~np.asarray(board_clipped, bool) \
        & np.array([p == "white" for p in players])
    cream = cream | tint
    # (a face coloured against both references is named in the camera's colours: the board's
    # colour is a light's only as a hypothesis that would make the face neutral)
    hues = hue_name(own[:, 1:])
    names = [p if g else h for p, g, h in zip(players, grey.tolist(), hues)]
    return ["white" if c else nm for nm, c in zip(names, cream.tolist())]


@functools.lru_cache(maxsize=8)
def _ring_offsets(radii_d: tuple[float, ...], diameter_board: float) -> np.ndarray:
    """(P, 2) board units: `RING_ANGLES` points on each ring (read only)."""
    ang = np.arange(RING_ANGLES) * (2 * math.pi / RING_ANGLES)
    u = np.stack([np.cos(ang), np.sin(ang)], axis=1)
    off = (np.asarray(radii_d)[:, None, None] * diameter_board * u[None]).reshape(-1, 2)
    off.flags.writeable = False
    return off


def _ring_points(centres_board: np.ndarray, radii_d: tuple[float, ...], diameter_board: float) -> np.ndarray:
    return centres_board[:, None, :] + _ring_offsets(radii_d, float(diameter_board))[None]  # (N, P, 2)


def _row_nanmedian(v: np.ndarray) -> np.ndarray:
    """The median over axis 1 of (N, P, C) samples, NaN left out (NaN where a row has none),
    by one sort (np.nanmedian is ten times slower on these short rows)."""
    v = np.sort(v, axis=1)  # (NaN last)
    n = np.isfinite(v).sum(axis=1)  # (N, C)
    lo = np.take_along_axis(v, np.maximum((n - 1) // 2, 0)[:, None], axis=1)[:, 0]
    hi = np.take_along_axis(v, np.maximum(n // 2, 0)[:, None] * (n > 0)[:, None], axis=1)[:, 0]
    return np.where(n > 0, 0.5 * (lo + hi), np.nan)


def seen_colours(frame: np.ndarray, board: BoardFit, centres_board: np.ndarray, players: Sequence[str], *,
                 tops_board: np.ndarray | None = None, diameter_board: float = 1.0,
                 intrinsics: Intrinsics | None = None) -> list[str]:
    """The colour each disc shows (`SEEN_COLOURS`): discs at `centres_board` (N, 2) (where they
    touch the board), their top faces at `tops_board` (N, 2; default the centres), their player
    colours `players` (black or white). A grey frame: the player colours."""
    centres = np.asarray(centres_board, np.float64).reshape(-1, 2)
    players = list(players)
    if len(centres) == 0:
        return []
    if frame.ndim != 3 or frame.shape[2] != 3:
        return players
    tops = centres if tops_board is None else np.asarray(tops_board, np.float64).reshape(-1, 2)
    n = len(centres)
    face_pts = _ring_points(tops, FACE_RADII_D, diameter_board)
    board_pts = _ring_points(centres, BOARD_RADII_D, diameter_board)
    px = board_to_image(np.concatenate([face_pts, board_pts], axis=1).reshape(-1, 2), board, intrinsics)
    h, w = frame.shape[:2]
    px = px.reshape(n, -1, 2)
    inside = (px[..., 0] >= 0) & (px[..., 0] <= w - 1) & (px[..., 1] >= 0) & (px[..., 1] <= h - 1)
    # (bilinear, in chunks within remap's map size; the samples beyond the frame are left out below)
    vals = sample_points(frame, px.reshape(-1, 2)).reshape(n, -1, 3)
    nf = face_pts.shape[1]
    face, board_vals = vals[:, :nf], vals[:, nf:]
    # (board samples on another disc are that disc's: of the pairs of discs near enough)
    on_other = np.zeros(board_pts.shape[:2], bool)
    if n > 1:
        from scipy.spatial import cKDTree

        reach = (max(BOARD_RADII_D) + OTHER_DISC_D) * diameter_board
        pairs = cKDTree(centres).query_pairs(reach, output_type="ndarray")
        if len(pairs):
            i, j = np.concatenate([pairs, pairs[:, ::-1]]).T
            near = np.hypot(*(board_pts[i] - centres[j][:, None]).transpose(2, 0, 1)) < OTHER_DISC_D * diameter_board
            np.logical_or.at(on_other, i, near)
    # (a face's median and its noise: 1.25 x the samples' robust sigma / sqrt(n); samples beyond
    # the frame's edge left out, and the board's on another disc)
    if inside[:, :nf].all():  # (the faces wholly in the frame: most frames)
        face_bgr = row_median(face)
        face_noise = 1.25 * 1.4826 * row_median(np.abs(face - face_bgr[:, None])) / math.sqrt(nf)
    else:
        f = np.where(inside[:, :nf, None], face, np.nan)
        face_bgr = _row_nanmedian(f)
        n_face = np.maximum(np.isfinite(f[..., 0]).sum(axis=1), 1)
        face_noise = 1.25 * 1.4826 * _row_nanmedian(np.abs(f - face_bgr[:, None])) / np.sqrt(n_face)[:, None]
    board_bgr = _row_nanmedian(np.where((inside[:, nf:] & ~on_other)[..., None], board_vals, np.nan))
    # (a face or a board wholly off the frame: no reference, the player colour names it)
    lost = ~np.isfinite(face_bgr).all(axis=1)
    face_bgr = np.where(lost[:, None], 128.0, face_bgr)
    face_noise = np.where(np.isfinite(face_noise), face_noise, 0.0)
    board_clipped = ~np.isfinite(board_bgr).all(axis=1)
    board_bgr = np.where(board_clipped[:, None], face_bgr, board_bgr)
    board_clipped |= board_bgr.max(axis=1) >= CLIP_LEVEL
    names = name_colours(face_bgr, face_noise, board_bgr, board_clipped, players)
    return [p if gone else nm for p, gone, nm in zip(players, lost.tolist(), names)]

