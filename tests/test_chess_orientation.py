"""a8 where the players' start position says it is, on a chessboard (issue 19).

A chessboard looks the same after half a turn, so the finder puts a8 on one of its two light
corners by guess (the top-left one in the picture). The 2-player standard start is not the same
after half a turn (its colours swap), so with colours known as physical colours (`referee
calibrate colours`) it tells which light corner is a8: the referee turns the board once, and
keeps it through bumps.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hardware.sim import RenderOptions, look_at_board, render_domination
from hardware.sim.chessboard import CHESSBOARDS
from hardware.sim.men import PIECE_COLOURS, Men
from referee.domination_match import DominationMatch, half_turned, tops_of
from referee.log import MatchLog
from referee.loop import LoopSettings, Referee
from rules import domination as rdom
from vision.board import find_board
from vision.chess_tops import learn_chess_colours
from vision.chessboard import turn_board

COLOURS = {"G": PIECE_COLOURS["K"], "R": PIECE_COLOURS["W"]}  # black and white men


def _turns_to_truth(found: np.ndarray, truth: np.ndarray) -> int:
    return min(range(4), key=lambda k: float(np.linalg.norm(np.roll(found, -k, axis=0) - truth)))


def _start_stacks() -> dict[str, str]:
    return {c: t for c, t in tops_of(rdom.State.standard_start(("G", "R"))).items() if t != "."}


def test_the_start_turns_a_chessboard_whose_a8_the_finder_put_at_h1(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    # the players sit across: the board upside down in the picture, a8 at its bottom-right
    cam = look_at_board("domination", image_size=(1024, 768), tilt_deg=6.0, rotation_deg=180.0)
    board, men = CHESSBOARDS["wood"].replace(corners="tape"), Men(kind="draughts")
    opts = RenderOptions.clean()
    frames = [render_domination(_start_stacks(), cam, rng, colours=COLOURS, options=opts, board=board, men=men)
              for _ in range(6)]
    truth = np.array(frames[0].truth["corners_px"])
    guess = find_board(frames[0].image, game="domination")
    assert guess.method == "chessboard"
    assert _turns_to_truth(guess.corners_px, truth) == 2  # the finder's guess is h1
    # the colours as `referee calibrate colours` learns them: physical, from cells named by hand
    model = learn_chess_colours(frames[0].image, turn_board(guess, 2),
                                {c: s[-1] for c, s in frames[0].truth["stacks"].items()})
    log = MatchLog(tmp_path / "m.sqlite")
    events: list[dict] = []
    referee = Referee(DominationMatch(players=("G", "R")), log, log.new_match("domination", ("G", "R")),
                      colours=model, listener=events.append, settings=LoopSettings(use_motion=False, refind_every=1))
    for f in frames:
        referee.process(f.image)
    turned = [e for e in events if e["type"] == "board" and e.get("code") == "turned"]
    assert len(turned) == 1, [e["type"] for e in events]
    assert referee.match.phase == "await_move"
    assert not [e for e in events if e.get("code") == "setup"]  # no "set up the start" warning
    # the board now has a8 where the men say, within a few px of the truth
    assert _turns_to_truth(referee.board.corners_px, truth) == 0
    assert float(np.abs(referee.board.corners_px - truth).max()) < 12.0
    assert referee.board.method == "chessboard"
    # a bump (the board shifted and turned a little in the picture): found again, a8 kept
    bumped = look_at_board("domination", image_size=(1024, 768), tilt_deg=6.0, rotation_deg=183.0,
                           target_offset=(0.3, -0.2))
    moved = [render_domination(_start_stacks(), bumped, rng, colours=COLOURS, options=opts, board=board,
                               men=men) for _ in range(3)]
    for f in moved:
        referee.process(f.image)
    truth = np.array(moved[0].truth["corners_px"])
    assert [e for e in events if e.get("code") == "moved"]  # it was found anew, not tracked
    assert float(np.abs(referee.board.corners_px - truth).max()) < 12.0
    assert referee.board.method == "chessboard"
    assert len([e for e in events if e.get("code") == "turned"]) == 1
    assert referee.match.phase == "await_move"


def test_a_half_turned_start_turns_the_board_only_when_its_a8_was_a_guess() -> None:
    start = tops_of(rdom.State.standard_start(("G", "R")))
    read = half_turned(start)
    assert read != start and half_turned(read) == start
    guessed = DominationMatch(players=("G", "R"))
    guessed.board_may_turn = True
    events = guessed.observe(read)
    assert events[0]["type"] == "board" and events[0]["quarter_turns"] == 2
    assert guessed.phase == "await_move"
    # the kit's board (markers fix a8) or given corners: the men are set up wrongly instead
    fixed = DominationMatch(players=("G", "R"))
    events = fixed.observe(read)
    assert [e["code"] for e in events] == ["setup"]
    assert fixed.phase == "setup"


def test_a_four_player_start_on_a_chessboard_asks_once_where_a8_is() -> None:
    """No standard layout tells a8 for 3-4 players: the setup question offers "a8 is the other
    light corner", and that answer turns the board (event) and the start with it."""
    players = ("G", "R", "B", "Y")
    read = {"b7": "G", "c7": "R", "d7": "B", "e7": "Y", "c2": "G", "d2": "R", "f2": "B", "g2": "Y"}
    tops = {c: read.get(c, ".") for c in rdom.CELLS}
    match = DominationMatch(players=players)
    match.board_may_turn = True
    (question,) = [e for e in match.observe(tops) if e["type"] == "question"]
    assert [c["id"] for c in question["choices"]] == ["yes", "turned", "no"]
    events = match.answer(question["id"], "turned")
    assert next(e for e in events if e.get("code") == "turned")["quarter_turns"] == 2
    assert match.phase == "await_move"
    expected = half_turned(tops)
    assert {c: t for c, t in tops_of(match.state).items()} == expected
    assert tops_of(match.state)["b7"] == "Y"  # g2's man, half a turn round
    # the kit's board: no such choice (its markers fix a8)
    kit = DominationMatch(players=players)
    (question,) = [e for e in kit.observe(tops) if e["type"] == "question"]
    assert [c["id"] for c in question["choices"]] == ["yes", "no"]
