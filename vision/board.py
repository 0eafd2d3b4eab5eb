"""Find the board in a frame: given corners, ArUco markers, or the game's own board finder.

The stage function is `find_board(frame, params, *, game, corners_px, intrinsics) -> BoardFit`.
Given corners always win; then ArUco markers of the game's layout (`vision.aruco`); then the
game's board finder: the drawn squares of the Dition board (`vision.dition_board`, which also
estimates the lens without intrinsics) or, for Domination, the kit's cell pattern
(`vision.domination_board`), a chessboard's squares (`vision.chessboard`) or an 8x8 drawn as lines
(the Dition line search with `GRID_8X8`, method "lines"); a Domination fit of the kit's cells or of
drawn lines is marked extra["drawn"] when the frame shows a grid drawn on one sheet rather than the
kit's printed board (`vision.domination_board.is_one_sheet`). `board_moved` tells whether the board
left its fit; `drawn_grid_moved` re-measures a board of drawn lines for the referee's bump check.

The shared geometry (BoardFit, homographies, rectification, the camera) is `vision.geometry`.
"""

from __future__ import annotations

import sys
from dataclasses import replace

import numpy as np

from vision.aruco import find_board_aruco
from vision.camera import Intrinsics
from vision.chessboard import ALTERNATING_SHARE, alternating_share, find_chessboard, turn_board
from vision.dition_board import (
    drawn_lines_at,
    find_dition_edge,
    find_dition_lines,
    find_drawn_lines,
    lines_gray,
    refine_dition,
    refine_edge,
    with_estimated_lens,
)
from vision.domination_board import find_domination_board, is_one_sheet
from vision.errors import BoardNotFoundError
from vision.geometry import (
    GRID_8X8,
    BoardFit,
    BoardParams,
    as_gray,
    board_corners_board,
    board_intrinsics,
    check_game,
    fit_from_corners,
    image_to_board,
)
from vision.lens import drawing_for

#: the kit's cell finder is taken at its word from this many of its 52 cells (on a chessboard
#: it saw 8-20 of the light squares, on the kit with men it sees most cells' light corners)
KIT_CELLS_SURE = 26
#: a chessboard's fit is taken at its word from this many of its 49 inner corners: the number
#: `vision.chessboard` measures the camera from (fewer are too few to trust a lattice alone)
CHESS_CORNERS_SURE = 20


#: the chessboard finder's 8x8 stands for given corners when each of its corners lies within this
#: many squares of the given one (a click's error on a 40-100 px square; a fit a square off is not
#: the same board)
GIVEN_CORNERS_SQUARES = 0.25


def domination_at_corners(frame: np.ndarray, given: BoardFit, intrinsics: Intrinsics | None = None) -> BoardFit:
    """What 8x8 the given corners frame, for its reader: where its squares alternate
    (`vision.chessboard.alternating_share`) a chessboard, the chessboard finder's fit in the given
    corner order when it lands on the given corners (its sub-pixel corners, its lens and the camera
    from its grid for the heights), else the given corners marked extra["squares"] ==
    "alternating"; otherwise the kit's printed board or an 8x8 drawn on one sheet, marked
    extra["drawn"] as the finder marks them (`vision.domination_board.is_one_sheet`)."""
    if alternating_share(frame, given, intrinsics) < ALTERNATING_SHARE:
        return replace(given, extra={**given.extra, "drawn": is_one_sheet(frame, given, intrinsics)})
    try:
        chess = find_chessboard(frame, intrinsics=intrinsics)
    except BoardNotFoundError:
        chess = None
    if chess is not None:
        # the finder's corners on the given board's plane, in each of the four corner orders
        found = image_to_board(np.asarray(chess.corners_px, float), given, intrinsics)
        corners = board_corners_board("domination")  # where the given ones lie on it
        errs = [float(np.linalg.norm(np.roll(found, -k, axis=0) - corners, axis=1).max()) for k in range(4)]
        k = int(np.argmin(errs))
        if errs[k] <= GIVEN_CORNERS_SQUARES:
            return turn_board(chess, k, intrinsics)
    return replace(given, extra={**given.extra, "squares": "alternating"})


def find_board(
    frame: np.ndarray,
    params: BoardParams = BoardParams(),
    *,
    game: str = "dition",
    corners_px: np.ndarray | None = None,
    intrinsics: Intrinsics | None = None,
    estimate_lens: bool = True,
) -> BoardFit:
    """Locate the board. Given corners win; then ArUco; then the drawn lines (Dition) or
    vision.domination_board (Domination). Raises BoardNotFoundError naming what was tried.

    Dition without intrinsics (and `estimate_lens`): the lens distortion is estimated from the
    drawn lines (`vision.lens`) and the board re-fitted through it; the fit then carries the
    model (extra["lens"] == "estimated", extra["intrinsics"]) for every later stage."""
    check_game(game)
    if intrinsics is None and estimate_lens and game == "dition":
        plain = find_board(frame, params, game=game, corners_px=corners_px, estimate_lens=False)
        return with_estimated_lens(frame, plain, board_params=params)
    if corners_px is not None:
        given = fit_from_corners(corners_px, game, intrinsics)
        return given if game == "dition" else domination_at_corners(frame, given, intrinsics)
    gray = as_gray(frame)  # validates
    tried: list[str] = []
    if params.use_aruco:
        try:
            return find_board_aruco(gray, game, intrinsics)
        except BoardNotFoundError as exc:
            tried.append(str(exc))
    if game == "domination":
        kit = None
        try:
            kit = find_domination_board(frame, params, corners_px=None, intrinsics=intrinsics)
        except BoardNotFoundError as exc:
            tried.append(str(exc))

        def with_lens(fit: BoardFit) -> BoardFit:
            return fit if intrinsics is not None or not estimate_lens else with_estimated_lens(
                frame, fit, board_params=params)

        def with_sheet(fit: BoardFit) -> BoardFit:
            # the kit's cells and an 8x8 drawn as lines on one sheet are found alike: the fit
            # says which the frame shows (extra["drawn"]), their tops are read differently
            sheet = is_one_sheet(frame, fit, board_intrinsics(fit, intrinsics))
            return replace(fit, extra={**fit.extra, "drawn": sheet})

        # a chessboard's light squares look like the kit's cells too, a few at a time: a kit fit
        # on fewer than half of its 52 cells gives way to a chessboard found in the same frame
        if kit is not None and int(kit.extra.get("cells_found", 0)) >= KIT_CELLS_SURE:
            # an 8x8 drawn in ink passes for the kit's cells (its squares' light middles), and so
            # does the kit without its markers; without a lens model the cells' fit missed by up
            # to 0.23 squares: where the frame shows the grid's lines at the cells' fit, the
            # board is re-fitted on them through the lens from their straightness
            if params.use_lines and intrinsics is None and estimate_lens:
                drawn = drawn_lines_at(frame, kit, GRID_8X8, params)
                if drawn is not None:
                    return with_sheet(with_lens(drawn))
            return with_sheet(kit)
        chess = None
        try:  # a chessboard (issue 19): its 8x8 from the squares' corners
            chess = find_chessboard(frame, intrinsics=intrinsics)
        except BoardNotFoundError as exc:
            tried.append(str(exc))
        # a chessboard's fit on fewer inner corners than it measures the camera on is taken only
        # when no drawn 8x8 is found: a drawn grid's crossings make a few X-junctions too, in a
        # lattice of their own (found 5-7 squares off the grid on 2 frames of 30)
        if chess is not None and int(chess.extra.get("corners_found", 0)) >= CHESS_CORNERS_SURE:
            return chess
        if params.use_lines:  # an 8x8 drawn as a grid of lines on paper, card or felt
            try:
                return with_sheet(with_lens(find_drawn_lines(frame, GRID_8X8, params, intrinsics=intrinsics)))
            except BoardNotFoundError as exc:
                tried.append(str(exc))
        if chess is not None:
            return chess
        if kit is not None:
            return with_sheet(kit)
        raise BoardNotFoundError("; ".join(tried))
    if params.use_lines:
        try:
            return find_dition_lines(frame, params, intrinsics=intrinsics)
        except BoardNotFoundError as exc:
            tried.append(str(exc))
        try:  # no drawn lines: the board's own edge against the table
            return find_dition_edge(frame, params, intrinsics=intrinsics)
        except BoardNotFoundError as exc:
            tried.append("board edge: " + str(exc).removeprefix("dition board: "))
    raise BoardNotFoundError(
        ("; ".join(tried) or "no board finder enabled")
        + ". Print the kit's ArUco markers at the board's corners, make sure the whole board and "
        "its drawn squares (or, with no lines, its edge against a table of another colour) are in "
        "view, or give the corners (--corners x0,y0,x1,y1,x2,y2,x3,y3)"
    )


def board_moved(
    previous: BoardFit,
    frame: np.ndarray,
    params: BoardParams = BoardParams(),
    *,
    intrinsics: Intrinsics | None = None,
) -> bool:
    """True when the board no longer sits where `previous` says (a bump of a few pixels).

    Dition: the drawn squares are re-measured starting from the previous fit; a corner shift
    beyond params.moved_threshold_px, or lines no longer found there, means it moved.
    ArUco fits re-detect the markers. Other fits re-run find_board and compare corners.
    A lens estimated with `previous` (vision.lens) is used when no intrinsics are given.
    """
    shift: float
    intrinsics = board_intrinsics(previous, intrinsics)
    try:
        if previous.method == "edge":
            new = refine_edge(frame, previous.H_image_to_board, params, intrinsics, passes=1)
            if new.support < params.min_support:
                return True
        elif previous.game == "dition" or previous.method == "lines":
            lines = _lines_refined(lines_gray(frame, previous), previous.H_image_to_board, previous, params,
                                   intrinsics, passes=1)
            if lines is None:
                return True
            new = lines
        elif previous.method == "aruco":
            new = find_board_aruco(frame, previous.game, intrinsics)
        else:
            new = find_board(frame, params, game=previous.game, intrinsics=intrinsics)
    except BoardNotFoundError:
        return True
    shift = float(np.max(np.linalg.norm(new.corners_px - previous.corners_px, axis=1)))
    return shift > params.moved_threshold_px


def drawn_grid_moved(
    frame: np.ndarray,
    previous: BoardFit,
    params: BoardParams = BoardParams(),
    *,
    intrinsics: Intrinsics | None = None,
    tolerance_px: float = 1.5,
) -> tuple[bool, BoardFit | None]:
    """Cheap bump check for a board found from its drawn lines (method "lines": an 8x8 drawn on
    a sheet), as `vision.domination_board.domination_board_moved` is for the kit's cells and
    `vision.chessboard.chessboard_moved` for a chessboard: its lines re-measured from where
    `previous` puts them, through the lens `previous` was fitted with (the calibration, or the one
    estimated from its lines). `(False, previous)` when every corner stays within `tolerance_px`;
    `(True, fit)` when the lines are found elsewhere near (`fit` keeps `previous`'s lens, polarity
    and marks); `(True, None)` when they are gone (a large bump, the board covered or removed):
    find it anew with `find_board`."""
    if not tolerance_px > 0:
        raise ValueError(f"tolerance_px must be > 0, got {tolerance_px}")
    cam = board_intrinsics(previous, intrinsics)
    gray = lines_gray(frame, previous)
    near = _lines_refined(gray, previous.H_image_to_board, previous, params, cam, passes=1)
    if near is None:
        return True, None
    if float(np.max(np.linalg.norm(near.corners_px - previous.corners_px, axis=1))) <= tolerance_px:
        return False, previous
    new = _lines_refined(gray, near.H_image_to_board, previous, params, cam, passes=2)
    return True, None if new is None else replace(new, extra=dict(previous.extra))


def _lines_refined(gray: np.ndarray, H_image_to_board: np.ndarray, previous: BoardFit, params: BoardParams,
                   intrinsics: Intrinsics | None, *, passes: int) -> BoardFit | None:
    """`previous`'s drawn lines re-measured in `gray` from where `H_image_to_board` puts them
    (`refine_dition`, `passes` passes), or None when too few of them are found there
    (support under params.min_support)."""
    new = refine_dition(gray, H_image_to_board, params, intrinsics, passes=passes, drawing=drawing_for(previous))
    return new if new.support >= params.min_support else None


if __name__ == "__main__":  # python -m vision.board IMAGE [game]
    import cv2

    img = cv2.imread(sys.argv[1])
    fit = find_board(img, game=sys.argv[2] if len(sys.argv) > 2 else "dition")
    print(fit.to_dict())
