"""The Raspberry Pi camera through picamera2 (libcamera): settled, focused, locked, never stuck.

Written against the real picamera2 API and threading (raspberrypi/picamera2, `picamera2.py`,
`job.py`): `Picamera2(camera_num)`, `Picamera2.global_camera_info()`,
`create_video_configuration(main={"size": .., "format": "RGB888"})` ("RGB888" is B, G, R in
memory: what OpenCV wants), `configure`, `start`, `capture_request(wait=timeout)` ->
`make_array("main")`, `get_metadata()`, `release()`, `autofocus_cycle(wait=..)`, `set_controls`,
`camera_controls`, `cancel_all_and_flush`, `close`.

Frames: picamera2's own event loop keeps the newest completed request (`queue=True`), so `read()`
asks for the next one directly: no thread of ours, and a frame is copied out of its buffer only
when it is read (the sensor runs at up to 30 fps, the referee uses at most 8).

`read_borrowed()` copies nothing (`hardware.source`'s lending protocol): the frame is a read-only
view of the request's buffer (`MappedArray`; picamera2's allocator keeps every buffer mapped),
and the request is held until the second read after it, then released (so at most two are held
between reads: the frame being judged and the one the page may still be drawing; `close()`
releases them all, also after the camera was lost: whoever shows the last frame copies it first). A 2304x1296 frame is 9 MB: copying it out (`make_array`) cost
2.2 ms of CPU a frame unloaded, ~5 ms on a busy machine, with ~1600 page faults.

The page's picture: a second stream, `lores` (YUV420, `preview_width` wide, the main stream's
aspect), which the ISP scales from the same frame in hardware; each frame read carries it as its
`preview` (`hardware.source.Preview`: its 0.35 MB copied out with the frame, turned into BGR
only when a page shows it, 0.2 ms at 640x360 where shrinking the 2304x1296 frame took 2.2 ms).
On a Pi 4 a lores stream must be YUV and no larger than main (picamera2's `check_camera_config`).

Opening: the camera starts with auto exposure and auto white balance; we watch the metadata until
ExposureTime x AnalogueGain and ColourGains stop moving (or "AeLocked" says so), then fix them with
`set_controls({"AeEnable": False, "AwbEnable": False, "ExposureTime": .., "AnalogueGain": ..,
"ColourGains": (r, b)})` so colours stay the same all match. Focus the same way: on a camera with
autofocus (Camera Module 3) one autofocus cycle runs at start (picamera2 never starts one by
itself), then the lens is locked where it ended (`AfMode` Manual, `LensPosition`), so a hand over
the board cannot refocus it. `lens_position_dioptres` skips the cycle and sets the lens.
`locked_controls()` returns what was fixed (the calibration stores the lens position); passing
them back as `controls=` re-applies them without settling.

A camera that stops delivering (cable out, sensor reset): the capture waits at most
`capture_timeout_s`, then the still-queued capture job is cancelled (`cancel_all_and_flush`: a
`stop()` would otherwise queue behind it and wait for ever) and `read()` raises `SourceLostError`
at once. `close()` is bounded too (`close_timeout_s`): a libcamera stuck in its driver is left to
a daemon thread, and the next open reports the camera busy until it lets go.

picamera2 is imported only inside `_import_picamera2`, because `libcamera` exists only on a Pi.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Mapping
from concurrent.futures import CancelledError
from dataclasses import dataclass, field, replace
from typing import Any

from hardware.errors import (
    CameraBusyError,
    CorruptFrameError,
    MissingBackendError,
    NoCameraError,
    SourceLostError,
)
from hardware.source import Frame, Preview, SourceBase

INSTALL_HINT = (
    "install it from Raspberry Pi OS (it is not on PyPI in a working form): "
    "`sudo apt install -y python3-picamera2`, and make the venv see it: "
    "`make install VENV_FLAGS=--system-site-packages` (or `python3 -m venv "
    "--system-site-packages .venv`)"
)

#: sensor model -> main stream size (w, h): a full-field-of-view binned mode, fast and sharp enough
DEFAULT_SIZES: dict[str, tuple[int, int]] = {
    "imx708": (2304, 1296),  # Camera Module 3 (and _wide / _noir): 2x2 binned, full FoV, 56 fps
    "imx219": (1640, 1232),  # Camera Module 2: 2x2 binned, full FoV, 41 fps
    "imx477": (2028, 1520),  # HQ camera: 2x2 binned, 40 fps
    "imx296": (1456, 1088),  # Global Shutter camera
    "ov5647": (1296, 972),  # Camera Module 1
}
FALLBACK_SIZE = (1640, 1232)

#: libcamera's AfModeEnum values (controls.AfModeEnum.Manual == 0)
AF_MODE_MANUAL = 0
#: libcamera's AeStateEnum.Converged
AE_STATE_CONVERGED = 2

LOCKED_CONTROL_NAMES = ("ExposureTime", "AnalogueGain", "ColourGains")


@dataclass(frozen=True)
class Picamera2Params:
    """How the Pi camera is opened; the defaults are the shipped tuning."""

    #: main stream size (w, h); None: chosen from the sensor model (`DEFAULT_SIZES`)
    size: tuple[int, int] | None = None
    #: while the camera settles and focuses: 10-15 fps (a settle window of frames goes by in a
    #: third of a second), and frames long enough for a 100 ms exposure at low gain
    frame_duration_limits_us: tuple[int, int] = (66667, 100000)
    #: then, settled and locked, the referee reads at most 8 frames a second (`serve --max-fps`),
    #: so the sensor runs at 10 fps, not 15 or 30: a third fewer frames for libcamera, the ISP and
    #: picamera2's event loop (its Python thread handles every one: the fake's loop 0.42 -> 0.29
    #: ms of CPU a read at 8 reads a second), still a frame between two reads 125 ms apart (a
    #: read waits at most one 100 ms frame; a frame read is on average 50 ms old); None: as above
    locked_frame_duration_us: int | None = 100000
    buffer_count: int = 4
    #: the `lores` stream's width, for the page's picture (`Frame.preview`); its height keeps
    #: the main stream's aspect. 640: the live page's picture on a laptop (a page that shows it
    #: wider gets it from the full frame, as from any other source); None: no lores stream
    preview_width: int | None = 640
    #: settling: consecutive frames whose exposure x gain and colour gains agree within tolerance
    settle_window_frames: int = 5
    settle_tolerance: float = 0.03
    settle_timeout_s: float = 5.0
    #: lock exposure, gain and white balance after settling
    lock: bool = True
    #: Camera Module 3 manual focus in dioptres (1 / distance in m); None: autofocus once, lock
    lens_position_dioptres: float | None = None
    #: run one autofocus cycle at start on cameras that have autofocus (then lock the lens)
    autofocus: bool = True
    autofocus_timeout_s: float = 5.0
    #: a capture that takes longer than this means the camera is gone: 20 frames at the longest
    #: frame duration (100 ms), so "camera lost" reaches the page within a few seconds
    capture_timeout_s: float = 2.0
    #: closing a camera that lost its sensor may block in libcamera: give up waiting after this
    close_timeout_s: float = 2.0
    #: controls to apply instead of settling (e.g. `locked_controls()` stored by the calibration)
    controls: Mapping[str, Any] = field(default_factory=dict)


def preview_size(main_size: tuple[int, int], width: int | None) -> tuple[int, int] | None:
    """The lores stream's (w, h) for a main stream of `main_size`: `width` wide, as high as the
    main stream's aspect gives, both even (picamera2 wants them so); None without a width or
    when the main stream is no wider (the page's picture is then the frame itself)."""
    if width is None or width >= main_size[0]:
        return None
    width -= width % 2
    height = round(width * main_size[1] / main_size[0] / 2) * 2
    return (width, height) if width > 0 and height > 0 else None


def _import_picamera2() -> type:
    try:
        from picamera2 import Picamera2
    except ModuleNotFoundError as exc:
        missing = exc.name or "picamera2"
        raise MissingBackendError(
            f"picamera2: the Python module {missing!r} is missing; {INSTALL_HINT}"
        ) from exc
    except ImportError as exc:  # libcamera present but broken / mismatched
        raise MissingBackendError(f"picamera2: cannot import picamera2 ({exc}); {INSTALL_HINT}") from exc
    except ValueError as exc:  # "numpy.dtype size changed": apt's simplejpeg vs pip's numpy 2
        raise MissingBackendError(
            f"picamera2: importing it failed ({exc}); the venv's numpy does not match the "
            "simplejpeg from apt: run `.venv/bin/pip install --force-reinstall simplejpeg`"
        ) from exc
    return Picamera2


def _mapped_array_of(picamera2_class: type) -> type | None:
    """`MappedArray` from the package `picamera2_class` comes from (picamera2, or the fake's
    module); None where there is none (frames are then always copied out)."""
    import importlib

    module = picamera2_class.__module__
    for name in (module, module.rsplit(".", 1)[0]):
        try:
            found = getattr(importlib.import_module(name), "MappedArray", None)
        except ImportError:
            continue
        if found is not None:
            return found
    return None


def _lux_product(metadata: Mapping[str, Any]) -> tuple[float, float, float]:
    gains = metadata.get("ColourGains") or (1.0, 1.0)
    return (
        float(metadata.get("ExposureTime", 0)) * float(metadata.get("AnalogueGain", 1.0)),
        float(gains[0]),
        float(gains[1]),
    )


def is_settled(history: list[Mapping[str, Any]], window: int, tolerance: float) -> bool:
    """True when the last `window` metadata agree within `tolerance` (relative) or AE says locked."""
    if len(history) < window:
        return False
    recent = history[-window:]
    # libcamera reports convergence as "AeLocked" (older) or "AeState" == Converged (2, newer)
    if all(m.get("AeLocked") is True or m.get("AeState") == AE_STATE_CONVERGED
           for m in recent[-2:]):
        values = [_lux_product(m) for m in recent[-2:]]
    else:
        values = [_lux_product(m) for m in recent]
    for column in zip(*values):
        low, high = min(column), max(column)
        if high <= 0 or (high - low) / high > tolerance:
            return False
    return True


class Picamera2Source(SourceBase):
    """`picamera2[:N]`: the Pi camera, exposure/gain/white balance settled then locked."""

    def __init__(
        self,
        camera_num: int = 0,
        params: Picamera2Params = Picamera2Params(),
        *,
        size: tuple[int, int] | None = None,
        controls: Mapping[str, Any] | None = None,
        lens_position_dioptres: float | None = None,
        picamera2_class: type | None = None,
        mapped_array_class: type | None = None,
    ) -> None:
        if size is not None:
            params = replace(params, size=(int(size[0]), int(size[1])))
        if controls is not None:
            params = replace(params, controls=dict(controls))
        if lens_position_dioptres is not None:
            params = replace(params, lens_position_dioptres=float(lens_position_dioptres))
        self.params = params
        self.name = f"picamera2:{camera_num}"
        self._camera: Any = None
        cls = picamera2_class if picamera2_class is not None else _import_picamera2()
        cameras = self._camera_info(cls)
        if not cameras:
            raise NoCameraError(
                "picamera2: no camera found (is the ribbon cable seated, contacts the right way "
                "round? `rpicam-hello --list-cameras` should list it)"
            )
        if not 0 <= camera_num < len(cameras):
            raise NoCameraError(
                f"picamera2: no camera {camera_num}; found {len(cameras)}: "
                + ", ".join(f"{i}: {c.get('Model', '?')}" for i, c in enumerate(cameras))
            )
        self.model: str = str(cameras[camera_num].get("Model", "unknown"))
        try:
            self._camera = cls(camera_num)
        except IndexError as exc:
            raise NoCameraError(f"picamera2: no camera {camera_num}") from exc
        except RuntimeError as exc:
            raise CameraBusyError(
                f"picamera2: camera {camera_num} ({self.model}) is busy or failed to start - "
                "another program may hold it (a second `referee serve`, the systemd service, "
                "rpicam-*?), or its cable is loose: stop the other program or reseat the cable "
                f"and retry [{exc}]"
            ) from exc
        self._locked: dict[str, Any] = {}
        self.settled = False
        #: "focused", "failed" (autofocus ran but found nothing sharp), "manual", "fixed" or "none"
        self.focus = "none"
        #: set when a close gave up waiting for libcamera (its thread may still hold the camera)
        self.close_stuck = False
        self._frames = 0
        #: (the read that handed it out, request) for each frame lent by `read_borrowed`
        self._lent: list[tuple[int, Any]] = []
        self._mapped_array = mapped_array_class if mapped_array_class is not None else (
            _mapped_array_of(cls))
        try:
            self._start()
        except BaseException:
            self.close()
            raise

    @staticmethod
    def _camera_info(picamera2_class: type) -> list[dict[str, Any]]:
        try:
            return list(picamera2_class.global_camera_info())
        except Exception as exc:
            raise NoCameraError(f"picamera2: cannot list cameras: {exc}") from exc

    # --- opening ------------------------------------------------------------------------------
    def _start(self) -> None:
        params = self.params
        # "imx708_wide_noir" is an imx708 behind another lens: same sensor modes
        size = params.size or DEFAULT_SIZES.get(self.model.split("_")[0], FALLBACK_SIZE)
        available = self._camera.camera_controls
        start_controls: dict[str, Any] = {}
        if "FrameDurationLimits" in available:
            start_controls["FrameDurationLimits"] = tuple(params.frame_duration_limits_us)
        config = self._camera.create_video_configuration(
            main={"size": tuple(size), "format": "RGB888"},
            lores=self._lores(tuple(size)),
            buffer_count=params.buffer_count,
            controls=start_controls,
        )
        self._camera.configure(config)
        # libcamera may adjust the size while validating: take the one it settled on
        configured = self._camera.camera_configuration() or config
        self.size: tuple[int, int] = tuple(configured["main"]["size"])  # type: ignore[assignment]
        lores = configured.get("lores")
        #: the lores stream's (w, h), or None without one
        self.preview_size: tuple[int, int] | None = (
            tuple(lores["size"]) if lores is not None else None)  # type: ignore[assignment]
        has_focus = "AfMode" in available and "LensPosition" in available
        stored = dict(params.controls)
        lens = params.lens_position_dioptres
        if lens is None and "LensPosition" in stored:
            lens = float(stored.pop("LensPosition"))
        else:
            stored.pop("LensPosition", None)
        if lens is not None and not has_focus:
            raise NoCameraError(
                f"picamera2: {self.model} has no adjustable focus (a lens position is for "
                "Camera Module 3)"
            )
        self._camera.start()
        focus: dict[str, Any] = {}
        if lens is not None:
            focus = {"AfMode": AF_MODE_MANUAL, "LensPosition": float(lens)}
            self._camera.set_controls(focus)
            self.focus = "manual"
        elif has_focus and params.autofocus:
            focus = self._autofocus()
        else:
            self.focus = "fixed" if not has_focus else "none"
        if stored:
            self._apply_lock(stored, available)
            self.settled = True
        elif params.lock:
            self._settle_and_lock(available)
        self._locked |= {k: v for k, v in focus.items() if k == "LensPosition"}

    def _lores(self, main_size: tuple[int, int]) -> dict[str, Any] | None:
        """The lores stream asked for: YUV420 (a Pi 4 makes no other), `preview_size`."""
        size = preview_size(main_size, self.params.preview_width)
        return None if size is None else {"size": size, "format": "YUV420"}

    def _autofocus(self) -> dict[str, Any]:
        """One autofocus cycle, then the lens locked where it ended (as exposure is locked)."""
        try:
            focused = bool(self._camera.autofocus_cycle(wait=self.params.autofocus_timeout_s))
        except TimeoutError:  # still scanning (or no frames: the next capture will tell)
            self._camera.cancel_all_and_flush()
            focused = False
        lens = self._metadata().get("LensPosition")
        self.focus = "focused" if focused else "failed"
        if lens is None:
            return {}
        focus = {"AfMode": AF_MODE_MANUAL, "LensPosition": float(lens)}
        self._camera.set_controls(focus)
        return focus

    def _wait_for(self, capture: str, what: str) -> Any:
        """`camera.<capture>(wait=capture_timeout_s)`; a camera that stopped is `SourceLostError`."""
        camera = self._camera
        if camera is None:
            raise SourceLostError(f"{self.name}: the source is closed")
        timeout_s = self.params.capture_timeout_s
        try:
            return getattr(camera, capture)(wait=timeout_s)
        except TimeoutError as exc:
            # The capture job is still queued: cancel it now, or a stop() would wait behind it
            # for ever and the next capture would get its frame.
            camera.cancel_all_and_flush()
            raise SourceLostError(
                f"{self.name}: no {what} within {timeout_s:g} s (camera cable loose or "
                "unplugged?)"
            ) from exc
        except CancelledError as exc:
            raise SourceLostError(f"{self.name}: the capture was cancelled") from exc
        except RuntimeError as exc:  # one failed frame; the camera goes on
            raise CorruptFrameError(f"{self.name}: capture failed: {exc}") from exc

    def _metadata(self) -> Mapping[str, Any]:
        """The next frame's metadata only (settling and focus need no pixels)."""
        return self._wait_for("capture_metadata", "frame")

    def _capture(self, borrow: bool = False) -> tuple[Any, float, Mapping[str, Any], Preview | None]:
        """The next frame: picamera2 hands out the newest completed request (bounded wait), with
        its lores picture (the same request: the same exposure). `borrow`: views of the
        request's buffers, the request kept in `_lent` (the caller releases it), else copies."""
        request = self._wait_for("capture_request", "frame")
        lent = False
        try:
            lores = None
            if borrow and self._mapped_array is not None:
                array = self._view(request, "main")
                if self.preview_size is not None:
                    lores = self._view(request, "lores")
                lent = array is not None
            if not lent:
                array = request.make_array("main")
                if self.preview_size is not None:
                    lores = request.make_array("lores")
            metadata = request.get_metadata()
            image, preview = self._checked(array, lores)
        except BaseException:
            request.release()
            raise
        if lent:
            self._lent.append((self._frames + 1, request))
        else:
            request.release()
        timestamp_ns = metadata.get("SensorTimestamp")
        timestamp_s = timestamp_ns / 1e9 if timestamp_ns is not None else time.monotonic()
        return image, timestamp_s, metadata, preview

    def _view(self, request: Any, stream: str) -> Any:
        """A read-only view of `request`'s `stream` buffer (`MappedArray`), or None (frames are
        copied from then on) where this picamera2 cannot lend one: older versions unmap the
        buffer at the end of the `with` (`BufferError`: a view is still held) or have no
        `write` parameter (`TypeError`)."""
        try:
            with self._mapped_array(request, stream, write=False) as mapped:
                array = mapped.array
        except (BufferError, TypeError):
            self._mapped_array = None
            return None
        if array is not None:
            array = array.view()
            array.flags.writeable = False  # the camera's memory: nobody draws on it
        return array

    def _checked(self, array: Any, lores: Any) -> tuple[Any, Preview | None]:
        if array is None or getattr(array, "ndim", 0) != 3:
            raise CorruptFrameError(
                f"{self.name}: truncated buffer of shape {getattr(array, 'shape', None)}"
            )
        if array.shape[2] == 4:  # XBGR8888 / XRGB8888
            array = array[:, :, :3]
        expected = (self.size[1], self.size[0], 3)
        if array.shape != expected:
            raise CorruptFrameError(f"{self.name}: frame of shape {array.shape}, expected {expected}")
        preview = None
        if lores is not None and self.preview_size is not None:
            preview = Preview(lores, self.preview_size, "YUV420")  # CorruptFrameError if cut
        return array, preview

    def _release_lent(self, before_read: int | None = None) -> None:
        """Give the lent requests back to the camera: those handed out by read `before_read`
        or earlier (None: all)."""
        keep = []
        for read, request in self._lent:
            if before_read is None or read <= before_read:
                with contextlib.suppress(Exception):  # a camera already closed
                    request.release()
            else:
                keep.append((read, request))
        self._lent = keep

    def _settle_and_lock(self, available: Mapping[str, Any]) -> None:
        params = self.params
        history: list[Mapping[str, Any]] = []
        deadline = time.monotonic() + params.settle_timeout_s
        while time.monotonic() < deadline:
            try:
                meta = self._metadata()
            except CorruptFrameError:
                continue
            history.append(meta)
            if is_settled(history, params.settle_window_frames, params.settle_tolerance):
                self.settled = True
                break
        if not history:
            raise SourceLostError(f"{self.name}: no frame while settling exposure")
        last = history[-1]
        self._apply_lock({k: last[k] for k in LOCKED_CONTROL_NAMES if k in last}, available)

    def _locked_frame_duration_limits_us(self) -> tuple[int, int] | None:
        """`FrameDurationLimits` once locked (`Picamera2Params.locked_frame_duration_us`), the
        longest frame kept, so the locked exposure still fits; None: left as they were."""
        frame_us = self.params.locked_frame_duration_us
        if frame_us is None:
            return None
        return (int(frame_us), max(int(frame_us), int(self.params.frame_duration_limits_us[1])))

    def _apply_lock(self, values: Mapping[str, Any], available: Mapping[str, Any]) -> None:
        controls: dict[str, Any] = {}
        if "AeEnable" in available:
            controls["AeEnable"] = False
        if "AwbEnable" in available and "ColourGains" in values:
            controls["AwbEnable"] = False
        for name, value in values.items():
            if name not in available:
                continue
            if name == "ExposureTime":
                value = round(float(value))
            elif name == "AnalogueGain":
                value = float(value)
            elif name == "ColourGains":
                value = (float(value[0]), float(value[1]))
            controls[name] = value
        limits_us = self._locked_frame_duration_limits_us()
        self._locked = {k: v for k, v in controls.items() if k not in ("AeEnable", "AwbEnable")}
        if limits_us is not None and "FrameDurationLimits" in available:
            controls["FrameDurationLimits"] = limits_us  # with the lock: the exposure is fixed
        self._camera.set_controls(controls)
        self._wait_for_lock()

    def _wait_for_lock(self) -> None:
        """Drop the frames still in flight from before the lock (controls apply a few frames late)."""
        target = {k: v for k, v in self._locked.items() if k in ("ExposureTime", "AnalogueGain")}
        if not target:
            return
        deadline = time.monotonic() + self.params.settle_timeout_s
        while time.monotonic() < deadline:
            try:
                meta = self._metadata()
            except CorruptFrameError:
                continue
            # the sensor rounds exposure to whole lines: allow a small difference
            if all(abs(float(meta.get(k, -1.0)) - float(v)) <= 0.02 * abs(float(v)) + 1e-9
                   for k, v in target.items()):
                return

    # --- the FrameSource protocol ------------------------------------------------------------
    def locked_controls(self) -> dict[str, Any]:
        """The fixed exposure (us), gain, colour gains (r, b) and focus: JSON-able, re-appliable."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self._locked.items()}

    def read(self) -> Frame:
        return self._read(borrow=False)

    def read_borrowed(self) -> Frame:
        """The next frame in the camera's own buffer, read-only, valid until the second read
        after this one (`read` or `read_borrowed`) or `close()`; copy what you keep longer."""
        return self._read(borrow=True)

    def _read(self, borrow: bool) -> Frame:
        # the frame lent two reads ago is done with (its successor has been judged): back to
        # the camera before waiting, so it has the buffer for the next frame
        self._release_lent(before_read=self._frames - 1)
        # (a lost camera keeps what it lent until `close()`: the caller may still be showing it)
        image, timestamp_s, metadata, preview = self._capture(borrow)
        meta = dict(metadata)
        meta["source"] = self.name
        self._frames += 1
        return Frame(image, timestamp_s, self._frames, meta, preview)

    @property
    def lent(self) -> int:
        """Requests held for frames lent by `read_borrowed` (at most two)."""
        return len(self._lent)

    def close(self) -> None:
        """Cancel what is queued, close the camera; wait at most `close_timeout_s` for it."""
        camera, self._camera = self._camera, None
        if camera is None:
            return
        self._release_lent()  # the frames lent are no longer valid

        def shut_down() -> None:
            camera.cancel_all_and_flush()  # a stop() queued behind a dead capture never runs
            camera.close()  # stops picamera2's event loop, then the camera, then releases it

        closer = threading.Thread(target=shut_down, name=f"close-{self.name}", daemon=True)
        closer.start()
        closer.join(self.params.close_timeout_s)
        self.close_stuck = closer.is_alive()


def describe_cameras(picamera2_class: type | None = None) -> tuple[bool, str, list[dict[str, Any]]]:
    """(picamera2 importable, a one-line detail, the cameras libcamera sees) for `referee sources`."""
    try:
        cls = picamera2_class if picamera2_class is not None else _import_picamera2()
    except MissingBackendError as exc:
        return False, str(exc), []
    try:
        cameras = [dict(c) for c in cls.global_camera_info()]
    except Exception as exc:  # noqa: BLE001
        return True, f"picamera2 imported, but listing cameras failed: {exc}", []
    if not cameras:
        return True, "picamera2 imported; no camera connected", []
    names = ", ".join(f"picamera2:{i} ({c.get('Model', '?')})" for i, c in enumerate(cameras))
    return True, names, cameras


__all__ = [
    "DEFAULT_SIZES",
    "INSTALL_HINT",
    "Picamera2Params",
    "Picamera2Source",
    "describe_cameras",
    "is_settled",
    "preview_size",
]
