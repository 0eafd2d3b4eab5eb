"""What this machine can use: picamera2 and its cameras, /dev/video*, the FFmpeg backend."""

from __future__ import annotations

from pathlib import Path


def video_devices() -> list[str]:
    """The V4L2 capture nodes (/dev/video*), naturally sorted."""
    from hardware.sources.folder import natural_key

    dev = Path("/dev")
    if not dev.is_dir():
        return []
    return sorted((str(p) for p in dev.glob("video*")), key=natural_key)


def builtin_availability() -> list[tuple[str, bool, str]]:
    """(kind, usable, detail) for the built-in kinds."""
    from hardware.sources.picamera2_source import describe_cameras

    rows: list[tuple[str, bool, str]] = []
    importable, detail, cameras = describe_cameras()
    rows.append(("picamera2", importable and bool(cameras), detail))

    devices = video_devices()
    if devices:
        names = ", ".join(f"webcam:{d.removeprefix('/dev/video')} ({d})" for d in devices)
        rows.append(("webcam", True, names))
    else:
        rows.append(("webcam", False, "no /dev/video* devices (no USB camera plugged in)"))

    try:
        import cv2

        from hardware.sources.opencv_source import ffmpeg_available

        ffmpeg = ffmpeg_available()
        version = cv2.__version__
    except ImportError as exc:  # pragma: no cover - cv2 is a dependency
        rows += [("url", False, f"OpenCV missing: {exc}"), ("video", False, "OpenCV missing")]
        ffmpeg, version = False, ""
    else:
        if ffmpeg:
            rows.append(("url", True, f"OpenCV {version} with FFmpeg: http(s) MJPEG/HLS, rtsp"))
            rows.append(("video", True, f"OpenCV {version} with FFmpeg: mp4, mkv, avi, ..."))
        else:
            rows.append(("url", False, f"OpenCV {version} was built without FFmpeg"))
            rows.append(("video", True, f"OpenCV {version} without FFmpeg: MJPG .avi only"))
    rows.append(("folder", True, "always (png, jpg, bmp, tiff, webp)"))
    rows.append(("image", True, "always"))
    return rows
