"""A fake `Picamera2`, written against the real picamera2 API and threading, with faults.

The real class (raspberrypi/picamera2, `picamera2/picamera2.py` and `job.py`) cannot be imported
off a Pi because it needs `libcamera`. This fake keeps its names, signatures and observable
behaviour, including its threading, so `Picamera2Source` is tested on any machine:

- `Picamera2(camera_num=0, verbose_console=None, tuning=None, allocator=None)`: an index with no
  camera raises `IndexError` (`global_camera_info()[camera_num]`); a camera held elsewhere, or one
  whose sensor does not answer, raises `RuntimeError("Camera __init__ sequence did not complete.")`.
- `global_camera_info()`: one dict per camera with "Model", "Location", "Rotation", "Id", "Num".
- `create_preview/still/video_configuration(main={}, lores=None, raw={}, transform=None,
  colour_space=None, buffer_count=.., controls={}, display=.., encode=.., queue=True, sensor={},
  use_case=..)`, `configure(camera_config=None)`, `start(config=None, show_preview=False)`.
- The request queue, as in the real one: `start()` runs an event loop thread (the NullPreview)
  that receives a completed request every frame period and keeps the newest `queue` of them
  (`completed_requests`). Every capture is a `Job` put on `_job_list` by `dispatch_functions(
  functions, wait, signal_function=None, immediate=False)`; the loop runs the jobs in order, a job
  waiting for a request stays first in the list until one comes. `wait=True` waits as long as it
  takes, a number is a timeout (`TimeoutError` from `Job.get_result(timeout)`: the job stays
  queued), `wait=False` returns the `Job`.
- `stop()` with the event loop running is `dispatch_functions([self.stop_], wait=True,
  immediate=True)`: queued behind any pending job, with no timeout. After a capture timed out on
  a camera that no longer delivers, `stop()` never returns; `cancel_all_and_flush()` cancels and
  clears the jobs (their waiters get `CancelledError`) so the camera can be closed. `close()`
  stops the event loop first, then stops the camera directly (it does not queue).
- `capture_request(wait=None, signal_function=None, flush=None)` (flush: True or a timestamp in
  ns: frames exposed before it are dropped) -> request with `make_array(name)`, `get_metadata()`,
  `release()`; `capture_array(name="main", ...)`, `capture_arrays(names=["main"], ...)`,
  `capture_metadata(...)`, `drop_frames(num_frames, ...)`, `autofocus_cycle(wait=None,
  signal_function=None)` -> True when focused.
- `set_controls(dict)` (unknown control: `RuntimeError`); controls take effect with the next
  frames. The frame rate is `FakeCamera.fps` or lower where `FrameDurationLimits`' minimum says. `camera_controls` {name: (min, max, default)}, `camera_properties`, `sensor_resolution`.

Pixel formats as in memory on a Pi: "RGB888" hands out B, G, R bytes (what OpenCV wants),
"BGR888" R, G, B, "XBGR8888"/"XRGB8888" add a fourth byte (255); "YUV420" (I420) / "YVU420"
(YV12) as `make_array` returns them: one (h * 3 // 2, stride) array, the Y plane's h rows, then
the two half-size chroma planes (h / 2 rows of stride / 2 bytes each), padding included. Strides
as the Pi 4's ISP driver (bcm2835-isp) lays rows out and `camera_configuration()` reports them
("stride", "framesize"): YUV 64-byte aligned, 24-bit RGB 32 pixels, 32-bit 64 bytes.
The buffers, as libcamera's: `configure` allocates `buffer_count` of them per stream (the
`framesize` bytes of `camera_configuration()`), a completed request holds one of each until it is
released, and a frame that finds every buffer held by the application is not captured (the
sensor's frame is lost, `Picamera2.frames_dropped`). A request's buffer is filled (the ISP's
DMA, made here by copying the rendered frame in: `Picamera2.isp_cpu_s` is the CPU that took,
which a Pi does not spend) when its pixels are first looked at; `make_array` copies out of it, as
the real one does (`np.array` of the mapped buffer), `MappedArray(request, name)` is a view of
it, as picamera2's (its allocator maps every buffer once, for good: the view stays readable
after the `with`, but after `release()` the buffer goes back to the camera and the next frame is
written into it). `FakeCamera.poison_released` fills a released buffer with `POISON` at once, so
a test sees a frame that was kept without a copy change under it.

The `lores` stream (`lores={"size": (w, h), "format": "YUV420"}`), as in the real one: its
defaults are YUV420 at the main stream's size, its size is rounded down to even, it may not be
larger than main, and on a Pi 4 (`FakeCameraSystem.platform` "vc4") it must be YUV. It shows the
same frame as main, from the same request, scaled by the "ISP" (the main-size scene shrunk with
INTER_AREA; the shrunk copy of a scene is kept, so frames that repeat cost that once, as a
benchmark's pre-rendered ones do: `FakeCamera.warm_isp`).

The fake AE/AWB converge over `settle_frames` frames. Autofocus (imx708 only): the lens starts at
the tuning file's default (1.0 dioptre); the picture is blurred in proportion to how far the lens
position is from the board's `focus_dioptres`; an autofocus cycle scans for `af_scan_frames`
frames, then reports Focused with the lens at `focus_dioptres` (or Failed, `af_fails`).

Faults (`FakeCamera` fields): `busy` (held by another process), `fail_every_n` (every n-th
capture job raises RuntimeError), `corrupt_every_n` (every n-th frame is a truncated buffer),
`disconnect_after_n` (an instance stops receiving frames after n), `connected` (set it False at
any time: no camera receives frames and none opens; True again: a new instance works), `stop_hangs`
(the libcamera stop of a camera that lost its sensor never returns).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import CancelledError, Future
from dataclasses import dataclass, field
from functools import partial
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
    "AfRange": (0, 2, 0),
    "AfSpeed": (0, 1, 0),
    "LensPosition": (0.0, 15.0, 1.0),
}


class AfModeEnum:
    """libcamera.controls.AfModeEnum"""

    Manual = 0
    Auto = 1
    Continuous = 2


class AfTriggerEnum:
    """libcamera.controls.AfTriggerEnum"""

    Start = 0
    Cancel = 1


class AfStateEnum:
    """libcamera.controls.AfStateEnum"""

    Idle = 0
    Scanning = 1
    Focused = 2
    Failed = 3


#: the imx708 tuning file's default lens position (dioptres)
DEFAULT_LENS_POSITION = 1.0

#: sensor model -> full resolution (w, h)
SENSOR_RESOLUTIONS: dict[str, tuple[int, int]] = {
    "imx708": (4608, 2592),
    "imx708_wide": (4608, 2592),
    "imx219": (3280, 2464),
    "imx477": (4056, 3040),
    "ov5647": (2592, 1944),
}

_RGB_FORMATS = ("RGB888", "BGR888", "XBGR8888", "XRGB8888")
_YUV_FORMATS = ("YUV420", "YVU420")
_FORMATS = _RGB_FORMATS + _YUV_FORMATS
_STREAM_KEYS = ("format", "size", "stride", "preserve_ar")
#: what a released buffer is filled with when `FakeCamera.poison_released` is set
POISON = 0xA5
#: what `Picamera2.platform` can be: "vc4" (Pi 4 and earlier), "pisp" (Pi 5)
PLATFORMS = ("vc4", "pisp")


def _align_up(value: int, step: int) -> int:
    return -(-value // step) * step


def stride_bytes(fmt: str, width: int) -> int:
    """A row's bytes in the ISP's buffer (bcm2835-isp: `bytesperline_align` of the format; 24-bit
    RGB rows are 32 pixels aligned)."""
    if fmt in _YUV_FORMATS:
        return _align_up(width, 64)
    if fmt in ("RGB888", "BGR888"):
        return _align_up(width, 32) * 3
    return _align_up(width * 4, 64)


def frame_bytes(fmt: str, width: int, height: int) -> int:
    """The buffer's size ("framesize"): the chroma planes add half the luma's for YUV420."""
    stride = stride_bytes(fmt, width)
    return stride * height * 3 // 2 if fmt in _YUV_FORMATS else stride * height


def to_yuv420(bgr: BgrImage, fmt: str = "YUV420") -> np.ndarray:
    """`bgr` (even sides) as the ISP writes a YUV420 / YVU420 buffer and `make_array` hands it
    out: (h * 3 // 2, stride) uint8, the Y plane then U and V (V then U for YVU420), each
    chroma row stride / 2 bytes, padding zero."""
    import cv2

    height, width = bgr.shape[:2]
    stride = stride_bytes(fmt, width)
    code = cv2.COLOR_BGR2YUV_I420 if fmt == "YUV420" else cv2.COLOR_BGR2YUV_YV12
    packed = cv2.cvtColor(bgr, code)  # (h * 3 // 2, w): Y, then chroma rows of w / 2 packed
    if stride == width:
        return packed
    luma = width * height
    chroma = (width // 2) * (height // 2)
    flat = packed.reshape(-1)
    out = np.zeros(stride * height * 3 // 2, np.uint8)
    out[: stride * height].reshape(height, stride)[:, :width] = flat[:luma].reshape(height, width)
    quarter = (stride // 2) * (height // 2)
    for k in range(2):
        plane = out[stride * height + k * quarter: stride * height + (k + 1) * quarter]
        plane.reshape(height // 2, stride // 2)[:, : width // 2] = \
            flat[luma + k * chroma: luma + (k + 1) * chroma].reshape(height // 2, width // 2)
    return out.reshape(height * 3 // 2, stride)


class _KeptByIdentity:
    """What was made from an image, kept while the image is among the last `size` seen (keyed by
    the object itself: a frame that repeats is the same array)."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._entries: dict[tuple[int, Any], tuple[Any, Any]] = {}
        self._lock = threading.Lock()

    def get(self, image: Any, key: Any, make: Callable[[], Any]) -> Any:
        with self._lock:
            hit = self._entries.get((id(image), key))
            if hit is not None and hit[0] is image:
                return hit[1]
        value = make()
        with self._lock:
            self._entries[(id(image), key)] = (image, value)
            while len(self._entries) > self._size:
                self._entries.pop(next(iter(self._entries)))
        return value


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
    #: frame source: `frame_fn(index, (w, h)) -> BGR image` (called once per request, at the
    #: main stream's size); else `image` (resized); else a scene
    frame_fn: Callable[[int, tuple[int, int]], BgrImage] | None = None
    image: BgrImage | None = None
    fps: float = 30.0
    #: the fake AE/AWB reach their targets after this many frames
    settle_frames: int = 8
    target_exposure_us: int = 16000
    target_gain: float = 2.0
    target_colour_gains: tuple[float, float] = (1.9, 1.6)
    #: where the board is in focus (dioptres = 1 / distance in m); autofocus finds it
    focus_dioptres: float = DEFAULT_LENS_POSITION
    #: blur (Gaussian sigma, px at 1000 px width) per dioptre of focus error
    blur_px_per_dioptre: float = 3.0
    af_scan_frames: int = 6
    af_fails: bool = False
    busy: bool = False
    fail_every_n: int | None = None
    corrupt_every_n: int | None = None
    disconnect_after_n: int | None = None
    #: False: the sensor does not answer (cable out): no frames, opening fails
    connected: bool = True
    stop_hangs: bool = False
    #: a released request's buffers are filled with `POISON` at once (the next frame's pixels
    #: would overwrite them later): a frame kept past its release without a copy shows it
    poison_released: bool = False
    location: int = 2
    rotation: int = 180

    def __post_init__(self) -> None:
        self._isp = _KeptByIdentity(256)

    @property
    def has_autofocus(self) -> bool:
        return self.model.startswith("imx708")

    def isp_scale(self, scene: BgrImage, size: tuple[int, int]) -> BgrImage:
        """`scene` at `size` as the ISP scales a frame for a second stream (INTER_AREA)."""
        import cv2

        if (scene.shape[1], scene.shape[0]) == tuple(size):
            return scene
        return self._isp.get(scene, ("scale", tuple(size)), lambda: cv2.resize(
            scene, tuple(size), interpolation=cv2.INTER_AREA))

    def isp_yuv(self, scene: BgrImage, fmt: str) -> np.ndarray:
        """`scene` as the ISP writes it in a YUV format (`to_yuv420`), kept like `isp_scale`."""
        return self._isp.get(scene, ("yuv", fmt), lambda: to_yuv420(scene, fmt))

    def warm_isp(self, scenes: list[BgrImage], size: tuple[int, int],
                 fmt: str = "YUV420") -> None:
        """Make the ISP's copies of pre-rendered `scenes` now, for a second stream of `size`
        and `fmt` (a benchmark renders its frames before it measures: on a Pi the ISP scales
        them, at no CPU cost)."""
        for scene in scenes:
            small = self.isp_scale(scene, size)
            if fmt in _YUV_FORMATS:
                self.isp_yuv(small, fmt)


@dataclass
class FakeCameraSystem:
    """The cameras a fake `libcamera` sees; `picamera2_class` is a `Picamera2` bound to them."""

    cameras: list[FakeCamera] = field(default_factory=lambda: [FakeCamera()])
    #: the Pi: "vc4" (Pi 4 and earlier: a lores stream must be YUV) or "pisp" (Pi 5)
    platform: str = "vc4"
    opened: set[int] = field(default_factory=set)
    #: every `Picamera2` instance ever made, newest last (tests look at what the source did)
    instances: list[Any] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def picamera2_class(self) -> type[Picamera2]:
        system = self

        if system.platform not in PLATFORMS:
            raise ValueError(f"platform {system.platform!r}: one of {PLATFORMS}")

        class BoundPicamera2(Picamera2):
            _system = system
            platform = system.platform

        BoundPicamera2.__name__ = "Picamera2"
        BoundPicamera2.__qualname__ = "Picamera2"
        return BoundPicamera2


class Job:
    """`picamera2.job.Job`: functions run by the event loop, one step per frame until done."""

    def __init__(self, functions: list[Callable[[], tuple[bool, Any]]],
                 signal_function: Callable[[Job], None] | None = None) -> None:
        self._functions = list(functions)
        self._future: Future[Any] = Future()
        self._future.set_running_or_notify_cancel()
        self._signal_function = signal_function
        self._result: Any = None
        self.calls = 0

    def execute(self) -> bool:
        assert self._functions, "Job already completed!"
        try:
            while self._functions:
                done, result = self._functions[0]()
                self.calls += 1
                if not done:
                    break
                self._functions.pop(0)
            if not self._functions:
                self._result = result
        except Exception as exc:  # noqa: BLE001 - handed to the waiter, as the real one does
            self._future.set_exception(exc)
            self._functions = []
        return not self._functions

    def signal(self) -> None:
        assert not self._functions, "Job not finished!"
        if not self._future.done():
            self._future.set_result(self._result)
        if self._signal_function:
            self._signal_function(self)

    def get_result(self, timeout: float | None = None) -> Any:
        return self._future.result(timeout=timeout)

    def cancel(self) -> None:
        self._future.set_exception(CancelledError())


class CompletedRequest:
    """`picamera2.request.CompletedRequest`: `make_array`, `get_metadata`, `acquire`, `release`.
    Holds one buffer of each stream (`Picamera2._buffers`) until its last `release()`."""

    def __init__(self, camera: Picamera2, index: int, metadata: dict[str, Any],
                 config: dict[str, Any], slot: int = 0) -> None:
        self._camera = camera
        self._index = index
        self._metadata = metadata
        self.config = config
        self.ref_count = 1
        self.arrays_made = 0
        #: which of the camera's buffers this request holds (one per stream)
        self.slot = slot
        self._scene: BgrImage | None = None  # the frame the sensor saw, for every stream
        self._filled: dict[str, np.ndarray] = {}  # stream -> its buffer, once filled
        self._lock = threading.Lock()

    def acquire(self) -> None:
        if self.ref_count == 0:
            raise RuntimeError("CompletedRequest: acquiring lock with ref_count 0")
        self.ref_count += 1

    def release(self) -> None:
        if self.ref_count <= 0:
            raise RuntimeError("CompletedRequest: lock now has negative ref_count")
        self.ref_count -= 1
        if self.ref_count == 0:
            self._camera._recycle(self)

    @property
    def released(self) -> bool:
        return self.ref_count == 0

    def buffer(self, name: str) -> np.ndarray:
        """Stream `name`'s buffer as the hardware filled it: 1-D uint8, `framesize` bytes (a
        truncated frame: fewer). What `_MappedBuffer` maps."""
        if self.ref_count == 0:
            raise RuntimeError("CompletedRequest: buffer used after release")
        if self.config.get(name) is None:
            raise RuntimeError(f"Stream {name!r} is not defined")  # as the real one says
        with self._lock:
            filled = self._filled.get(name)
            if filled is None:
                if self._scene is None:
                    self._scene = self._camera._scene(self._index,
                                                      tuple(self.config["main"]["size"]))
                filled = self._camera._fill(self, name, self._scene)
                self._filled[name] = filled
        return filled

    def make_array(self, name: str) -> np.ndarray:
        self.arrays_made += 1
        return _shaped(np.array(self.buffer(name), dtype=np.uint8), self.config[name])

    def get_metadata(self) -> dict[str, Any]:
        return dict(self._metadata)


def _shaped(buffer: np.ndarray, config: Mapping[str, Any]) -> np.ndarray:
    """A 1-D buffer as picamera2's `Helpers.make_array` / `MappedArray` shape it: RGB (h, w, 3
    or 4) without the rows' padding, YUV420 (h * 3 // 2, stride); a truncated buffer as it is."""
    fmt = config["format"]
    width, height = config["size"]
    stride = config["stride"]
    if buffer.size < config["framesize"]:
        return buffer  # a truncated buffer: the caller finds it cut
    buffer = buffer[: config["framesize"]]
    if fmt in _YUV_FORMATS:
        return buffer.reshape(height * 3 // 2, stride)
    channels = 4 if fmt.startswith("X") else 3
    rows = buffer.reshape(height, stride)
    if stride != width * channels:
        rows = rows[:, : width * channels]
    return rows.reshape(height, width, channels)


class MappedArray:
    """`picamera2.request.MappedArray(request, stream, reshape=True, write=True)`: `array` is a
    view of the request's buffer inside the `with` (shaped as `make_array` shapes it, padding
    and all for YUV). As in picamera2 (its allocator maps each buffer once), the memory stays
    mapped after the `with`; it holds this frame only until the request is released."""

    def __init__(self, request: CompletedRequest, stream: str, reshape: bool = True,
                 write: bool = True) -> None:
        self._request = request
        self._stream = stream
        self._reshape = reshape
        self._write = write
        self._array: np.ndarray | None = None

    def __enter__(self) -> Self:
        buffer = self._request.buffer(self._stream)
        self._array = _shaped(buffer, self._request.config[self._stream]) if self._reshape \
            else buffer
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self._array = None

    @property
    def array(self) -> np.ndarray | None:
        return self._array


class Picamera2:
    """The fake. Use `FakeCameraSystem(...).picamera2_class`; the bare class has one imx708."""

    _system: FakeCameraSystem = FakeCameraSystem()
    #: `Platform.get_platform()` of the real one: "vc4" (Pi 4 and earlier) or "pisp" (Pi 5)
    platform: str = "vc4"

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
        self._event_loop_running = False
        info = self.global_camera_info()[camera_num]  # IndexError, as in the real one
        self.camera_idx: int = info["Num"]
        self._camera = self._cameras()[self.camera_idx]
        system = self._system
        with system.lock:
            if self._camera.busy or self.camera_idx in system.opened or not self._camera.connected:
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
        self.lock = threading.Lock()  # protects _job_list and completed_requests, as in the real one
        self._free_lock = threading.Lock()  # protects _free_slots (`release` from any thread)
        self._job_list: list[Job] = []
        self.completed_requests: list[CompletedRequest] = []
        self._max_queue_len = 1
        self.frames = 0
        self._received = 0  # frames this instance received (for disconnect_after_n)
        self._captures = 0
        self._lens_position = DEFAULT_LENS_POSITION
        self._af_state = AfStateEnum.Idle
        self._af_scan_left = 0
        self._wake = threading.Event()
        self._abort = threading.Event()
        self._loop_thread: threading.Thread | None = None
        self.stop_count = 0
        #: stream -> its `buffer_count` buffers (allocated by `configure`); the free slots
        self._buffers: dict[str, list[np.ndarray]] = {}
        self._free_slots: list[int] = []
        #: frames the sensor made while the application held every buffer (not captured)
        self.frames_dropped = 0
        #: CPU seconds spent filling buffers (the ISP's DMA on a Pi: no CPU there)
        self.isp_cpu_s = 0.0

    # --- properties -------------------------------------------------------------------------
    @property
    def camera_controls(self) -> dict[str, tuple[Any, Any, Any]]:
        controls = dict(_CONTROLS_COMMON)
        if self._camera.has_autofocus:
            controls |= _CONTROLS_AUTOFOCUS
        return controls

    @property
    def camera_properties(self) -> dict[str, Any]:
        if not self.is_open:
            return {}
        return {
            "Model": self._camera.model,
            "PixelArraySize": self.sensor_resolution,
            "Location": self._camera.location,
            "Rotation": self._camera.rotation,
            "ColorFilterArrangement": 0,
        }

    # --- configuration ----------------------------------------------------------------------
    @staticmethod
    def _stream(defaults: Mapping[str, Any], updates: Mapping[str, Any] | None
                ) -> dict[str, Any] | None:
        """`_make_initial_stream_config` then `align_stream(optimal=False)`: the defaults with
        the caller's keys over them, the size rounded down to even."""
        if updates is None:
            return None
        stream = dict(defaults)
        for key, value in updates.items():
            if key not in _STREAM_KEYS:
                raise ValueError(
                    f"Bad key {key!r}: valid stream configuration keys are {_STREAM_KEYS}"
                )
            stream[key] = value
        size = stream["size"]
        stream["size"] = (size[0] - size[0] % 2, size[1] - size[1] % 2)
        return stream

    def _make_config(self, use_case: str, default_main: dict[str, Any], main: Mapping[str, Any],
                     lores: Mapping[str, Any] | None, raw: Mapping[str, Any] | None,
                     transform: Any, colour_space: Any, buffer_count: int,
                     controls: Mapping[str, Any], display: str | None, encode: str | None,
                     queue: bool, sensor: Mapping[str, Any] | None) -> dict[str, Any]:
        if not self.is_open:
            raise RuntimeError("Camera not opened")
        stream = self._stream(default_main | {"preserve_ar": True}, main)
        assert stream is not None
        return {
            "use_case": use_case,
            "transform": transform,
            "colour_space": colour_space,
            "buffer_count": buffer_count,
            "queue": queue,
            "main": stream,
            "lores": self._stream({"format": "YUV420", "size": stream["size"],
                                   "preserve_ar": False}, lores),
            "raw": dict(raw) if raw is not None else None,
            "controls": dict(controls),
            "sensor": dict(sensor) if sensor is not None else None,
            "display": display,
            "encode": encode,
        }

    def create_preview_configuration(
        self, main: Mapping[str, Any] = {}, lores: Mapping[str, Any] | None = None,
        raw: Mapping[str, Any] | None = {}, transform: Any = None, colour_space: Any = None,
        buffer_count: int = 4, controls: Mapping[str, Any] = {}, display: str | None = "main",
        encode: str | None = "main", queue: bool = True, sensor: Mapping[str, Any] = {},
        use_case: str = "preview",
    ) -> dict[str, Any]:
        return self._make_config(
            use_case, {"format": "XBGR8888", "size": (640, 480)}, main, lores, raw, transform,
            colour_space, buffer_count, controls, display, encode, queue, sensor,
        )

    def create_still_configuration(
        self, main: Mapping[str, Any] = {}, lores: Mapping[str, Any] | None = None,
        raw: Mapping[str, Any] | None = {}, transform: Any = None, colour_space: Any = None,
        buffer_count: int = 1, controls: Mapping[str, Any] = {}, display: str | None = None,
        encode: str | None = None, queue: bool = True, sensor: Mapping[str, Any] = {},
        use_case: str = "still",
    ) -> dict[str, Any]:
        return self._make_config(
            use_case, {"format": "BGR888", "size": self.sensor_resolution}, main, lores, raw,
            transform, colour_space, buffer_count, controls, display, encode, queue, sensor,
        )

    def create_video_configuration(
        self, main: Mapping[str, Any] = {}, lores: Mapping[str, Any] | None = None,
        raw: Mapping[str, Any] | None = {}, transform: Any = None, colour_space: Any = None,
        buffer_count: int = 6, controls: Mapping[str, Any] = {}, display: str | None = "main",
        encode: str | None = "main", queue: bool = True, sensor: Mapping[str, Any] = {},
        use_case: str = "video",
    ) -> dict[str, Any]:
        return self._make_config(
            use_case, {"format": "XBGR8888", "size": (1280, 720)}, main, lores, raw, transform,
            colour_space, buffer_count, controls, display, encode, queue, sensor,
        )

    def configure(self, camera_config: dict[str, Any] | str | None = None) -> None:
        if camera_config is None:
            camera_config = "preview"
        if isinstance(camera_config, str):
            makers = {"preview": self.create_preview_configuration,
                      "still": self.create_still_configuration,
                      "video": self.create_video_configuration}
            camera_config = makers[camera_config]()
        camera_config = dict(camera_config)  # the real one copies it, then fills it in
        self._check_stream(camera_config["main"], "main")
        lores = camera_config.get("lores")
        if lores is not None:
            self._check_stream(lores, "lores")
            (main_w, main_h), (lores_w, lores_h) = camera_config["main"]["size"], lores["size"]
            if lores_w > main_w or lores_h > main_h:
                raise RuntimeError("lores stream dimensions may not exceed main stream")
            if self.platform == "vc4" and lores["format"] not in _YUV_FORMATS:
                raise RuntimeError("lores stream must be YUV")
        if self.started:
            raise RuntimeError("Camera must be stopped before configuring")
        for name in ("main", "lores"):  # `_update_stream_config`: what libcamera settled on
            if camera_config.get(name) is not None:
                stream = camera_config[name]
                width, height = stream["size"]
                stream["stride"] = stride_bytes(stream["format"], width)
                stream["framesize"] = frame_bytes(stream["format"], width, height)
        self.camera_config = camera_config
        self._allocate(camera_config)
        self._max_queue_len = 1 if camera_config.get("queue", True) else 0
        self._controls = dict(camera_config.get("controls", {}))

    def _allocate(self, config: Mapping[str, Any]) -> None:
        """libcamera's buffers: `buffer_count` per stream, each `framesize` bytes (touched now,
        as the kernel's CMA buffers are resident: no page faults when frames are written)."""
        count = max(1, int(config.get("buffer_count", 4)))
        with self.lock:
            self._buffers = {
                name: [np.full(config[name]["framesize"], POISON, np.uint8) for _ in range(count)]
                for name in ("main", "lores") if config.get(name) is not None}
            with self._free_lock:
                self._free_slots = list(range(count))

    def _recycle(self, request: CompletedRequest) -> None:
        """A request released for good: its buffers go back to the camera (poisoned if asked)."""
        if self._camera.poison_released:
            for name in request._filled:
                buffers = self._buffers.get(name)
                if buffers is not None and request.slot < len(buffers):
                    buffers[request.slot].fill(POISON)
        request._filled.clear()
        with self._free_lock:
            if request.config is self.camera_config and request.slot not in self._free_slots:
                self._free_slots.append(request.slot)

    @staticmethod
    def _check_stream(stream: Mapping[str, Any], name: str) -> None:
        """`check_stream_config`, for the formats the fake makes."""
        if not isinstance(stream, dict):
            raise RuntimeError(name + " stream should be a dictionary")  # noqa: TRY004 - as picamera2
        if stream.get("format") not in _FORMATS:
            raise RuntimeError(f"Bad format {stream.get('format')} in stream {name}")
        size = stream.get("size")
        if type(size) is not tuple or len(size) != 2:
            raise RuntimeError("size in " + name + " stream should be (width, height)")
        if size[0] % 2 or size[1] % 2:
            raise RuntimeError("width and height should be even")

    def camera_configuration(self) -> dict[str, Any] | None:
        return self.camera_config

    def stream_configuration(self, name: str = "main") -> dict[str, Any]:
        assert self.camera_config is not None
        return self.camera_config[name]

    # --- running: the event loop and its jobs -----------------------------------------------
    def start(self, config: dict[str, Any] | str | None = None, show_preview: Any = False) -> None:
        if not self.camera_config and config is None:
            config = "preview"
        if config is not None:
            self.configure(config)
        if show_preview is not None and not self._event_loop_running:
            self._start_event_loop()
        self.start_()

    def start_(self) -> None:
        if not self.camera_config:
            raise RuntimeError("Camera has not been configured")
        self.started = True

    def _start_event_loop(self) -> None:
        if self._event_loop_running:
            raise RuntimeError("An event loop is already running")
        self._abort.clear()
        self._event_loop_running = True
        self._loop_thread = threading.Thread(target=self._event_loop, daemon=True,
                                             name=f"fake-picamera2-{self.camera_idx}")
        self._loop_thread.start()

    def _stop_event_loop(self) -> None:
        self._abort.set()
        self._wake.set()
        thread = self._loop_thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()
        self._loop_thread = None
        self._event_loop_running = False

    def _receiving(self) -> bool:
        cam = self._camera
        if not cam.connected:
            return False
        return cam.disconnect_after_n is None or self._received < cam.disconnect_after_n

    def _event_loop(self) -> None:
        """The NullPreview thread plus the camera manager: a request per frame, then the jobs."""
        next_frame = time.monotonic() + self._frame_period_s()
        while not self._abort.is_set():
            self._wake.wait(max(0.0, next_frame - time.monotonic()))
            self._wake.clear()
            if self._abort.is_set():
                return
            new: list[CompletedRequest] = []
            if time.monotonic() >= next_frame:
                next_frame = max(next_frame + self._frame_period_s(), time.monotonic())
                if self.started and self._receiving():
                    with self._free_lock:
                        slot = self._free_slots.pop(0) if self._free_slots else None
                    if slot is None:
                        self.frames_dropped += 1  # every buffer is held: the frame is lost
                    else:
                        with self.lock:
                            new.append(self._complete_request(slot))
            self._handle_requests(new)

    def _frame_period_s(self) -> float:
        """The sensor's frame time: its fastest (`FakeCamera.fps`), or longer where the
        `FrameDurationLimits` control's minimum asks for it (libcamera keeps frames within it)."""
        fastest = 1.0 / self._camera.fps
        limits = self._controls.get("FrameDurationLimits")
        return max(fastest, float(limits[0]) / 1e6) if limits else fastest

    def _handle_requests(self, requests: list[CompletedRequest]) -> None:
        """As the real one: queue the new requests, run the jobs in order, keep the newest."""
        with self.lock:
            self.completed_requests += requests
            finished: list[Job] = []
            while self._job_list:
                if self._job_list[0].execute():
                    finished.append(self._job_list.pop(0))
                else:
                    break
            while len(self.completed_requests) > self._max_queue_len:
                self.completed_requests.pop(0).release()
        for job in finished:
            job.signal()

    def _complete_request(self, slot: int = 0) -> CompletedRequest:
        cam = self._camera
        index = self.frames
        self.frames += 1
        self._received += 1
        exposure, gain, gains, settled = self._auto_state(index)
        metadata: dict[str, Any] = {
            "SensorTimestamp": time.monotonic_ns(),
            "FrameDuration": round(1e6 * self._frame_period_s()),
            "ExposureTime": exposure,
            "AnalogueGain": gain,
            "DigitalGain": 1.0,
            "ColourGains": gains,
            "ColourTemperature": 4500,
            "Lux": 400.0,
            "AeLocked": settled,
        }
        if cam.has_autofocus:
            self._step_autofocus()
            metadata["LensPosition"] = self._lens_position
            metadata["AfState"] = self._af_state
        assert self.camera_config is not None
        return CompletedRequest(self, index, metadata, self.camera_config, slot)

    def _step_autofocus(self) -> None:
        controls = self._controls
        if controls.pop("AfTrigger", None) == AfTriggerEnum.Start and \
                controls.get("AfMode") == AfModeEnum.Auto:
            self._af_state = AfStateEnum.Scanning
            self._af_scan_left = self._camera.af_scan_frames
        elif self._af_state == AfStateEnum.Scanning:
            self._af_scan_left -= 1
            if self._af_scan_left <= 0:
                if self._camera.af_fails:
                    self._af_state = AfStateEnum.Failed
                else:
                    self._af_state = AfStateEnum.Focused
                    self._lens_position = self._camera.focus_dioptres
        if controls.get("AfMode", AfModeEnum.Manual) == AfModeEnum.Manual and \
                "LensPosition" in controls:
            self._lens_position = float(controls["LensPosition"])

    def dispatch_functions(self, functions: list[Callable[[], tuple[bool, Any]]], wait: Any,
                           signal_function: Callable[[Job], None] | None = None,
                           immediate: bool = False) -> Any:
        if wait is None:
            wait = signal_function is None
        timeout = None if wait is True else wait
        with self.lock:
            only_job = not self._job_list
            job = Job(functions, signal_function)
            self._job_list.append(job)
            if only_job and (self.completed_requests or immediate):
                self._wake.set()
        return job.get_result(timeout=timeout) if wait else job

    def wait(self, job: Job, timeout: float | None = None) -> Any:
        return job.get_result(timeout=timeout)

    def cancel_all_and_flush(self) -> None:
        with self.lock:
            for job in self._job_list:
                job.cancel()
            self._job_list = []

    def stop_(self, request: Any = None) -> tuple[bool, None]:
        if self.started:
            self.stop_count += 1
            if self._camera.stop_hangs and not self._receiving():
                threading.Event().wait()  # libcamera waiting for a sensor that is gone
            self.started = False
            while self.completed_requests:
                self.completed_requests.pop(0).release()
        return (True, None)

    def stop(self) -> None:
        if not self.started:
            return
        if self._event_loop_running:
            self.dispatch_functions([self.stop_], wait=True, immediate=True)
        else:
            self.stop_()

    def close(self) -> None:
        if self._event_loop_running:
            self._stop_event_loop()  # the real close() stops the preview (its event loop) first
        if not self.is_open:
            return
        self.stop()
        with self._system.lock:
            self._system.opened.discard(self.camera_idx)
        self.is_open = False
        self.camera_config = None

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
        with self.lock:
            self._controls.update(controls)
            self.controls_set.append(dict(controls))

    # --- the capture jobs (run by the event loop) --------------------------------------------
    def _take_request(self) -> CompletedRequest:
        self._captures += 1
        request = self.completed_requests.pop(0)
        cam = self._camera
        if cam.fail_every_n and self._captures % cam.fail_every_n == 0:
            request.release()
            raise RuntimeError(f"fake camera: capture {self._captures} failed")
        return request

    def wait_for_timestamp_(self, timestamp_ns: int | None) -> tuple[bool, None]:
        if not timestamp_ns:
            return (True, None)
        while self.completed_requests:
            md = self.completed_requests[0].get_metadata()
            if md["SensorTimestamp"] - 1000 * md["ExposureTime"] >= timestamp_ns:
                return (True, None)
            self.completed_requests.pop(0).release()
        return (False, None)

    def capture_request_(self) -> tuple[bool, CompletedRequest | None]:
        if not self.completed_requests:
            return (False, None)
        return (True, self._take_request())

    def capture_request(self, wait: Any = None, signal_function: Any = None,
                        flush: Any = None) -> Any:
        if flush is True:
            flush = time.monotonic_ns()
        functions = [partial(self.wait_for_timestamp_, flush), self.capture_request_]
        return self.dispatch_functions(functions, wait, signal_function)

    def capture_array_(self, name: str) -> tuple[bool, np.ndarray | None]:
        if not self.completed_requests:
            return (False, None)
        request = self._take_request()
        result = request.make_array(name)
        request.release()
        return (True, result)

    def capture_array(self, name: str = "main", wait: Any = None,
                      signal_function: Any = None) -> Any:
        return self.dispatch_functions([partial(self.capture_array_, name)], wait,
                                       signal_function)

    def capture_arrays_and_metadata_(self, names: list[str]) -> tuple[bool, Any]:
        if not self.completed_requests:
            return (False, None)
        request = self._take_request()
        result = ([request.make_array(n) for n in names], request.get_metadata())
        request.release()
        return (True, result)

    def capture_arrays(self, names: list[str] = ["main"], wait: Any = None,  # noqa: B006 - real API
                       signal_function: Any = None) -> Any:
        return self.dispatch_functions([partial(self.capture_arrays_and_metadata_, names)], wait,
                                       signal_function)

    def capture_metadata_(self) -> tuple[bool, dict[str, Any] | None]:
        if not self.completed_requests:
            return (False, None)
        request = self._take_request()
        result = request.get_metadata()
        request.release()
        return (True, result)

    def capture_metadata(self, wait: Any = None, signal_function: Any = None) -> Any:
        return self.dispatch_functions([self.capture_metadata_], wait, signal_function)

    def drop_frames(self, num_frames: int, wait: Any = None, signal_function: Any = None) -> Any:
        left = [num_frames]

        def drop_frames_() -> tuple[bool, None]:
            while self.completed_requests:
                if left[0] == 0:
                    return (True, None)
                self.completed_requests.pop(0).release()
                left[0] -= 1
            return (left[0] == 0, None)

        return self.dispatch_functions([drop_frames_], wait, signal_function, immediate=True)

    def autofocus_cycle(self, wait: Any = None, signal_function: Any = None) -> Any:
        """Switch autofocus to auto mode and run a cycle; True if it focused, else False."""
        self.set_controls({"AfMode": AfModeEnum.Auto, "AfTrigger": AfTriggerEnum.Start})

        def wait_for_af_state(states: set[int]) -> tuple[bool, bool | None]:
            if not self.completed_requests:
                return (False, None)
            af_state = self.completed_requests[0].get_metadata()["AfState"]
            self.completed_requests.pop(0).release()
            return (af_state in states, af_state == AfStateEnum.Focused)

        functions = [
            partial(wait_for_af_state, {AfStateEnum.Scanning}),
            partial(wait_for_af_state, {AfStateEnum.Focused, AfStateEnum.Failed,
                                        AfStateEnum.Idle}),
        ]
        return self.dispatch_functions(functions, wait, signal_function)

    # --- pictures ----------------------------------------------------------------------------
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
        """What the sensor sees in frame `index`, at the main stream's `size`."""
        cam = self._camera
        if cam.frame_fn is not None:
            return cam.frame_fn(index, size)
        if cam.image is not None:
            return cam.isp_scale(cam.image, size)
        return _default_scene(index, size)

    def _render(self, index: int, metadata: Mapping[str, Any], config: Mapping[str, Any],
                name: str = "main", scene: BgrImage | None = None) -> np.ndarray:
        """Stream `name`'s picture of frame `index` in its format (RGB: (h, w, 3 or 4); YUV:
        (h * 3 // 2, stride)), before it is laid into a buffer; `scene`: the request's frame at
        the main stream's size. May be a cached array: never write into it."""
        import cv2

        cam = self._camera
        fmt, size = config[name]["format"], tuple(config[name]["size"])
        if scene is None:
            scene = self._scene(index, tuple(config["main"]["size"]))
        bgr = cam.isp_scale(scene, size)
        # brightness follows exposure x gain relative to the AE target (clipped at white)
        level = (metadata["ExposureTime"] * metadata["AnalogueGain"]) / (
            cam.target_exposure_us * cam.target_gain)
        if abs(level - 1.0) > 1e-6:
            bgr = cv2.convertScaleAbs(bgr, alpha=level)
        if "LensPosition" in metadata:
            sigma = cam.blur_px_per_dioptre * abs(metadata["LensPosition"] - cam.focus_dioptres)
            sigma *= size[0] / 1000.0
            if sigma > 0.3:
                bgr = cv2.GaussianBlur(bgr, (0, 0), sigma)
        if fmt in _YUV_FORMATS:
            return cam.isp_yuv(bgr, fmt)
        memory = bgr if fmt in ("RGB888", "XRGB8888") else bgr[:, :, ::-1]
        if fmt.startswith("X"):
            memory = np.dstack([memory, np.full(memory.shape[:2], 255, np.uint8)])
        return memory

    def _fill(self, request: CompletedRequest, name: str, scene: BgrImage) -> np.ndarray:
        """Write frame `request`'s picture into its buffer of stream `name`, as the ISP does
        (timed into `isp_cpu_s`); the buffer (1-D; a truncated frame's is cut short)."""
        started = time.thread_time()
        config = request.config[name]
        memory = self._render(request._index, request._metadata, request.config, name, scene)
        buffers = self._buffers.get(name, [])
        if request.config is self.camera_config and request.slot < len(buffers):
            buffer = buffers[request.slot]
        else:  # a request from before a reconfiguration: a buffer of its own
            buffer = np.empty(config["framesize"], np.uint8)
        height = config["size"][1]
        if config["format"] in _YUV_FORMATS:
            buffer[: memory.size] = memory.reshape(-1)
        else:
            row_bytes = memory.shape[1] * memory.shape[2]
            rows = buffer[: config["stride"] * height].reshape(height, config["stride"])
            np.copyto(rows[:, :row_bytes], memory.reshape(height, row_bytes))
        cam = self._camera
        if cam.corrupt_every_n and (request._index + 1) % cam.corrupt_every_n == 0:
            buffer = buffer[: buffer.size // 3]  # a truncated buffer
        self.isp_cpu_s += time.thread_time() - started
        return buffer
