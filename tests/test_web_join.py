"""Joining from a phone: `/api/join` gives the page's LAN addresses and a QR code of the first
(issue 17). The QR code is read back with OpenCV's decoder from the SVG the page shows."""

from __future__ import annotations

import re
from pathlib import Path

import cv2
import numpy as np
import pytest

from web.join import join_info, lan_addresses, mdns_name


def _raster(svg: str, scale: int = 8) -> np.ndarray:
    """Paint segno's SVG: its dark path (class "qrline") is M/m moves and h runs of dark
    modules, one module high, in module units (the group's scale(k) gives pixels)."""
    view = re.search(r'viewBox="0 0 (\d+) (\d+)"', svg)
    k = int(re.search(r"scale\((\d+)\)", svg).group(1))
    w, h = int(view.group(1)) // k, int(view.group(2)) // k
    path = re.search(r'class="qrline"[^>]* d="([^"]+)"', svg).group(1)
    image = np.full((h * scale, w * scale), 255, np.uint8)
    x = y = 0.0
    for op, a, b in re.findall(r"([Mmh])(-?[\d.]+)(?:[ ,](-?[\d.]+))?", path):
        if op == "M":
            x, y = float(a), float(b)
        elif op == "m":
            x, y = x + float(a), y + float(b)
        else:
            n = float(a)
            row = int(np.floor(y))
            image[row * scale:(row + 1) * scale, round(x * scale):round((x + n) * scale)] = 0
            x += n
    return image


def test_the_qr_code_reads_back_as_the_first_address() -> None:
    info = join_info("0.0.0.0", 8000, lan=["192.0.2.10", "198.51.100.7"], mdns="referee.local")
    assert info["reachable"] is True
    assert info["urls"] == ["http://referee.local:8000/", "http://192.0.2.10:8000/",
                            "http://198.51.100.7:8000/"]
    text, points, _ = cv2.QRCodeDetector().detectAndDecode(_raster(info["qr_svg"]))
    assert points is not None and text == "http://referee.local:8000/"


def test_loopback_says_how_to_let_phones_in() -> None:
    info = join_info("127.0.0.1", 8123)
    assert info["reachable"] is False and info["qr_svg"] is None
    assert info["urls"] == ["http://127.0.0.1:8123/"] and "--host 0.0.0.0" in info["note"]


def test_a_given_listen_address_is_the_one_shown() -> None:
    info = join_info("192.0.2.44", 8000, mdns=None)
    assert info["urls"] == ["http://192.0.2.44:8000/"]


def test_lan_addresses_are_never_loopback() -> None:
    assert all(not a.startswith("127.") for a in lan_addresses())


def test_mdns_name_only_where_avahi_runs(tmp_path: Path) -> None:
    assert mdns_name(tmp_path / "missing.pid") is None
    pid = tmp_path / "pid"
    pid.write_text("123\n")
    name = mdns_name(pid)
    assert name is not None and name.endswith(".local") and "." not in name[: -len(".local")]


def test_api_join_on_loopback(tmp_path: Path) -> None:
    from web.app import create_app

    app = create_app({"TESTING": True, "LISTEN_HOST": "127.0.0.1"})
    data = app.test_client().get("/api/join", base_url="http://127.0.0.1:8765").get_json()
    assert data["urls"] == ["http://127.0.0.1:8765/"] and data["reachable"] is False


@pytest.mark.parametrize("listen", ["0.0.0.0"])
def test_api_join_on_the_wildcard_lists_this_machines_addresses(listen: str) -> None:
    from web.app import create_app

    app = create_app({"TESTING": True, "LISTEN_HOST": listen})
    data = app.test_client().get("/api/join", base_url="http://127.0.0.1:8765").get_json()
    assert [u for u in data["urls"] if ".local:" not in u] == [
        f"http://{a}:8765/" for a in lan_addresses()]
