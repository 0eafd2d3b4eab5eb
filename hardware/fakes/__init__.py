"""Fakes at the hardware edge, mirroring the real APIs, with fault injection for tests and demos.

- `hardware.fakes.picamera2`: a fake `Picamera2` class (same method names and signatures as
  raspberrypi/picamera2) driven by a `FakeCameraSystem` of `FakeCamera`s.
- `hardware.fakes.stream_server`: a loopback HTTP server that plays a phone streaming MJPEG, or
  a web server handing out a video file.
"""
