"""A fake `Picamera2`, written against the real picamera2 API, with fault injection.

The real class (raspberrypi/picamera2, `picamera2/picamera2.py`) cannot be imported off a Pi
because it needs `libcamera`. This fake keeps its names and signatures and its observable
behaviour, so `Picamera2Source` is tested on any machine:

- `Picamera2(camera_num=0, verbose_console=None, tuning=None, allocator=None)`: an index with no
  camera raises `IndexError` (as `global_camera_info()[camera_num]` does in the real one); a camera
  held elsewhere raises `RuntimeError("Camera __init__ sequence did not complete.")`.
- `global_camera_info()` (static): one dict per camera with "Model", "Location", "Rotation", "Id",
  "Num".
- `create_preview_configuration / create_still_configuration / create_video_configuration(main={},
  lores=None, raw={}, transform=None, colour_space=None, buffer_count=..., controls={},
  display=..., encode=..., queue=True) -> dict`, `configure(camera_config="preview")`,
  `start(config=None, show_preview=False)`, `stop()`, `close()`, context manager.
- `capture_array(name="main", wait=None, signal_function=None)`, `capture_arrays(names=["main"],
  ...) -> (arrays, metadata)`, `capture_metadata(wait=None, ...)`, `capture_request(wait=None, ...)
  -> request` with `make_array(name)`, `get_metadata()`, `release()`. A float `wait` is a timeout:
  `TimeoutError` when no frame comes (as `Job.get_result(timeout)` raises in the real one).
- `set_controls(dict)` (unknown control: `RuntimeError`), `camera_controls` {name: (min, max,
  default)}, `camera_properties`, `sensor_resolution`.

Pixel formats are honoured as in memory on a Pi: "RGB888" hands out B, G, R bytes (what OpenCV
wants), "BGR888" hands out R, G, B, "XBGR8888"/"XRGB8888" add a fourth byte (255).

The fake auto-exposure / auto-white-balance converge over `settle_frames` frames: until then the
image is darker and the metadata (ExposureTime, AnalogueGain, ColourGains, AeLocked) still moving.
Manual ExposureTime/AnalogueGain (AeEnable False) are honoured in the picture's brightness.

Faults (`FakeCamera` fields): `busy` (held by another process), `fail_every_n` (every n-th capture
raises RuntimeError), `corrupt_every_n` (every n-th frame is a truncated buffer),
`disconnect_after_n` (after n frames the camera stops delivering: captures time out).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Self

import numpy as np

from hardware.source import BgrImage

#: (min, max, default) per control, as the real `camera_controls` property reports them (imx708)
_CONTROLS_COMMON: dict[str, tuple[Any, Any, Any]] = {
    "AeEnable": (False, True, None),
    "AwbEnable": (False, True, None),
    "ExposureTime": (26, 220417486, 20000),
    "AnalogueGain": (1.0, 16.0, 1.0),
    "ColourGains": (0.0, 32.0, None),
    "Brightness": (-1.0, 1.0, 0.0),
    "Contrast": (0.0, 32.0, 1.0),
    "FrameDurationLimits": (33333, 120000, 33333),
    "NoiseReductionMode": (0, 4, 0),
    "ScalerCrop": ((0, 0, 0, 0), (65535, 65535, 65535, 65535), (0, 0, 4608, 2592)),
}
_CONTROLS_AUTOFOCUS: dict[str, tuple[Any, Any, Any]] = {
    "AfMode": (0, 2, 0),
    "AfTrigger": (0, 1, 0),
    "LensPosition": (0.0, 15.0, 1.0),
}

#: sensor model -> full resolution (w, h)
SENSOR_RESOLUTIONS: dict[str, tuple[int, int]] = {
    "imx708": (4608, 2592),
    "imx708_wide": (4608, 2592),
    "imx219": (3280, 2464),
    "imx477": (4056, 3040),
    "ov5647": (2592, 1944),
}

_FORMATS = ("RGB888", "BGR888", "XBGR8888", "XRGB8888")


def _default_scene(index: int, size: tuple[int, int]) -> BgrImage:
    """A beige plate with a dark square outline and a moving disc: changes every frame."""
    width, height = size
    image = np.full((height, width, 3), (170, 200, 215), np.uint8)
    margin = min(width, height) // 8
    image[margin : height - margin, margin : margin + 2] = 40
    image[margin : height - margin, width - margin - 2 : width - margin] = 40
    image[margin : margin + 2, margin : width - margin] = 40
    image[height - margin - 2 : height - margin, margin : width - margin] = 40
    radius = max(2, min(width, height) // 20)
    cx = margin + radius + (index * 3) % max(1, width - 2 * margin - 2 * radius)
    yy, xx = np.ogrid[:height, :width]
    image[(xx - cx) ** 2 + (yy - height // 2) ** 2 <= radius**2] = (30, 30, 30)
    return image


@dataclass
class FakeCamera:
    """One fake camera module: what it shows, how it behaves, which faults it injects."""

    model: str = "imx708"
    #: frame source: `frame_fn(index, (w, h)) -> BGR image`; else `image` (resized); else a scene
    frame_fn: Callable[[int, tuple[int, int]], BgrImage] | None = None
    image: BgrImage | None = None
    fps: float = 30.0
    #: the fake AE/AWB reach their targets after this many frames
    settle_frames: int = 8
    target_exposure_us: int = 16000
    target_gain: float = 2.0
    target_colour_gains: tuple[float, float] = (1.9, 1.6)
    busy: bool = False
    fail_every_n: int | None = None
    corrupt_every_n: int | None = None
    disconnect_after_n: int | None = None
    location: int = 2
    rotation: int = 180

    @property
    def has_autofocus(self) -> bool:
        return self.model.startswith("imx708")


@dataclass
class FakeCameraSystem:
    """The cameras a fake `libcamera` sees; `picamera2_class` is a `Picamera2` bound to them."""

    cameras: list[FakeCamera] = field(default_factory=lambda: [FakeCamera()])
    opened: set[int] = field(default_factory=set)
    #: every `Picamera2` instance ever made, newest last (tests look at what the source did)
    instances: list[Any] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def picamera2_class(self) -> type[Picamera2]:
        system = self

        class BoundPicamera2(Picamera2):
            _system = system

        BoundPicamera2.__name__ = "Picamera2"
        BoundPicamera2.__qualname__ = "Picamera2"
        return BoundPicamera2


class _FakeRequest:
    """Mirrors `picamera2.request.CompletedRequest`: `make_array`, `get_metadata`, `release`."""

    def __init__(self, arrays: dict[str, np.ndarray], metadata: dict[str, Any]) -> None:
        self._arrays = arrays
        self._metadata = metadata
        self.released = False

    def make_array(self, name: str) -> np.ndarray:
        if self.released:
            raise RuntimeError("request already released")
        if name not in self._arrays:
            raise RuntimeError(f"Stream {name!r} is not defined")
        return self._arrays[name].copy()

    def get_metadata(self) -> dict[str, Any]:
        return dict(self._metadata)

    def release(self) -> None:
        self.released = True


class Picamera2:
    """The fake. Use `FakeCameraSystem(...).picamera2_class`; the bare class has one imx708."""

    _system: FakeCameraSystem = FakeCameraSystem()

    @staticmethod
    def _describe(camera: FakeCamera, num: int) -> dict[str, Any]:
        return {
            "Model": camera.model,
            "Location": camera.location,
            "Rotation": camera.rotation,
            "Id": f"/base/axi/pcie@120000/rp1/i2c@88000/{camera.model}@1a#{num}",
            "Num": num,
        }

    @classmethod
    def _cameras(cls) -> list[FakeCamera]:
        return cls._system.cameras

    # The real one is a staticmethod reading the libcamera CameraManager; the fake reads its
    # system, so it is a classmethod (called the same way: `Picamera2.global_camera_info()`).
    @classmethod
    def global_camera_info(cls) -> list[dict[str, Any]]:
        return [cls._describe(c, i) for i, c in enumerate(cls._cameras())]

    def __init__(
        self,
        camera_num: int = 0,
        verbose_console: int | None = None,
        tuning: Any = None,
        allocator: Any = None,
    ) -> None:
        self.is_open = False
        self.started = False
        info = self.global_camera_info()[camera_num]  # IndexError, as in the real one
        self.camera_idx: int = info["Num"]
        self._camera = self._cameras()[self.camera_idx]
        system = self._system
        with system.lock:
            if self._camera.busy or self.camera_idx in system.opened:
                # the real one logs "Failed to acquire camera: Device or resource busy"
                raise RuntimeError("Camera __init__ sequence did not complete.")
            system.opened.add(self.camera_idx)
            system.instances.append(self)
        self.is_open = True
        self.sensor_resolution: tuple[int, int] = SENSOR_RESOLUTIONS.get(
            self._camera.model, (1920, 1080)
        )
        self.camera_config: dict[str, Any] | None = None
        self.controls_set: list[dict[str, Any]] = []
        self._controls: dict[str, Any] = {}
        self._frames = 0
        self._captures = 0
        self._last_frame_time = 0.0
        self._resized: tuple[tuple[int, int], BgrImage] | None = None
        self._lock = threading.Lock()

    # --- properties -------------------------------------------------------------------------
    @property
    def camera_controls(self) -> dict[str, tuple[Any, Any, Any]]:
        controls = dict(_CONTROLS_COMMON)
        if self._camera.has_autofocus:
            controls |= _CONTROLS_AUTOFOCUS
        return controls

    @property
    def camera_properties(self) -> dict[str, Any]:
        return {
            "Model": self._camera.model,
            "PixelArraySize": self.sensor_resolution,
            "Location": self._camera.location,
            "Rotation": self._camera.rotation,
        }

    # --- configuration ----------------------------------------------------------------------
    def _make_config(
        self,
        use_case: str,
        default_main: dict[str, Any],
        main: Mapping[str, Any],
        lores: Mapping[str, Any] | None,
        raw: Mapping[str, Any] | None,
        transform: Any,
        colour_space: Any,
        buffer_count: int,
        controls: Mapping[str, Any],
        display: str | None,
        encode: str | None,
        queue: bool,
    ) -> dict[str, Any]:
        if not self.is_open:
            raise RuntimeError("Camera not opened")
        stream = dict(default_main)
        for key, value in main.items():
            if key not in ("format", "size"):
                raise ValueError(
                    f"Bad key {key!r}: valid stream configuration keys are ('format', 'size')"
                )
            stream[key] = value
        return {
            "use_case": use_case,
            "transform": transform,
            "colour_space": colour_space,
            "buffer_count": buffer_count,
            "queue": queue,
            "main": stream,
            "lores": dict(lores) if lores is not None else None,
            "raw": dict(raw) if raw is not None else None,
            "controls": dict(controls),
            "display": display,
            "encode": encode,
        }

    def create_preview_configuration(
        self, main: Mapping[str, Any] = {}, lores: Mapping[str, Any] | None = None,
        raw: Mapping[str, Any] | None = {}, transform: Any = None, colour_space: Any = None,
        buffer_count: int = 4, controls: Mapping[str, Any] = {}, display: str | None = "main",
        encode: str | None = "main", queue: bool = True,
    ) -> dict[str, Any]:
        return self._make_config(
            "preview", {"format": "XBGR8888", "size": (640, 480)}, main, lores, raw, transform,
            colour_space, buffer_count, controls, display, encode, queue,
        )

    def create_still_configuration(
        self, main: Mapping[str, Any] = {}, lores: Mapping[str, Any] | None = None,
        raw: Mapping[str, Any] | None = {}, transform: Any = None, colour_space: Any = None,
        buffer_count: int = 1, controls: Mapping[str, Any] = {}, display: str | None = None,
        encode: str | None = None, queue: bool = True,
    ) -> dict[str, Any]:
        return self._make_config(
            "still", {"format": "BGR888", "size": self.sensor_resolution}, main, lores, raw,
            transform, colour_space, buffer_count, controls, display, encode, queue,
        )

    def create_video_configuration(
        self, main: Mapping[str, Any] = {}, lores: Mapping[str, Any] | None = None,
        raw: Mapping[str, Any] | None = {}, transform: Any = None, colour_space: Any = None,
        buffer_count: int = 6, controls: Mapping[str, Any] = {}, display: str | None = "main",
        encode: str | None = "main", queue: bool = True,
    ) -> dict[str, Any]:
        return self._make_config(
            "video", {"format": "XBGR8888", "size": (1280, 720)}, main, lores, raw, transform,
            colour_space, buffer_count, controls, display, encode, queue,
        )

    def configure(self, camera_config: dict[str, Any] | str = "preview") -> None:
        if isinstance(camera_config, str):
            makers = {"preview": self.create_preview_configuration,
                      "still": self.create_still_configuration,
                      "video": self.create_video_configuration}
            camera_config = makers[camera_config]()
        main = camera_config["main"]
        if main["format"] not in _FORMATS:
            raise RuntimeError(f"Bad format {main['format']} in stream main")
        size = main["size"]
        if type(size) is not tuple or len(size) != 2:
            raise RuntimeError("size in main stream should be (width, height)")
        if size[0] % 2 or size[1] % 2:
            raise RuntimeError("width and height should be even")
        if self.started:
            raise RuntimeError("Camera must be stopped before configuring")
        self.camera_config = camera_config
        self._controls = dict(camera_config.get("controls", {}))

    def camera_configuration(self) -> dict[str, Any] | None:
        return self.camera_config

    def start(self, config: dict[str, Any] | str | None = None, show_preview: Any = False) -> None:
        if self.camera_config is None and config is None:
            config = "preview"
        if config is not None:
            self.configure(config)
        self.started = True

    def stop(self) -> None:
        self.started = False

    def close(self) -> None:
        if not self.is_open:
            return
        self.stop()
        with self._system.lock:
            self._system.opened.discard(self.camera_idx)
        self.is_open = False

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self.close()

    # --- controls -----------------------------------------------------------------------------
    def set_controls(self, controls: Mapping[str, Any]) -> None:
        known = self.camera_controls
        for name in controls:
            if name not in known:
                raise RuntimeError(f"Control {name} is not advertised by libcamera")
        with self._lock:
            self._controls.update(controls)
            self.controls_set.append(dict(controls))

    # --- frames ------------------------------------------------------------------------------
    def _auto_state(self, frame: int) -> tuple[int, float, tuple[float, float], bool]:
        """What the fake AE/AWB have reached after `frame` frames (manual values win)."""
        cam = self._camera
        progress = min(1.0, (frame + 1) / max(1, cam.settle_frames))
        exposure = round(cam.target_exposure_us * (0.25 + 0.75 * progress))
        gain = 1.0 + (cam.target_gain - 1.0) * progress
        gains = (1.0 + (cam.target_colour_gains[0] - 1.0) * progress,
                 1.0 + (cam.target_colour_gains[1] - 1.0) * progress)
        controls = self._controls
        if controls.get("AeEnable") is False or "ExposureTime" in controls:
            exposure = int(controls.get("ExposureTime", exposure))
        if controls.get("AeEnable") is False or "AnalogueGain" in controls:
            gain = float(controls.get("AnalogueGain", gain))
        if controls.get("AwbEnable") is False or "ColourGains" in controls:
            gains = tuple(controls.get("ColourGains", gains))  # type: ignore[assignment]
        return exposure, gain, gains, progress >= 1.0

    def _scene(self, index: int, size: tuple[int, int]) -> BgrImage:
        cam = self._camera
        if cam.frame_fn is not None:
            return cam.frame_fn(index, size)
        if cam.image is not None:
            import cv2

            if (cam.image.shape[1], cam.image.shape[0]) == size:
                return cam.image
            if self._resized is None or self._resized[0] != size:
                self._resized = (size, cv2.resize(cam.image, size, interpolation=cv2.INTER_AREA))
            return self._resized[1]
        return _default_scene(index, size)

    def _next_frame(self, wait: Any) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        if not self.started:
            raise RuntimeError("Camera has not been started")  # the real one would hang
        cam = self._camera
        timeout_s = None if wait is None or wait is True else float(wait)
        with self._lock:
            self._captures += 1
            if cam.disconnect_after_n is not None and self._frames >= cam.disconnect_after_n:
                # a camera that stopped delivering: the job never completes
                time.sleep(min(timeout_s if timeout_s is not None else 1.0, 1.0))
                raise TimeoutError("fake camera disconnected: no frame completed")
            if cam.fail_every_n and self._captures % cam.fail_every_n == 0:
                raise RuntimeError(f"fake camera: capture {self._captures} failed")
            period_s = 1.0 / cam.fps
            delay_s = self._last_frame_time + period_s - time.monotonic()
            if delay_s > 0:
                time.sleep(delay_s)
            self._last_frame_time = time.monotonic()
            index = self._frames
            self._frames += 1
            exposure, gain, gains, settled = self._auto_state(index)
        config = self.camera_config
        assert config is not None
        fmt, size = config["main"]["format"], config["main"]["size"]
        bgr = self._scene(index, size)
        # brightness follows exposure x gain relative to the AE target (clipped at white)
        level = (exposure * gain) / (cam.target_exposure_us * cam.target_gain)
        if abs(level - 1.0) > 1e-6:
            import cv2

            bgr = cv2.convertScaleAbs(bgr, alpha=level)
        memory = bgr if fmt in ("RGB888", "XRGB8888") else bgr[:, :, ::-1]
        if fmt.startswith("X"):
            memory = np.dstack([memory, np.full(memory.shape[:2], 255, np.uint8)])
        memory = np.ascontiguousarray(memory)
        if cam.corrupt_every_n and (index + 1) % cam.corrupt_every_n == 0:
            memory = memory.reshape(-1)[: memory.size // 3]  # a truncated 1-D buffer
        metadata: dict[str, Any] = {
            "SensorTimestamp": time.monotonic_ns(),
            "FrameDuration": int(1e6 / cam.fps),
            "ExposureTime": exposure,
            "AnalogueGain": gain,
            "DigitalGain": 1.0,
            "ColourGains": gains,
            "ColourTemperature": 4500,
            "Lux": 400.0,
            "AeLocked": settled,
        }
        if cam.has_autofocus:
            metadata["LensPosition"] = float(self._controls.get("LensPosition", 1.0))
            metadata["AfState"] = 0
        return {"main": memory}, metadata

    def capture_request(self, wait: Any = None, signal_function: Any = None) -> _FakeRequest:
        arrays, metadata = self._next_frame(wait)
        return _FakeRequest(arrays, metadata)

    def capture_array(self, name: str = "main", wait: Any = None,
                      signal_function: Any = None) -> np.ndarray:
        return self.capture_request(wait).make_array(name)

    def capture_arrays(self, names: list[str] = ["main"], wait: Any = None,  # noqa: B006 - real API
                       signal_function: Any = None) -> tuple[list[np.ndarray], dict[str, Any]]:
        request = self.capture_request(wait)
        return [request.make_array(n) for n in names], request.get_metadata()

    def capture_metadata(self, wait: Any = None, signal_function: Any = None) -> dict[str, Any]:
        return self.capture_request(wait).get_metadata()
