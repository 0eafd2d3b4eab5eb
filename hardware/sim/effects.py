"""Camera and room effects on a rendered float32 BGR frame: light, cast, blur, noise, JPEG."""

from __future__ import annotations

import math
from functools import lru_cache

import cv2
import numpy as np

from hardware.sim.options import RenderOptions


@lru_cache(maxsize=8)
def _light_fields_cached(options: RenderOptions, size: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """(room, lamp): the room's multiplicative field and the lamp's pool (zero without a lamp)."""
    w, h = size
    # evaluate on a small grid, then resize: the field is smooth
    sw, sh = 160, max(2, round(float(160 * h / w)))
    u = (np.arange(sw) + 0.5) / sw
    v = (np.arange(sh) + 0.5) / sh
    uu, vv = np.meshgrid(u, v)
    a = math.radians(options.gradient_angle_deg)
    aspect = h / w
    grad = ((uu - 0.5) * math.cos(a) + (vv - 0.5) * aspect * math.sin(a)) * options.gradient
    hx, hy = options.hot_spot_xy
    diag = math.hypot(1.0, aspect)
    r2 = ((uu - hx) ** 2 + ((vv - hy) * aspect) ** 2) / max(
        options.hot_spot_radius * diag, 1e-6
    ) ** 2
    hot = options.hot_spot_strength * np.exp(-0.5 * r2)
    corner = ((uu - 0.5) ** 2 + ((vv - 0.5) * aspect) ** 2) / (0.25 * diag**2)
    vig = 1.0 - options.vignette * corner
    if options.lamp_height_units is None:
        # the room's own light, uneven: one broad source, its hot spot and its shadows together
        fields = (options.ambient * (1.0 + grad + hot) * vig, np.zeros_like(hot))
    else:
        # a lamp: its pool of light is added (to what it lights: `apply_effects`' `lamp`)
        fields = (options.ambient * (1.0 + grad) * vig, options.ambient * hot * vig)
    out = []
    for field in fields:
        big = cv2.resize(field.astype(np.float32), (w, h), interpolation=cv2.INTER_CUBIC)
        big.setflags(write=False)
        out.append(big)
    return out[0], out[1]


def light_field(options: RenderOptions, size: tuple[int, int]) -> np.ndarray:
    """(h, w) float32 multiplicative illumination: ambient, gradient, hot spot, vignette (the hot
    spot left out when it is a lamp's: `lamp_field`)."""
    return _light_fields_cached(options, (int(size[0]), int(size[1])))[0]


def lamp_field(options: RenderOptions, size: tuple[int, int]) -> np.ndarray:
    """(h, w) float32 the lamp's pool of light relative to the board's albedo (ambient, hot spot,
    vignette), zero when `options.lamp_height_units` is None (the hot spot is then in `light_field`)."""
    return _light_fields_cached(options, (int(size[0]), int(size[1])))[1]


@lru_cache(maxsize=8)
def _glare_cached(options: RenderOptions, size: tuple[int, int],
                  centre: tuple[float, float] | None = None) -> np.ndarray:
    w, h = size
    hx, hy = options.hot_spot_xy if centre is None else centre
    sw, sh = 160, max(2, round(float(160 * h / w)))
    uu, vv = np.meshgrid((np.arange(sw) + 0.5) / sw, (np.arange(sh) + 0.5) / sh)
    aspect = h / w
    r2 = ((uu - hx) ** 2 + ((vv - hy) * aspect) ** 2) / max(
        0.5 * options.hot_spot_radius, 1e-6
    ) ** 2
    g = (255.0 * options.glare * np.exp(-0.5 * r2)).astype(np.float32)
    big = cv2.resize(g, (w, h), interpolation=cv2.INTER_CUBIC)
    big.setflags(write=False)
    return big


def glare_field(options: RenderOptions, size: tuple[int, int],
                centre: tuple[float, float] | None = None) -> np.ndarray:
    """(h, w) float32 grey levels of specular glare, concentrated around `centre` (image
    fractions; None: the hot spot)."""
    return _glare_cached(options, (int(size[0]), int(size[1])), centre)


@lru_cache(maxsize=8)
def _gain_field_cached(options: RenderOptions, size: tuple[int, int], lamp: bool = False) -> np.ndarray:
    field = (lamp_field if lamp else light_field)(options, size)
    cast = np.asarray(options.colour_cast, np.float32)
    out = np.ascontiguousarray(field[..., None] * cast, dtype=np.float32)
    out.setflags(write=False)
    return out


def sensor_noise(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Zero-mean, unit-variance float32 grain: the difference of two uniform random bytes
    (a triangular distribution, close to a sensor's Gaussian grain for the eye and for any
    detector) - several times faster than normal draws at the size of a frame."""
    n = int(np.prod(shape))
    buf = np.frombuffer(rng.bytes(2 * n), np.uint8).reshape(2, 1, n)
    d = cv2.subtract(buf[0], buf[1], dtype=cv2.CV_32F)
    # variance of the difference of two uniforms on {0..255}: 2 * (256^2 - 1) / 12
    d *= np.float32(1.0 / np.sqrt(2 * (256**2 - 1) / 12))
    return d.reshape(shape)


def apply_effects(
    image: np.ndarray,
    options: RenderOptions,
    rng: np.random.Generator,
    *,
    gain: float = 1.0,
    gloss: np.ndarray | None = None,
    blurred: bool = False,
    lamp: np.ndarray | None = None,
    glare_xy: tuple[float, float] | None = None,
) -> np.ndarray:
    """float32 BGR (h, w, 3) picture -> uint8 BGR frame as the camera delivers it.

    Light field (ambient, gradient, hot spot, vignette) and colour cast, `gain` (an extra global
    brightness factor: per-frame flicker), glare on glossy surfaces (`gloss` (h, w) 0..1, e.g.
    the disc faces), optical blur (skipped if the caller has `blurred` the picture already: the
    blur commutes with the smooth light field), brightness-dependent sensor noise, JPEG.
    With `options.lamp_height_units` the hot spot is a lamp's, added: `lamp` is the picture as the lamp
    alone lights it (float32 BGR: its own shadows, the sides at their angle to it; None: `image`).
    `glare_xy`: where the glare is centred (image fractions; None: at the hot spot).
    """
    h, w = image.shape[:2]
    img = cv2.multiply(image, _gain_field_cached(options, (w, h)), scale=float(gain))
    if options.lamp_height_units is not None:
        lit = image if lamp is None else lamp
        img += cv2.multiply(lit, _gain_field_cached(options, (w, h), True), scale=float(gain))
    if gloss is not None and options.glare > 0:
        g = cv2.multiply(glare_field(options, (w, h), glare_xy), gloss)
        img += g[..., None]
    if options.blur_sigma_px > 0 and not blurred:
        img = cv2.GaussianBlur(img, (0, 0), options.blur_sigma_px)
    if options.noise_sigma > 0:
        noise = sensor_noise(rng, img.shape)
        # read noise floor plus shot noise growing with brightness
        shot = cv2.multiply(noise, img, scale=options.noise_sigma / 340.0)
        img = cv2.scaleAdd(noise, options.noise_sigma * 0.5, img)
        img += shot
    out = cv2.convertScaleAbs(cv2.max(img, 0.0))
    if options.jpeg_quality is not None:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(options.jpeg_quality)])
        if not ok:  # pragma: no cover - OpenCV always encodes a valid uint8 image
            raise RuntimeError("JPEG encoding failed")
        out = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return out
