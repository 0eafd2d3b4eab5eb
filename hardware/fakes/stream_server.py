"""A loopback HTTP server that plays a phone camera app: an MJPEG stream and plain video files.

`MjpegServer(frame_fn, ...)` serves, on 127.0.0.1 only:
- `/video.mjpg` - `multipart/x-mixed-replace` JPEG frames (what IP-camera phone apps send), at
  `fps`, each client from frame 0. `drop_after_n` closes the connection after that many frames
  (a dropped Wi-Fi link); `stop_serving()` refuses new connections (the phone app was closed).
- `/files/<name>` - bytes of a registered file, with HTTP range requests (a video on a web server).

Run it by hand to test a setup without a phone: `python -m hardware.fakes.stream_server DIR`
streams the images of DIR in a loop.
"""

from __future__ import annotations

import argparse
import re
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Self

import numpy as np

BOUNDARY = "refereeframe"


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        owner = self.server.owner
        if not owner.serving:
            self.send_error(503, "stream stopped")
            return
        if self.path.split("?")[0] == "/video.mjpg":
            self._stream(owner)
        elif self.path.startswith("/files/"):
            self._file(owner, self.path[len("/files/"):])
        else:
            self.send_error(404)

    def _stream(self, owner: MjpegServer) -> None:
        import cv2

        self.send_response(200)
        self.send_header("Content-Type", f"multipart/x-mixed-replace; boundary={BOUNDARY}")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        index = 0
        start = time.monotonic()
        try:
            while owner.serving and (owner.max_frames is None or index < owner.max_frames):
                if owner.drop_after_n is not None and index >= owner.drop_after_n:
                    return
                ok, jpeg = cv2.imencode(".jpg", owner.frame_fn(index),
                                        [cv2.IMWRITE_JPEG_QUALITY, owner.jpeg_quality])
                assert ok
                data = jpeg.tobytes()
                self.wfile.write(
                    f"--{BOUNDARY}\r\nContent-Type: image/jpeg\r\n"
                    f"Content-Length: {len(data)}\r\n\r\n".encode() + data + b"\r\n"
                )
                self.wfile.flush()
                with owner.lock:
                    owner.frames_sent += 1
                index += 1
                delay = start + index / owner.fps - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
        except (BrokenPipeError, ConnectionResetError):
            return

    def _file(self, owner: MjpegServer, name: str) -> None:
        path = owner.files.get(name)
        if path is None:
            self.send_error(404)
            return
        data = path.read_bytes()
        match = re.fullmatch(r"bytes=(\d*)-(\d*)", self.headers.get("Range", ""))
        if match and (match.group(1) or match.group(2)):
            first = int(match.group(1)) if match.group(1) else len(data) - int(match.group(2))
            last = int(match.group(2)) if match.group(1) and match.group(2) else len(data) - 1
            last = min(last, len(data) - 1)
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {first}-{last}/{len(data)}")
            body = data[first : last + 1]
        else:
            self.send_response(200)
            body = data
        self.send_header("Content-Type", "video/x-msvideo")
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            return


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: MjpegServer


class MjpegServer:
    """Serve `frame_fn(index) -> BGR image` as MJPEG (and `files`) on 127.0.0.1; a context manager."""

    def __init__(
        self,
        frame_fn: Callable[[int], np.ndarray],
        *,
        fps: float = 30.0,
        max_frames: int | None = None,
        drop_after_n: int | None = None,
        jpeg_quality: int = 90,
        files: dict[str, Path] | None = None,
        port: int = 0,
    ) -> None:
        self.frame_fn = frame_fn
        self.fps = fps
        self.max_frames = max_frames
        self.drop_after_n = drop_after_n
        self.jpeg_quality = jpeg_quality
        self.files = {k: Path(v) for k, v in (files or {}).items()}
        self.serving = True
        self.frames_sent = 0
        self.lock = threading.Lock()
        self._server = _Server(("127.0.0.1", port), _Handler)
        self._server.owner = self
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def stream_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/video.mjpg"

    def file_url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.port}/files/{name}"

    def stop_serving(self) -> None:
        """Open streams end and new connections get 503, as if the phone app was closed."""
        self.serving = False

    def resume_serving(self) -> None:
        self.serving = True

    def close(self) -> None:
        self.serving = False
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5.0)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def main(argv: list[str] | None = None) -> int:
    import cv2

    from hardware.sources.folder import FolderSource

    parser = argparse.ArgumentParser(description="Stream a folder of images as MJPEG on 127.0.0.1")
    parser.add_argument("folder")
    parser.add_argument("--fps", type=float, default=5.0)
    parser.add_argument("--port", type=int, default=8080)
    args = parser.parse_args(argv)
    images = [cv2.imread(str(p)) for p in FolderSource(args.folder).paths]
    images = [im for im in images if im is not None]
    with MjpegServer(lambda i: images[i % len(images)], fps=args.fps, port=args.port) as server:
        print(f"streaming {len(images)} images: {server.stream_url}", flush=True)
        try:
            while True:
                time.sleep(1)
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
