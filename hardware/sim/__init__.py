"""The simulated table: realistic camera frames of a board with known ground truth (issue 3).

Frames
------
World frame = the board frame of DESIGN.md in board units (Dition: disc diameters; Domination:
cells), right-handed with z INTO the table: a point h above the board has z = -h.

Camera
------
- ``SimCamera(camera_matrix (3,3), dist_coeffs (5,) k1 k2 p1 p2 k3, rvec (3,), tvec (3,),
  image_size (w, h))`` frozen; ``project(points_world (N,3)) -> (N,2) px`` (cv2.projectPoints),
  ``to_dict()`` / ``from_dict()``, ``centre_world``, ``with_pose(rvec, tvec)``, ``scaled(k)``,
  ``check_lens()`` (ValueError if the distortion folds back inside the picture),
  ``project_clamped()`` (no fold-back for points far outside the view).
- ``look_at_board(game, *, image_size=(1640,1232), height_units=None, tilt_deg=0, rotation_deg=0,
  tilt_azimuth_deg=90, fov_deg=None, focal_px=None, distortion=None, target_offset=(0,0),
  margin=0.06, markers=True, rng=None) -> SimCamera`` (focal auto-fits the board when neither
  fov_deg nor focal_px is given).
- ``random_camera(rng, game, image_size=(1640,1232), max_tilt_deg=15.0, distortion=True)``.
- ``camera_for_target(rng, size_units, image_size=(1640,1232), *, max_tilt_deg=40, distortion=True,
  focal_px=None, fill=(0.35, 0.85)) -> SimCamera`` for a flat target with its top-left at the
  origin (calibration).

Scenes and rendering
--------------------
- ``SimDisc(x, y, colour)`` ("black" | "white"); Domination stacks: ``Mapping[str, str]`` cell ->
  bottom-to-top letters ("GRG").
- ``RenderOptions`` frozen (``supersample``, ``disc_thickness=0.08``, ``piece_thickness=0.12``,
  ``markers``, light, ``colour_cast``, ``noise_sigma``, ``blur_sigma_px``, ``jpeg_quality``,
  ``shadow``, ...); ``RenderOptions.random(rng)``, ``RenderOptions.clean()``.
- ``HandPose(x, y, angle_deg, height_mm=25, spread=0.3, scale=1.0, skin_bgr, sleeve_bgr)``:
  the point under the index and middle finger pads (as when holding a piece there; the
  fingertips reach ~1 cm beyond) at board (x, y), the arm extending towards ``angle_deg`` (board
  frame, 0 = +x, 90 = +y) out of the picture; ``HandPose.random(rng, x, y, angle_deg)``.
- ``render_dition(discs, camera, rng, *, options=RenderOptions(), hand=None, gain=1.0)
  -> Rendered``
- ``render_domination(stacks, camera, rng, *, colours=None, options=RenderOptions(), hand=None,
  gain=1.0) -> Rendered`` (``gain``: extra light level, for flicker). Stacks: playable cells
  only, 0..5 pieces, letters of ``colours`` (default G R B Y of the kit); else ValueError.
- Chessboards and men (issue 19, ``hardware.sim.chessboard``, ``hardware.sim.men``):
  ``render_domination(..., board=ChessBoard(...), men=Men(...))`` draws a chessboard (``material``
  wood | vinyl | print, two square colours, ``a1_dark``, ``border`` 0..2 units with ``labels`` and
  ``edge_line``, the cut corners blocked by ``corners`` tape | paper | pieces | none) instead of the
  kit's plate, and draughts men (ridged side, embossed top, ``crown_share`` crowned), poker chips
  (edge stripes) or plain counters instead of the kit's pieces; presets ``CHESSBOARDS``, colours
  ``PIECE_COLOURS``, ``random_chess_table(rng) -> (board, men, colours)``. Truth then also has
  ``"board"`` and ``"men"`` (their ``to_dict()``). Both default to None: the kit, rendered exactly
  as before. ``ScriptedTable(..., board=, men=)`` passes them on.
- ``render_planar_target(texture_bgr, size_units, camera, rng, *, options=RenderOptions())
  -> np.ndarray`` (BGR uint8).
- ``Rendered(image: BGR uint8 (h, w, 3), truth: dict)``; truth (JSON-able)::

    {"game", "image_size": [w, h], "corners_px": [[x, y] x 4, DESIGN.md corner order],
     "camera": SimCamera.to_dict(), "hand": bool, "hand_pose": {...} | None,
     "hand_box_px": [x0, y0, x1, y1] (pixels the hand covers) | None, "options": {...},
     Dition:     "discs": [{"x", "y", "colour", "centre_px" (top face centre), "base_px",
                            "occluded" (centre under the hand)}],
     Domination: "stacks": {cell: "GRG"}, "tops_px": {cell: [x, y]} (top face centre),
                 "tops_board": {cell: [x, y]}, "occluded": {cell: bool}, "colours": {letter: bgr}}

Scripted match
--------------
- ``ScriptedTable(script, camera, rng, *, game=None, options=RenderOptions(), fps=5.0,
  flicker=0.015, colours=None, realtime=False, variety=None)``: a ``hardware.source.FrameSource``
  (``variety``: a Dition table of ``hardware.sim.variety``, felt or wood or other discs); ``read()``
  returns ``Frame(image, timestamp_s = index / fps, index, meta={"truth", "step", "label",
  "phase"})`` (phase: still | enter | over | leave), raises ``CorruptFrameError`` for dropped
  frames and ``EndOfStream`` at the end (or after ``close()``); ``len(table)`` = frames in the
  script, iterating yields the good frames. ``realtime=True`` paces ``read()`` at ``fps``.
- Steps: ``Still(pieces, frames)``, ``HandPlace(before, after, target, frames)``,
  ``HandRemove(before, after, targets, frames)``, ``Bump(camera_after)``, ``Relight(options,
  variety)`` (the light or the varied table changes: a lamp switched on), ``Drop(frames)``; each
  with an optional ``label`` copied into frame meta. ``pieces``: tuple of SimDisc (Dition) or a
  stacks mapping (Domination); targets are board (x, y) or cell names.

Helpers: ``random_discs(rng, n, *, touching_fraction=0.0, colours="alternate")``
(non-overlapping; a share of them touching an earlier disc; alternating or random colours) and
``random_stacks(rng, n, letters="GR")`` (geometry only, no rules).

Physical kit constants (duplicated from vision/markers.py on purpose): ``hardware.sim.layout``
(``MARKERS[game] = (ids, side, centres)``, ``MARKER_QUIET_ZONE``, line widths, piece sizes,
``DOMINATION_COLOURS``, ``CUT_CELLS``, ``cell_centre``, ``playable_cells``).
"""

from hardware.sim.camera import SimCamera, camera_for_target, look_at_board, random_camera
from hardware.sim.hand import HandPose
from hardware.sim.options import RenderOptions
from hardware.sim.positions import random_discs, random_stacks
from hardware.sim.render import (
    Rendered,
    SimDisc,
    render_dition,
    render_domination,
    render_planar_target,
)
from hardware.sim.script import Bump, Drop, HandPlace, HandRemove, Relight, ScriptedTable, Still

__all__ = [
    "Bump",
    "Drop",
    "HandPlace",
    "HandPose",
    "HandRemove",
    "Relight",
    "RenderOptions",
    "Rendered",
    "ScriptedTable",
    "SimCamera",
    "SimDisc",
    "Still",
    "camera_for_target",
    "look_at_board",
    "random_camera",
    "random_discs",
    "random_stacks",
    "render_dition",
    "render_domination",
    "render_planar_target",
]
