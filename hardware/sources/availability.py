"""What this machine can use: picamera2 and its cameras, /dev/video*, the FFmpeg backend."""

from __future__ import annotations

from pathlib import Path

SYS_VIDEO4LINUX = Path("/sys/class/video4linux")


def video_devices() -> list[str]:
    """The V4L2 nodes (/dev/video*), naturally sorted (webcams, but also a Pi's ISP and codecs)."""
    from hardware.sources.folder import natural_key

    dev = Path("/dev")
    if not dev.is_dir():
        return []
    return sorted((str(p) for p in dev.glob("video*")), key=natural_key)


def webcam_devices(sys_root: Path = SYS_VIDEO4LINUX) -> list[tuple[int, str]]:
    """(N, name) of each USB webcam's capture node /dev/videoN, from sysfs.

    A USB (UVC) camera's node has `device/driver` -> `uvcvideo`; of its nodes the capture one has
    `index` 0 (the others carry metadata). The Pi's own nodes (unicam, rp1-cfe, the ISP, codecs)
    are not webcams and are left out.
    """
    from hardware.sources.folder import natural_key

    found = []
    if not sys_root.is_dir():
        return found
    for node in sorted(sys_root.glob("video*"), key=lambda p: natural_key(p.name)):
        number = node.name.removeprefix("video")
        if not number.isdigit():
            continue
        driver = node / "device" / "driver"
        try:
            driver_name = driver.resolve().name if driver.exists() else ""
            index = (node / "index").read_text().strip() if (node / "index").exists() else "0"
            name = (node / "name").read_text().strip() if (node / "name").exists() else "?"
        except OSError:
            continue
        if driver_name == "uvcvideo" and index == "0":
            found.append((int(number), name))
    return found


def builtin_availability() -> list[tuple[str, bool, str]]:
    """(kind, usable, detail) for the built-in kinds."""
    from hardware.sources.picamera2_source import describe_cameras

    rows: list[tuple[str, bool, str]] = []
    importable, detail, cameras = describe_cameras()
    rows.append(("picamera2", importable and bool(cameras), detail))

    devices = video_devices()
    webcams = webcam_devices()
    others = len(devices) - len(webcams)
    if webcams:
        names = ", ".join(f"webcam:{n} ({name})" for n, name in webcams)
        rows.append(("webcam", True, names + (f"; {others} other video nodes" if others > 0
                                               else "")))
    elif devices:
        detail = (f"no USB webcam; {len(devices)} video nodes that are not UVC cameras "
                  "(the Pi's camera/ISP/codec nodes?)")
        rows.append(("webcam", False, detail))
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
