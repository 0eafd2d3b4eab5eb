"""open_source picks the kind from the spec; registered kinds (the simulated table) come first."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import pytest
from test_sources_support import render_frame, write_avi

import hardware
from hardware import (
    Frame,
    FrameSource,
    SourceBase,
    SourceOptionError,
    SourceUnavailableError,
    UnknownSourceError,
    available_sources,
    open_source,
    register_source,
    unregister_source,
)
from hardware.sources.folder import FolderSource, ImageFileSource
from hardware.sources.opencv_source import VideoFileSource
from referee.cli import main as referee_main


class Recorder(SourceBase):
    def __init__(self, spec: str, **options: object) -> None:
        self.spec = spec
        self.options = options

    def read(self) -> Frame:
        return Frame(render_frame(0), 0.0, 0, {"spec": self.spec})


@pytest.fixture
def registered() -> object:
    register_source("toy", Recorder, description="toy:ANY - a test source",
                    available=lambda: (False, "toy is never available"))
    yield
    unregister_source("toy")


def test_registered_kind_gets_the_spec_and_the_options(registered: object) -> None:
    source = open_source("toy:dition:7", fps=3)
    assert isinstance(source, Recorder) and isinstance(source, FrameSource)
    assert source.spec == "toy:dition:7" and source.options == {"fps": 3}
    assert open_source("toy").spec == "toy"  # type: ignore[attr-defined]
    with pytest.raises(UnknownSourceError):
        open_source("toyota:1")  # a prefix is not a kind
    assert ("toy", False, "toy is never available") in available_sources()
    assert "toy" in hardware.known_kinds()


def test_builtin_kinds_cannot_be_replaced_and_names_are_checked() -> None:
    for kind in ("webcam", "picamera2", "http"):
        with pytest.raises(ValueError, match="built in"):
            register_source(kind, Recorder, description="x")
    with pytest.raises(ValueError, match="identifier"):
        register_source("Bad Kind", Recorder, description="x")


def test_unknown_spec_names_itself_and_the_known_kinds() -> None:
    for spec in ("webcma:0", "cam", "sim2:dition"):
        with pytest.raises(UnknownSourceError) as info:
            open_source(spec)
        message = str(info.value)
        assert repr(spec) in message
        for kind in ("picamera2", "webcam", "folder", "video"):
            assert kind in message
    with pytest.raises(UnknownSourceError, match="camera index"):
        open_source("webcam:front")
    with pytest.raises(UnknownSourceError, match="empty"):
        open_source("  ")


def test_missing_paths_are_unavailable_not_unknown(tmp_path: Path) -> None:
    for spec in (str(tmp_path / "match.mp4"), "recordings/x.avi", "./frames", "shot.jpg"):
        with pytest.raises(SourceUnavailableError, match="no such file or folder"):
            open_source(spec)


def test_paths_pick_folder_image_or_video(tmp_path: Path) -> None:
    cv2.imwrite(str(tmp_path / "a.png"), render_frame(0))
    write_avi(tmp_path / "m.avi", 3)
    (tmp_path / "clip.bin").write_bytes((tmp_path / "m.avi").read_bytes())
    assert isinstance(open_source(str(tmp_path)), FolderSource)
    assert isinstance(open_source(str(tmp_path / "a.png")), ImageFileSource)
    assert isinstance(open_source(str(tmp_path / "m.avi")), VideoFileSource)
    assert isinstance(open_source(str(tmp_path / "clip.bin")), VideoFileSource)
    assert isinstance(open_source(f"file://{tmp_path}"), FolderSource)
    with pytest.raises(SourceOptionError, match="unknown option.*fps.*accepts"):
        open_source(str(tmp_path / "m.avi"), fps=5)


def test_webcam_without_device_is_unavailable() -> None:
    if Path("/dev/video7").exists():
        pytest.skip("this machine has a /dev/video7")
    with pytest.raises(SourceUnavailableError, match="/dev/video7"):
        open_source("webcam:7")


def _sim_ready() -> bool:
    try:
        from hardware import sim
    except ImportError:
        return False
    return all(hasattr(sim, n) for n in ("ScriptedTable", "random_camera", "Still", "HandPlace"))


@pytest.mark.skipif(not _sim_ready(), reason="hardware.sim (issue 3) is not complete yet")
def test_the_simulated_table_is_a_source_through_the_registry() -> None:
    from referee.sources import register_sim

    register_sim()
    with open_source("sim:dition:3", size=(320, 240)) as source:
        frames = [source.read() for _ in range(3)]
    assert all(f.image.shape == (240, 320, 3) for f in frames)
    assert all("truth" in f.meta for f in frames)
    with pytest.raises(ValueError, match="chess"):
        open_source("sim:chess")


def test_referee_sources_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert referee_main(["sources", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    kinds = {row["kind"]: row for row in info["sources"]}
    assert {"picamera2", "webcam", "url", "video", "folder", "image", "sim"} <= set(kinds)
    assert kinds["folder"]["available"] is True
    assert info["ffmpeg"] is kinds["url"]["available"]
    assert set(info["video_devices"]) == {str(p) for p in Path("/dev").glob("video*")}
    assert kinds["webcam"]["available"] is bool(info["webcams"])
    assert kinds["picamera2"]["available"] is (
        info["picamera2"]["importable"] and bool(info["picamera2"]["cameras"]))


def test_referee_sources_try(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for i in range(4):
        cv2.imwrite(str(tmp_path / f"f{i}.png"), render_frame(i))
    (tmp_path / "f9.jpg").write_bytes(b"\xff\xd8 broken")
    assert referee_main(["sources", "--json", "--try", str(tmp_path), "--frames", "10"]) == 0
    tried = json.loads(capsys.readouterr().out)["try"]
    assert tried["ok"] and tried["frames"] == 4 and tried["corrupt"] == 1
    assert tried["size"] == [320, 240]
    assert referee_main(["sources", "--try", str(tmp_path / "nope.mp4")]) == 1
    out = capsys.readouterr().out
    assert "FAILED" in out and "nope.mp4" in out
    assert referee_main(["sources"]) == 0
    assert "picamera2" in capsys.readouterr().out


def test_camera_options_in_the_spec() -> None:
    from hardware.fakes.picamera2 import FakeCamera, FakeCameraSystem

    system = FakeCameraSystem([FakeCamera(fps=300.0, settle_frames=2)])
    spec = "picamera2:0?size=640x480&lens_position=1.25"
    with open_source(spec, picamera2_class=system.picamera2_class) as source:
        frame = source.read()
        assert frame.image.shape == (480, 640, 3)
        assert source.locked_controls()["LensPosition"] == 1.25  # type: ignore[attr-defined]
    with open_source("picamera2?size=320x240", picamera2_class=system.picamera2_class) as source:
        assert source.read().image.shape == (240, 320, 3)
    with pytest.raises(SourceOptionError, match="WIDTHxHEIGHT"):
        open_source("picamera2:0?size=big")
    with pytest.raises(SourceOptionError, match="unknown option 'zoom'.*size, lens_position"):
        open_source("picamera2:0?zoom=2")
    with pytest.raises(SourceOptionError, match="webcam options: size, fps"):
        open_source("webcam:0?loop=1")


def test_only_usb_capture_nodes_count_as_webcams(tmp_path: Path) -> None:
    """A fake /sys/class/video4linux: a UVC webcam (capture + metadata node) and Pi ISP nodes."""
    from hardware.sources.availability import webcam_devices

    drivers = tmp_path / "bus"
    for driver in ("uvcvideo", "bcm2835-isp", "rp1-cfe"):
        (drivers / driver).mkdir(parents=True)
    nodes = {"video0": ("uvcvideo", "0", "HD Pro Webcam C920"),
             "video1": ("uvcvideo", "1", "HD Pro Webcam C920"),
             "video13": ("bcm2835-isp", "0", "bcm2835-isp"),
             "video20": ("rp1-cfe", "0", "rp1-cfe"),
             "video2": ("uvcvideo", "0", "USB Camera")}
    root = tmp_path / "video4linux"
    for node, (driver, index, name) in nodes.items():
        (root / node / "device").mkdir(parents=True)
        (root / node / "device" / "driver").symlink_to(drivers / driver)
        (root / node / "index").write_text(index + "\n")
        (root / node / "name").write_text(name + "\n")
    assert webcam_devices(root) == [(0, "HD Pro Webcam C920"), (2, "USB Camera")]
    assert webcam_devices(tmp_path / "absent") == []
