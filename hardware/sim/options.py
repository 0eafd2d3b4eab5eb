"""`RenderOptions`: the picture conditions of a simulated frame (lighting, lens, sensor, codec)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class RenderOptions:
    """How a frame is rendered. Defaults: a decent indoor photo (mild effects, no randomness
    beyond the sensor noise drawn from the injected generator).

    Geometry: `supersample` (render at this integer factor, then INTER_AREA down), thicknesses in
    board units, `markers` (ArUco markers at the board corners).
    Light: `ambient` (overall gain), `gradient` (relative brightness change across the image along
    `gradient_angle_deg`), `hot_spot_xy` (in image fractions 0..1) with `hot_spot_strength`
    (relative brightening at its centre) and `hot_spot_radius` (fraction of the image diagonal),
    `glare` (extra additive specular glare on glossy discs near the hot spot, 0..1).
    `lamp_height_units` (board units; None: the hot spot is the room's own light, uneven, as a window
    or a ceiling's bounce is: a broad source, so it multiplies the whole picture, the room's
    soft shadows included): a number makes the hot spot a lamp, a compact source that high above
    the board's point under `hot_spot_xy`, whose pool of light is the hot spot; its light adds
    to the room's (`hardware.sim.render`: the lamp's own hard shadows, the discs' sides lit at
    their angle to it).
    Shadows: `shadow` (0 = none, 1 = black), `light_dir` (x, y) board-frame offset of a shadow per
    unit of height, `shadow_blur_units` (softness).
    Camera: `colour_cast` (b, g, r gains), `noise_sigma` (grey levels), `blur_sigma_px`,
    `jpeg_quality` (None = no compression), `vignette` (relative darkening at the corners).
    """

    supersample: int = 2
    disc_thickness: float = 0.08
    piece_thickness: float = 0.12
    markers: bool = True
    ambient: float = 1.0
    gradient: float = 0.10
    gradient_angle_deg: float = 30.0
    hot_spot_xy: tuple[float, float] = (0.62, 0.38)
    hot_spot_strength: float = 0.12
    hot_spot_radius: float = 0.25
    glare: float = 0.12
    colour_cast: tuple[float, float, float] = (0.97, 1.0, 1.03)
    noise_sigma: float = 2.0
    blur_sigma_px: float = 0.6
    jpeg_quality: int | None = 90
    vignette: float = 0.12
    shadow: float = 0.35
    light_dir: tuple[float, float] = (0.35, 0.25)
    shadow_blur_units: float = 0.12
    table_texture: bool = True
    lamp_height_units: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.supersample, int) or not 1 <= self.supersample <= 6:
            raise ValueError(
                f"RenderOptions.supersample must be an integer 1..6, got {self.supersample!r}"
            )
        if not 0 < self.disc_thickness < 1 or not 0 < self.piece_thickness < 1:
            raise ValueError(
                f"RenderOptions: thicknesses must be in (0, 1) board units, got "
                f"disc_thickness={self.disc_thickness}, piece_thickness={self.piece_thickness}"
            )
        if self.jpeg_quality is not None and not 1 <= self.jpeg_quality <= 100:
            raise ValueError(
                f"RenderOptions.jpeg_quality must be 1..100 or None, got {self.jpeg_quality}"
            )
        if self.noise_sigma < 0 or self.blur_sigma_px < 0:
            raise ValueError("RenderOptions: noise_sigma and blur_sigma_px must be >= 0")
        if not 0 <= self.shadow <= 1:
            raise ValueError(f"RenderOptions.shadow must be in [0, 1], got {self.shadow}")
        tops = max(self.disc_thickness, self.piece_thickness)
        if self.lamp_height_units is not None and not self.lamp_height_units > tops:
            raise ValueError(
                f"RenderOptions.lamp_height_units must be above the pieces' tops, got {self.lamp_height_units}"
            )
        if len(self.colour_cast) != 3 or min(self.colour_cast) <= 0:
            raise ValueError(
                f"RenderOptions.colour_cast must be 3 positive gains, got {self.colour_cast}"
            )

    @classmethod
    def clean(cls, **changes: Any) -> RenderOptions:
        """Noiseless, evenly lit, uncompressed, unblurred: for exact geometry tests."""
        base: dict[str, Any] = {
            "gradient": 0.0,
            "hot_spot_strength": 0.0,
            "glare": 0.0,
            "colour_cast": (1.0, 1.0, 1.0),
            "noise_sigma": 0.0,
            "blur_sigma_px": 0.0,
            "jpeg_quality": None,
            "vignette": 0.0,
            "shadow": 0.0,
            "table_texture": False,
        }
        base.update(changes)
        return cls(**base)  # type: ignore[arg-type]

    @classmethod
    def random(cls, rng: np.random.Generator, **changes: Any) -> RenderOptions:
        """Varied but plausible conditions (a club room, a kitchen table, a window nearby)."""
        cast = rng.uniform(0.95, 1.05, size=3)
        cast /= cast.mean()
        base: dict[str, Any] = {
            "ambient": float(rng.uniform(0.85, 1.1)),
            "gradient": float(rng.uniform(0.0, 0.3)),
            "gradient_angle_deg": float(rng.uniform(0, 360)),
            "hot_spot_xy": (float(rng.uniform(0.15, 0.85)), float(rng.uniform(0.15, 0.85))),
            "hot_spot_strength": float(rng.uniform(0.0, 0.3)),
            "hot_spot_radius": float(rng.uniform(0.12, 0.4)),
            "glare": float(rng.uniform(0.0, 0.35)),
            "colour_cast": tuple(float(c) for c in cast),
            "noise_sigma": float(rng.uniform(1.0, 4.5)),
            "blur_sigma_px": float(rng.uniform(0.3, 1.1)),
            "jpeg_quality": int(rng.integers(70, 96)),
            "vignette": float(rng.uniform(0.0, 0.25)),
            "shadow": float(rng.uniform(0.15, 0.5)),
            "light_dir": (float(rng.uniform(-0.6, 0.6)), float(rng.uniform(-0.6, 0.6))),
            "shadow_blur_units": float(rng.uniform(0.06, 0.25)),
        }
        base.update(changes)
        return cls(**base)  # type: ignore[arg-type]

    def replace(self, **changes: Any) -> RenderOptions:
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in d.items()}


#: the shipped defaults (a module-level instance, used as the default argument everywhere)
DEFAULT_OPTIONS = RenderOptions()
