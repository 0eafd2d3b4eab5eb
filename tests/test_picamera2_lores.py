"""The Pi camera's second, smaller stream (picamera2's `lores`) and the page's picture made from it.

The fake's lores stream against what picamera2 and the Pi 4's ISP driver do (sizes, format,
stride, the YUV420 layout `make_array` hands out, one request for both streams); the source's
`Frame.preview` against the main frame it was scaled from; the page's picture from the preview
when it is wide enough, from the frame otherwise and for sources without one.
"""

from __future__ import annotations

import itertools
import time
from pathlib import Path
from types import SimpleNamespace

import cv2
import numpy as np
import pytest
from test_sources_support import measure_disc, render_frame

from hardware import CorruptFrameError, Frame
from hardware.fakes.picamera2 import FakeCamera, FakeCameraSystem
from hardware.source import Preview
from hardware.sources.picamera2_source import Picamera2Params, Picamera2Source, preview_size
from referee.log import MatchLog
from referee.overlay import draw_overlay, shown_picture
from referee.service import RefereeService
from web.app import create_app

MAIN = (1280, 720)
#: a disc's centroid in the preview against the main frame's scaled to it: the ISP's INTER_AREA
#: and 4:2:0 chroma move it by a small fraction of a preview pixel (7 px radius there); the
#: frame before or after is 11 preview px away
CENTROID_TOLERANCE_PX = 0.15
#: mean |difference| per channel of the preview against the main frame shrunk the same way:
#: 8-bit rounding through YUV and back (~1 level) plus 4:2:0 chroma at the disc's rim
MEAN_LEVELS_TOLERANCE = 2.0


def _camera(system: FakeCameraSystem) -> object:
    return system.picamera2_class()


def test_lores_is_configured_as_picamera2_configures_it() -> None:
    camera = _camera(FakeCameraSystem([FakeCamera()]))
    try:
        config = camera.create_video_configuration(main={"size": MAIN, "format": "RGB888"},
                                                   lores={"size": (601, 339)})
        # picamera2's defaults for lores (YUV420, not keeping the aspect), the size made even
        assert config["lores"] == {"format": "YUV420", "size": (600, 338), "preserve_ar": False}
        camera.configure(config)
        lores = camera.camera_configuration()["lores"]
        # bcm2835-isp: YUV420 rows 64-byte aligned, the chroma planes adding half the luma
        assert lores["stride"] == 640 and lores["framesize"] == 640 * 338 * 3 // 2
        whole = camera.create_video_configuration(main={"size": MAIN}, lores={})
        assert whole["lores"]["size"] == MAIN, "lores defaults to the main stream's size"
        assert camera.create_video_configuration(main={"size": MAIN})["lores"] is None
        with pytest.raises(RuntimeError, match="may not exceed main"):
            camera.configure(camera.create_video_configuration(
                main={"size": (640, 480)}, lores={"size": (1280, 720)}))
        with pytest.raises(RuntimeError, match="must be YUV"):  # a Pi 4
            camera.configure(camera.create_video_configuration(
                main={"size": MAIN}, lores={"size": (320, 180), "format": "RGB888"}))
        with pytest.raises(ValueError, match="Bad key"):
            camera.create_video_configuration(main={"size": MAIN}, lores={"sise": (320, 180)})
    finally:
        camera.close()
    pi5 = _camera(FakeCameraSystem([FakeCamera()], platform="pisp"))
    try:  # the Pi 5's ISP makes RGB on its second output too
        pi5.configure(pi5.create_video_configuration(
            main={"size": MAIN}, lores={"size": (320, 180), "format": "RGB888"}))
    finally:
        pi5.close()


def _lores_array(scene: np.ndarray, size: tuple[int, int], fmt: str = "YUV420") -> np.ndarray:
    """One request's lores array from a camera showing `scene` at the main stream's size."""
    system = FakeCameraSystem([FakeCamera(fps=250.0, settle_frames=1, image=scene,
                                          model="imx219")])  # fixed focus: no blur
    camera = _camera(system)
    try:
        camera.configure(camera.create_video_configuration(
            main={"size": (scene.shape[1], scene.shape[0]), "format": "RGB888"},
            lores={"size": size, "format": fmt}))
        camera.set_controls({"AeEnable": False, "ExposureTime": 16000, "AnalogueGain": 2.0})
        camera.start()
        request = camera.capture_request(wait=2.0)
        try:
            return request.make_array("lores")
        finally:
            request.release()
    finally:
        camera.close()


def test_a_lores_buffer_is_laid_out_as_make_array_hands_it_out() -> None:
    """(h * 3 / 2, stride): the Y plane's rows, then U then V (V then U for YVU420), each a
    half-size plane of rows stride / 2 bytes; the padding past the width is not picture."""
    width, height = 600, 338  # 600 is not a multiple of 64: every row is padded to 640
    scene = np.zeros((MAIN[1], MAIN[0], 3), np.uint8)
    scene[:, MAIN[0] // 2:] = (255, 0, 0)  # left black, right pure blue
    for fmt, blue_plane in (("YUV420", 0), ("YVU420", 1)):
        yuv = _lores_array(scene, (width, height), fmt)
        assert yuv.dtype == np.uint8 and yuv.shape == (height * 3 // 2, 640)
        luma = yuv[:height]
        assert luma[:, :width // 2 - 4].max() < 20, "black has no brightness"
        # BT.601: blue's luma is 0.114 of white's, well above black's
        assert 20 < float(np.median(luma[:, width // 2 + 4: width])) < 60
        assert not luma[:, width:].any(), "the row padding holds no picture"
        flat = yuv[height:].reshape(-1)
        quarter = (640 // 2) * (height // 2)
        planes = [flat[k * quarter:(k + 1) * quarter].reshape(height // 2, 640 // 2)
                  for k in range(2)]
        u, v = planes[blue_plane], planes[1 - blue_plane]
        half = width // 2
        # black: no colour (128); blue: U (B - Y) far above, V (R - Y) below no colour
        assert abs(float(np.median(u[:, : half // 2 - 4])) - 128) < 4
        assert np.median(u[:, half // 2 + 4: half]) > 200
        assert np.median(v[:, half // 2 + 4: half]) < 128
        assert not u[:, half:].any() and not v[:, half:].any()


def _scaled_disc(image: np.ndarray, to: tuple[int, int]) -> tuple[float, float]:
    """The disc's centroid in `image`, in the pixels of `image` scaled to `to` (pixel centres
    at whole numbers: a pixel's centre x lands at (x + 0.5) * scale - 0.5)."""
    x, y = measure_disc(image)
    sx, sy = to[0] / image.shape[1], to[1] / image.shape[0]
    return (x + 0.5) * sx - 0.5, (y + 0.5) * sy - 0.5


def test_main_and_lores_come_from_one_request() -> None:
    """A world that changes at every look (the disc moves 23 px each call of the frame
    function): main and lores of one request still show the same moment."""
    calls = itertools.count()
    system = FakeCameraSystem([FakeCamera(fps=250.0, settle_frames=2, model="imx219",
                                          frame_fn=lambda i, size: render_frame(next(calls),
                                                                                size))])
    with Picamera2Source(0, Picamera2Params(capture_timeout_s=1.0), size=MAIN,
                         picamera2_class=system.picamera2_class) as source:
        assert source.preview_size == (640, 360)
        frames = [source.read() for _ in range(6)]
    for frame in frames:
        assert frame.preview is not None and frame.preview.size == (640, 360)
        shown = frame.preview.bgr()
        assert shown.shape == (360, 640, 3)
        expected = _scaled_disc(frame.image, (640, 360))
        assert np.hypot(*np.subtract(measure_disc(shown), expected)) < CENTROID_TOLERANCE_PX


def test_the_preview_is_the_main_frame_made_small() -> None:
    """The preview against the main frame shrunk to its size (INTER_AREA, as the fake's ISP
    scales), through YUV420 and back."""
    system = FakeCameraSystem([FakeCamera(fps=250.0, settle_frames=2,
                                          frame_fn=lambda i, size: render_frame(i, size))])
    with Picamera2Source(0, Picamera2Params(capture_timeout_s=1.0), size=(2304, 1296),
                         picamera2_class=system.picamera2_class) as source:
        frame = source.read()
    assert frame.image.shape == (1296, 2304, 3)
    small = cv2.resize(frame.image, (640, 360), interpolation=cv2.INTER_AREA)
    shown = frame.preview.bgr()
    assert float(np.abs(shown.astype(np.int16) - small).mean()) < MEAN_LEVELS_TOLERANCE


def test_no_lores_stream_when_the_main_stream_is_no_wider() -> None:
    system = FakeCameraSystem([FakeCamera(fps=250.0, settle_frames=2,
                                          frame_fn=lambda i, size: render_frame(i, size))])
    for params, size in ((Picamera2Params(capture_timeout_s=1.0), (640, 480)),
                         (Picamera2Params(capture_timeout_s=1.0, preview_width=None), MAIN)):
        with Picamera2Source(0, params, size=size,
                             picamera2_class=system.picamera2_class) as source:
            assert source.preview_size is None
            assert system.instances[-1].camera_config["lores"] is None
            assert source.read().preview is None
    assert preview_size((1640, 1232), 640) == (640, 480)  # Camera Module 2: 4:3
    assert preview_size((2304, 1296), 641) == (640, 360)


def test_a_cut_preview_buffer_is_a_corrupt_frame() -> None:
    yuv = np.zeros((540, 640), np.uint8)
    assert Preview(yuv, (640, 360)).bgr().shape == (360, 640, 3)
    for bad in (yuv[:300], yuv.reshape(-1), yuv[:, :600], yuv.astype(np.uint16)):
        with pytest.raises(CorruptFrameError, match="preview"):
            Preview(bad, (640, 360))


# --- the page's picture ------------------------------------------------------------------------
def _grey(width: int, height: int, level: int) -> np.ndarray:
    return np.full((height, width, 3), level, np.uint8)


def _preview_of(image: np.ndarray) -> Preview:
    from hardware.fakes.picamera2 import to_yuv420

    return Preview(to_yuv420(image), (image.shape[1], image.shape[0]))


def test_the_page_picture_comes_from_the_preview_only_when_it_is_wide_enough() -> None:
    """Main frame grey 100, its preview grey 200 (told apart on purpose): a page at most as wide
    as the preview gets the preview; a wider page, or a source with no preview, the frame."""
    frame = _grey(2304, 1296, 100)
    preview = _preview_of(_grey(640, 360, 200))
    for width, preview_given, level in ((640, True, 200), (480, True, 200), (800, True, 100),
                                        (640, False, 100), (None, True, 100)):
        shown = shown_picture(frame, preview if preview_given else None, width)
        assert abs(float(shown.mean()) - level) < 2, (width, preview_given)
        assert shown.shape[1] == (width or 2304)


def _square_referee(corners_px: np.ndarray) -> SimpleNamespace:
    """A referee whose board is the square `corners_px` (no pieces, no words)."""
    H_board_to_image = cv2.getPerspectiveTransform(
        np.float32([[0, 0], [1, 0], [1, 1], [0, 1]]), np.float32(corners_px))
    board = SimpleNamespace(corners_px=corners_px, H_board_to_image=H_board_to_image)
    match = SimpleNamespace(instruction={"kind": "info", "text": ""})
    spec = SimpleNamespace(draw=lambda *args: None)
    return SimpleNamespace(board=board, spec=spec, last_reading=None, match=match, hand=False)


def _green_box(image: np.ndarray) -> tuple[int, int, int, int]:
    b, g, r = (image[:, :, k].astype(int) for k in range(3))
    ys, xs = np.nonzero((g > 150) & (r < 120) & (b < 120))
    return int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max())


def test_the_board_outline_stays_on_the_board_in_the_preview() -> None:
    """A white square on black, its corners the board's: the outline drawn on the page's
    picture runs along the square's edges, from the preview or from the frame, even a preview
    of another aspect (a lores stream with preserve_ar False stretches the field of view)."""
    frame = np.zeros((720, 1280, 3), np.uint8)
    x0, y0, x1, y1 = 320, 180, 960, 540
    frame[y0:y1, x0:x1] = 255
    corners = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], float)
    referee = _square_referee(corners)
    stretched = _preview_of(cv2.resize(frame, (640, 400), interpolation=cv2.INTER_AREA))
    before = stretched.bgr().copy()
    for preview, (sx, sy) in ((stretched, (0.5, 400 / 720)), (None, (0.5, 0.5))):
        shown = draw_overlay(frame, referee, width=640, preview=preview)
        assert shown.shape[:2] == (round(720 * sy), 640)
        box = _green_box(shown)
        truth = (x0 * sx, y0 * sy, x1 * sx, y1 * sy)
        # the line is `thick` (2 px) wide, centred on the edge
        assert np.abs(np.subtract(box, truth)).max() <= 2.0, (box, truth)
    assert np.array_equal(stretched.bgr(), before), "drawn on a copy, not on the preview"


class _TwoPictures:
    """Frames of grey 100 whose camera preview is grey 200 (told apart on purpose), or frames
    with no preview at all (a webcam, a file)."""

    def __init__(self, with_preview: bool) -> None:
        self.with_preview = with_preview
        self.index = 0

    def read(self) -> Frame:
        time.sleep(0.02)
        self.index += 1
        preview = _preview_of(_grey(640, 360, 200)) if self.with_preview else None
        return Frame(_grey(2304, 1296, 100), time.monotonic(), self.index, {}, preview)

    def close(self) -> None:
        pass


@pytest.mark.parametrize("with_preview", [True, False])
def test_the_live_page_gets_its_picture_from_the_preview(tmp_path: Path,
                                                         with_preview: bool) -> None:
    """Through `referee serve`'s service and the page's URL: a page 640 px wide is sent the
    camera's preview, a wider page or a source without previews the frame made small."""
    service = RefereeService(MatchLog(tmp_path / "m.sqlite"),
                             lambda restart: _TwoPictures(with_preview), game="dition",
                             max_fps=20.0)
    client = create_app({"TESTING": True}, service=service).test_client()
    service.start()
    try:
        deadline = time.monotonic() + 20
        while service.referee.last_frame is None and time.monotonic() < deadline:
            time.sleep(0.05)
        for width, overlay in itertools.product((640, 1280), (0, 1)):
            response = client.get(f"/api/frame.jpg?overlay={overlay}&w={width}")
            assert response.status_code == 200
            shown = cv2.imdecode(np.frombuffer(response.data, np.uint8), cv2.IMREAD_COLOR)
            assert shown.shape[1] == width
            level = 200 if with_preview and width <= 640 else 100
            # the median: the overlay writes "board not found" over the top of the picture
            assert abs(float(np.median(shown)) - level) < 3, (width, overlay)
    finally:
        assert service.stop()
