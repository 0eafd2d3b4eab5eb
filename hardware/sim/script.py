"""`ScriptedTable`: a `FrameSource` that plays a scripted match as the camera would see it.

A script is a sequence of steps that know no rules: still scenes, a hand placing or removing
pieces (or hovering: `HandPlace` with the same pieces before and after), a camera bump, a
change of light (`Relight`: a lamp switched on), dropped frames. A Dition table may be one of
the varied simulated table's (`variety`, `hardware.sim.variety`: felt, wood, other discs). The scripts themselves are generated elsewhere (the
referee builds them from the rules engines), so `hardware/` stays free of game logic.

Rendering cost: the static part of each distinct scene is rendered once (cached by the
renderer); every frame only draws the hand (if any) and re-applies light flicker and noise.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hardware.errors import CorruptFrameError, EndOfStream
from hardware.sim.camera import SimCamera
from hardware.sim.chessboard import ChessBoard
from hardware.sim.hand import SKIN_TONES_BGR, SLEEVE_BGR, HandPose
from hardware.sim.layout import board_size, cell_centre
from hardware.sim.men import Men
from hardware.sim.options import DEFAULT_OPTIONS, RenderOptions
from hardware.sim.render import Rendered, SimDisc, render_dition, render_domination
from hardware.sim.variety import Variety, render_varied
from hardware.source import Frame, SourceBase

#: Dition: a tuple of discs; Domination: cell -> bottom-to-top letters
Pieces = Sequence[SimDisc] | Mapping[str, str]
#: board (x, y) in board units, or a Domination cell name
Target = tuple[float, float] | str
#: share of the frame interval the shutter is open (motion blur of a moving hand)
EXPOSURE_FRACTION = 0.25


@dataclass(frozen=True)
class Still:
    """`frames` frames of an untouched board showing `pieces` (None: the pieces as they are)."""

    pieces: Pieces | None = None
    frames: int = 5
    label: Any = None


@dataclass(frozen=True)
class HandPlace:
    """A hand comes in towards `target`, the pieces change from `before` to `after` while it
    covers the target, and the hand leaves. `before` None: the pieces as they are."""

    before: Pieces | None
    after: Pieces
    target: Target
    frames: int = 12
    label: Any = None


@dataclass(frozen=True)
class HandRemove:
    """A hand visits each of `targets` in turn; the pieces that differ between `before` and
    `after` change when the hand is over the target nearest to them."""

    before: Pieces | None
    after: Pieces
    targets: Sequence[Target]
    frames: int = 16
    label: Any = None


@dataclass(frozen=True)
class Bump:
    """The camera is knocked: from the next frame on it has pose `camera_after`."""

    camera_after: SimCamera
    label: Any = None


@dataclass(frozen=True)
class Relight:
    """The light changes (a lamp is switched on, a curtain drawn): from the next frame on the
    table is rendered with `options` and, for Dition, on `variety` (None: as before)."""

    options: RenderOptions | None = None
    variety: Variety | None = None
    label: Any = None


@dataclass(frozen=True)
class Drop:
    """`frames` frames that fail to decode: `read()` raises `CorruptFrameError` for each."""

    frames: int = 1
    label: Any = None


Step = Still | HandPlace | HandRemove | Bump | Relight | Drop


@dataclass(frozen=True)
class _Planned:
    """One frame to produce."""

    step: int
    label: Any
    phase: str
    pieces: Pieces | None = None
    hand: HandPose | None = None
    camera: SimCamera | None = None
    dropped: bool = False
    #: (the render options, the variety) this frame is rendered with (None: the table's)
    look: tuple[RenderOptions, Variety | None] | None = None


def _is_dition(pieces: Pieces) -> bool:
    return not isinstance(pieces, Mapping)


def _norm_pieces(pieces: Pieces) -> Pieces:
    if isinstance(pieces, Mapping):
        return {str(k): str(v) for k, v in pieces.items() if v}
    return tuple(p if isinstance(p, SimDisc) else SimDisc(*p) for p in pieces)


def _target_xy(target: Target) -> np.ndarray:
    if isinstance(target, str):
        return np.array(cell_centre(target))
    x, y = target
    return np.array([float(x), float(y)])


def _items(pieces: Pieces) -> dict[Any, np.ndarray]:
    """Identity -> board position of every piece (a disc, or a cell's whole stack)."""
    if isinstance(pieces, Mapping):
        return {(cell, stack): np.array(cell_centre(cell)) for cell, stack in pieces.items()}
    return {(d.x, d.y, d.colour): np.array([d.x, d.y]) for d in pieces}


def _partial(before: Pieces, after: Pieces, targets: list[np.ndarray]) -> list[Pieces]:
    """States after visiting targets 0..k: each changed piece switches at its nearest target."""
    b, a = _items(before), _items(after)
    removed = [k for k in b if k not in a]
    added = [k for k in a if k not in b]

    def nearest(pos: np.ndarray) -> int:
        return int(np.argmin([np.linalg.norm(pos - t) for t in targets]))

    when = {k: nearest(b[k]) for k in removed}
    when.update({k: nearest(a[k]) for k in added})
    states: list[Pieces] = []
    for visit in range(len(targets)):
        keep = [k for k in b if k not in when or when[k] > visit]
        keep += [k for k in added if when[k] <= visit]
        if isinstance(before, Mapping):
            state: dict[str, str] = {}
            for cell, stack in keep:  # an added stack on a cell replaces the removed one
                state[cell] = stack
            # a cell whose old stack left and whose new stack has not come yet: old one stays
            states.append(state)
        else:
            states.append(tuple(SimDisc(x, y, c) for x, y, c in keep))
    return states


def _ease(t: float) -> float:
    return 0.5 - 0.5 * math.cos(math.pi * min(max(t, 0.0), 1.0))


class ScriptedTable(SourceBase):
    """Plays `script` (a sequence of steps) as camera frames with ground truth.

    Frame meta: {"truth": the renderer's truth dict, "step": index of the step, "label": the
    step's label, "phase": "still" | "enter" | "over" | "leave" | "bump" | "dropped"}.
    `fps` sets the timestamps (frame i at i / fps s); with `realtime=True` `read()` also waits
    until that time. `flicker` is the relative std of the per-frame light level. `variety`
    (Dition only): render on that table of `hardware.sim.variety` (a felt board, other discs,
    other light) instead of the kit's; `Relight` steps may change it, and `options`, mid-match.
    """

    def __init__(
        self,
        script: Sequence[Step],
        camera: SimCamera,
        rng: np.random.Generator,
        *,
        game: str | None = None,
        options: RenderOptions = DEFAULT_OPTIONS,
        fps: float = 5.0,
        flicker: float = 0.015,
        colours: Mapping[str, tuple[int, int, int]] | None = None,
        realtime: bool = False,
        board: ChessBoard | None = None,
        men: Men | None = None,
        variety: Variety | None = None,
    ) -> None:
        if fps <= 0:
            raise ValueError(f"fps must be positive, got {fps}")
        self._rng = rng
        self._options = options
        self._fps = float(fps)
        self._flicker = float(flicker)
        self._colours = colours
        self._board = board
        self._men = men
        self._realtime = realtime
        self._game = game or self._guess_game(script)
        if variety is not None and self._game != "dition":
            raise ValueError(f"a varied table (variety=) is a Dition table, not {self._game}")
        self._look: tuple[RenderOptions, Variety | None] = (options, variety)
        # one hand style per side of the table (the two players), fixed for the match
        self._styles = [
            (
                SKIN_TONES_BGR[int(rng.integers(len(SKIN_TONES_BGR)))],
                SLEEVE_BGR[int(rng.integers(len(SLEEVE_BGR)))] if rng.random() < 0.8 else None,
            )
            for _ in range(2)
        ]
        self._plan = list(self._expand(script, camera))
        self._next = 0
        self._closed = False
        self._t0: float | None = None

    # -- public -----------------------------------------------------------------------------------
    @property
    def game(self) -> str:
        return self._game

    def __len__(self) -> int:
        """Total number of frames (dropped ones included)."""
        return len(self._plan)

    @property
    def remaining(self) -> int:
        return len(self._plan) - self._next

    @property
    def options(self) -> RenderOptions:
        return self._options

    def shown(self) -> tuple[Pieces | None, SimCamera | None]:
        """(the pieces on the table, the camera) as of the last frame read (the first frame's
        before any is read): what a script that carries on from here starts with."""
        if not self._plan:
            return None, None
        planned = self._plan[min(max(self._next - 1, 0), len(self._plan) - 1)]
        return planned.pieces, planned.camera

    def read(self) -> Frame:
        if self._closed:
            raise EndOfStream("the scripted table is closed")
        if self._next >= len(self._plan):
            raise EndOfStream(f"the script has ended after {len(self._plan)} frames")
        index = self._next
        self._next += 1
        planned = self._plan[index]
        timestamp = index / self._fps
        if self._realtime:
            if self._t0 is None:
                self._t0 = time.monotonic()
            delay = self._t0 + timestamp - time.monotonic()
            if delay > 0:
                time.sleep(delay)
        if planned.dropped:
            raise CorruptFrameError(f"frame {index} (step {planned.step}) dropped by the script")
        gain = 1.0 + self._flicker * float(self._rng.standard_normal())
        rendered = self._render(planned, gain)
        meta = {
            "truth": rendered.truth,
            "step": planned.step,
            "label": planned.label,
            "phase": planned.phase,
        }
        return Frame(rendered.image, timestamp, index, meta)

    def close(self) -> None:
        self._closed = True

    def __iter__(self) -> Iterator[Frame]:
        """Frames until the end, skipping dropped ones."""
        while True:
            try:
                yield self.read()
            except CorruptFrameError:
                continue
            except EndOfStream:
                return

    # -- planning ------------------------------------------------------------------------------
    @staticmethod
    def _guess_game(script: Sequence[Step]) -> str:
        for step in script:
            for attr in ("pieces", "after", "before"):
                p = getattr(step, attr, None)
                if p is not None:
                    return "dition" if _is_dition(p) else "domination"
        raise ValueError("cannot tell the game from a script without pieces: pass game=")

    def _render(self, planned: _Planned, gain: float) -> Rendered:
        assert planned.camera is not None and planned.pieces is not None
        options, variety = planned.look or self._look
        if self._game == "dition":
            if variety is not None:
                return render_varied(planned.pieces, planned.camera, self._rng, variety,  # type: ignore[arg-type]
                                     options, hand=planned.hand, gain=gain)
            return render_dition(
                planned.pieces,
                planned.camera,
                self._rng,  # type: ignore[arg-type]
                options=options,
                hand=planned.hand,
                gain=gain,
            )
        return render_domination(
            planned.pieces,
            planned.camera,
            self._rng,  # type: ignore[arg-type]
            colours=self._colours,
            options=options,
            hand=planned.hand,
            gain=gain,
            board=self._board,
            men=self._men,
        )

    def _hand_for(self, targets: list[np.ndarray]) -> tuple[float, int]:
        """Arm direction (degrees) and player side for a reach towards `targets`."""
        s = board_size(self._game)
        centre = np.mean(targets, axis=0)
        side = 1 if centre[1] >= s / 2 else 0  # the player sitting nearer
        base = 90.0 if side == 1 else -90.0
        return base + float(self._rng.uniform(-35, 35)), side

    def _pose(
        self,
        xy: np.ndarray,
        angle: float,
        side: int,
        height_mm: float,
        step: np.ndarray | None = None,
    ) -> HandPose:
        """`step`: the hand's displacement since the last frame (board units): a fraction of it
        happens during the exposure and smears the hand."""
        skin, sleeve = self._styles[side]
        blur = (
            (0.0, 0.0)
            if step is None
            else (float(step[0]) * EXPOSURE_FRACTION, float(step[1]) * EXPOSURE_FRACTION)
        )
        return HandPose(
            float(xy[0]),
            float(xy[1]),
            angle,
            height_mm=height_mm,
            spread=0.35,
            skin_bgr=skin,
            sleeve_bgr=sleeve,
            blur_units=blur,
        )

    def _reach(
        self,
        i: int,
        label: Any,
        camera: SimCamera,
        states: list[Pieces],
        first: Pieces,
        targets: list[np.ndarray],
        frames: int,
    ) -> Iterator[_Planned]:
        """Enter, visit every target (switching to states[k] while over target k), leave."""
        if frames < 3:
            raise ValueError(f"step {i}: a hand action needs at least 3 frames, got {frames}")
        angle, side = self._hand_for(targets)
        s = board_size(self._game)
        away = np.array([math.cos(math.radians(angle)), math.sin(math.radians(angle))])
        outside = targets[0] + away * 0.8 * s
        n_enter = max(1, round(float(frames * 0.3)))
        n_leave = max(1, round(float(frames * 0.3)))
        n_over = max(1, frames - n_enter - n_leave)
        prev = outside
        for k in range(n_enter):
            t = _ease((k + 1) / (n_enter + 1))
            xy = outside + (targets[0] - outside) * t
            yield _Planned(
                i,
                label,
                "enter",
                first,
                self._pose(xy, angle, side, 60 - 35 * t, xy - prev),
                camera,
            )
            prev = xy
        # over the board: split the frames between the targets, switching pieces mid-visit
        per = [
            n_over // len(targets) + (1 if k < n_over % len(targets) else 0)
            for k in range(len(targets))
        ]
        current = first
        for k, (target, n) in enumerate(zip(targets, per)):
            for f in range(n):
                if f >= n // 2:
                    current = states[k]
                wobble = self._rng.normal(0, 0.03 * s / 20, 2)
                xy, step = target + wobble, None
                if f == 0 and k > 0 and n > 1:
                    # on its way from the previous target, lifted a little and moving
                    step = target - targets[k - 1]
                    xy = (targets[k - 1] + target) / 2
                yield _Planned(
                    i,
                    label,
                    "over",
                    current,
                    self._pose(xy, angle, side, 20.0 if step is None else 35.0, step),
                    camera,
                )
            current = states[k]
        last = targets[-1]
        back = last + away * 0.8 * s
        prev = last
        for k in range(n_leave):
            t = _ease((k + 1) / (n_leave + 1))
            xy = last + (back - last) * t
            yield _Planned(
                i,
                label,
                "leave",
                current,
                self._pose(xy, angle, side, 25 + 35 * t, xy - prev),
                camera,
            )
            prev = xy

    def _expand(self, script: Sequence[Step], camera: SimCamera) -> Iterator[_Planned]:
        """Every frame of `script`, each with the look (options, variety) it is rendered with."""
        look = self._look
        for item in self._steps(script, camera):
            if isinstance(item, Relight):
                look = (item.options or look[0], item.variety or look[1])
                if look[1] is not None and self._game != "dition":
                    raise ValueError(f"a varied table (Relight variety=) is a Dition table, not {self._game}")
                continue
            yield dataclasses.replace(item, look=look)

    def _steps(self, script: Sequence[Step], camera: SimCamera) -> Iterator[_Planned | Relight]:
        pieces: Pieces | None = None
        for i, step in enumerate(script):
            if not isinstance(step, (Still, HandPlace, HandRemove, Bump, Relight, Drop)):
                raise TypeError(f"step {i}: unknown script step {step!r}")
            label = step.label
            if isinstance(step, Still):
                if step.pieces is not None:
                    pieces = _norm_pieces(step.pieces)
                if pieces is None:
                    raise ValueError(f"step {i}: Still without pieces before any pieces are known")
                for _ in range(step.frames):
                    yield _Planned(i, label, "still", pieces, None, camera)
            elif isinstance(step, (HandPlace, HandRemove)):
                before = pieces if step.before is None else _norm_pieces(step.before)
                if before is None:
                    raise ValueError(f"step {i}: {type(step).__name__} needs `before` pieces")
                after = _norm_pieces(step.after)
                if _is_dition(before) != _is_dition(after):
                    raise ValueError(
                        f"step {i}: `before` and `after` are pieces of different games"
                    )
                raw = [step.target] if isinstance(step, HandPlace) else list(step.targets)
                if not raw:
                    raise ValueError(f"step {i}: HandRemove needs at least one target")
                targets = [_target_xy(t) for t in raw]
                states = _partial(before, after, targets)
                states[-1] = after
                yield from self._reach(i, label, camera, states, before, targets, step.frames)
                pieces = after
            elif isinstance(step, Bump):
                if tuple(step.camera_after.image_size) != tuple(camera.image_size):
                    raise ValueError(
                        f"step {i}: a bump cannot change the image size "
                        f"({camera.image_size} -> {step.camera_after.image_size})"
                    )
                camera = step.camera_after
            elif isinstance(step, Relight):
                yield step
            elif isinstance(step, Drop):
                for _ in range(step.frames):
                    yield _Planned(i, label, "dropped", pieces, None, camera, dropped=True)
            else:
                raise TypeError(f"step {i}: unknown script step {step!r}")
