"""Joining from a phone: the addresses the page can be opened at, and a QR code of the first.

The web server listens on `LISTEN_HOST` (app config, set by `web.server.app_for`). On a loopback
address only this computer can open the page; on the wildcard address (0.0.0.0, ::) every IPv4
address of the machine's network interfaces other than loopback and link-local is one, read
with `ifaddr` (nothing is sent on the network). Where Avahi runs (deploy/referee.avahi.service
advertises the page), the machine's mDNS name `<hostname>.local` comes first.
"""

from __future__ import annotations

import ipaddress
import socket
from pathlib import Path
from typing import Any

#: Avahi writes its pid here while it runs (Debian, Raspberry Pi OS)
AVAHI_PID = Path("/run/avahi-daemon/pid")


def is_loopback(host: str) -> bool:
    """True for addresses only this machine can reach (`localhost`, 127.0.0.0/8, ::1)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def lan_addresses() -> list[str]:
    """IPv4 addresses of this machine that other machines on its networks can reach."""
    import ifaddr

    found: list[str] = []
    for adapter in ifaddr.get_adapters():
        for ip in adapter.ips:
            if not isinstance(ip.ip, str):
                continue  # IPv6 (a tuple); phones type and scan IPv4
            address = ipaddress.ip_address(ip.ip)
            if address.is_loopback or address.is_link_local or address.is_unspecified:
                continue
            if ip.ip not in found:
                found.append(ip.ip)
    return found


def mdns_name(pid_file: Path = AVAHI_PID) -> str | None:
    """`<hostname>.local` when Avahi (the mDNS responder) runs here, else None."""
    if not pid_file.is_file():
        return None
    host = socket.gethostname().split(".")[0]
    return f"{host}.local" if host else None


def qr_svg(url: str) -> str:
    """An inline SVG QR code of `url` (segno), dark modules on a white quiet zone."""
    import segno

    return segno.make(url, error="m").svg_inline(scale=5, border=3, dark="#000",
                                                 light="#fff", omitsize=True)


def join_info(listen_host: str, port: int, scheme: str = "http", *,
              lan: list[str] | None = None, mdns: str | None = None) -> dict[str, Any]:
    """{"reachable": from other machines?, "urls": [...], "mdns": name or None, "qr_svg",
    "note"}: what the page shows under "Join from a phone"."""
    def url(host: str) -> str:
        shown = f"[{host}]" if ":" in host else host
        return f"{scheme}://{shown}:{port}/"

    if is_loopback(listen_host):
        return {"reachable": False, "urls": [url(listen_host)], "mdns": None, "qr_svg": None,
                "note": "Only this computer can open the page: start the referee with "
                        "--host 0.0.0.0 --pin PIN so that phones on the network can join."}
    wildcard = listen_host in ("0.0.0.0", "::", "")
    hosts = (lan if lan is not None else lan_addresses()) if wildcard else [listen_host]
    urls = ([url(mdns)] if mdns else []) + [url(h) for h in hosts]
    return {"reachable": bool(urls), "urls": urls, "mdns": mdns,
            "qr_svg": qr_svg(urls[0]) if urls else None,
            "note": None if urls else "No network address found: is the machine on a network?"}
