"""Image folders and single images: order, decoding, corrupt files, pacing."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_sources_support import CENTRE_TOLERANCE_PX, disc_centre_px, measure_disc, render_frame

from hardware import (
    CorruptFrameError,
    EndOfStream,
    SourceOptionError,
    SourceUnavailableError,
    open_source,
)
from hardware.sources.folder import FolderSource, natural_key


class FakeClock:
    """Injected time: `sleep` advances `now`; the sleeps are recorded."""

    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def _write_folder(folder: Path, indices: list[int], suffix: str = ".png") -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in indices:
        path = folder / f"frame{i}{suffix}"
        assert cv2.imwrite(str(path), render_frame(i))
        paths.append(path)
    return paths


def test_folder_frames_come_in_natural_order_and_show_the_right_picture(tmp_path: Path) -> None:
    indices = [0, 1, 2, 9, 10, 11, 100]
    _write_folder(tmp_path / "shots", indices)
    (tmp_path / "shots" / "notes.txt").write_text("not an image")
    with open_source(str(tmp_path / "shots")) as source:
        seen = []
        while True:
            try:
                frame = source.read()
            except EndOfStream:
                break
            seen.append(frame)
    assert [Path(f.meta["path"]).name for f in seen] == [f"frame{i}.png" for i in indices]
    for frame, i in zip(seen, indices):
        # PNG is lossless: the frame is exactly the rendered ground truth
        np.testing.assert_array_equal(frame.image, render_frame(i))
    assert [f.index for f in seen] == list(range(len(indices)))


def test_jpeg_folder_within_tolerance_and_corrupt_files_are_skipped(tmp_path: Path) -> None:
    folder = tmp_path / "jpegs"
    paths = _write_folder(folder, [0, 1, 2, 3], ".jpg")
    data = paths[1].read_bytes()
    paths[1].write_bytes(data[: len(data) // 2])  # truncated JPEG
    (folder / "frame2.jpg").write_bytes(b"this is not a jpeg at all")  # undecodable
    source = open_source(str(folder))
    good, errors = [], []
    while True:
        try:
            good.append(source.read())
        except CorruptFrameError as exc:
            errors.append(str(exc))
        except EndOfStream:
            break
    assert [Path(f.meta["path"]).name for f in good] == ["frame0.jpg", "frame3.jpg"]
    assert len(errors) == 2
    assert "frame1.jpg" in errors[0] and "truncated" in errors[0]
    assert "frame2.jpg" in errors[1]
    for frame in good:
        i = int(Path(frame.meta["path"]).stem.removeprefix("frame"))
        error_px = np.hypot(*np.subtract(measure_disc(frame.image), disc_centre_px(i)))
        assert error_px < CENTRE_TOLERANCE_PX


def test_truncated_png_is_corrupt(tmp_path: Path) -> None:
    (path,) = _write_folder(tmp_path, [4])
    path.write_bytes(path.read_bytes()[:-20])
    with pytest.raises(CorruptFrameError, match="truncated PNG"):
        open_source(str(tmp_path)).read()


def test_fps_paces_reads_and_sets_timestamps(tmp_path: Path) -> None:
    _write_folder(tmp_path / "f", list(range(5)))
    clock = FakeClock()
    source = FolderSource(tmp_path / "f", fps=2.0, sleep=clock.sleep, clock=clock)
    frames = [source.read() for _ in range(5)]
    assert [f.timestamp_s for f in frames] == pytest.approx([0.0, 0.5, 1.0, 1.5, 2.0])
    assert sum(clock.sleeps) == pytest.approx(2.0)  # frame 4 due 2 s after frame 0
    assert all(s > 0 for s in clock.sleeps)


def test_fps_from_the_spec_query(tmp_path: Path) -> None:
    _write_folder(tmp_path / "f", [0, 1])
    source = open_source(f"{tmp_path / 'f'}?fps=4")
    assert source.fps == 4.0  # type: ignore[attr-defined]
    with pytest.raises(SourceOptionError, match="fps"):
        open_source(f"{tmp_path / 'f'}?fps=fast")
    with pytest.raises(SourceOptionError, match="unknown option 'speed'"):
        open_source(f"{tmp_path / 'f'}?speed=2")
    with pytest.raises(SourceOptionError, match="positive"):
        open_source(str(tmp_path / "f"), fps=0)
    with pytest.raises(SourceOptionError, match="size"):
        open_source(str(tmp_path / "f"), size=(640, 480))


def test_loop_starts_over(tmp_path: Path) -> None:
    _write_folder(tmp_path / "f", [0, 1, 2])
    source = open_source(str(tmp_path / "f"), loop=True)
    names = [Path(source.read().meta["path"]).name for _ in range(7)]
    assert names == ["frame0.png", "frame1.png", "frame2.png"] * 2 + ["frame0.png"]


def test_empty_and_missing_folders(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "readme.md").write_text("x")
    with pytest.raises(SourceUnavailableError, match="has no images"):
        open_source(str(tmp_path / "empty"))
    with pytest.raises(SourceUnavailableError, match="no such file or folder"):
        open_source(str(tmp_path / "missing") + "/")


def test_single_image_once_or_looped(tmp_path: Path) -> None:
    (path,) = _write_folder(tmp_path, [7])
    source = open_source(str(path))
    frame = source.read()
    np.testing.assert_array_equal(frame.image, render_frame(7))
    with pytest.raises(EndOfStream):
        source.read()
    looped = open_source(f"{path}?loop=1")
    assert [looped.read().index for _ in range(4)] == [0, 1, 2, 3]
    with pytest.raises(CorruptFrameError):
        bad = tmp_path / "bad.jpg"
        bad.write_bytes(b"\xff\xd8 nope \xff\xd9")
        open_source(str(bad))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 10_000), min_size=1, max_size=20, unique=True))
def test_natural_order_is_numeric_order(numbers: list[int]) -> None:
    names = [f"img{n}.png" for n in numbers]
    ordered = sorted(names, key=natural_key)
    assert ordered == [f"img{n}.png" for n in sorted(numbers)]
