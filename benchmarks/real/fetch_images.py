"""Fetch the real photos that the label files in this folder describe (the images are not committed).

    .venv/bin/python benchmarks/real/fetch_images.py [--mirror DIR] [--offline]

Every label file (`*.json` here) names a public GitHub repository, a commit, and per image the
path in that repository and its git blob id. Each image is written to
`benchmarks/real/images/<set>/<name><ext>` (ignored by git), and checked against its blob id,
so a changed file is never scored against labels made on another one.

Where an image comes from, first that works:
1. a local git mirror of the repository: `DIR/<owner>+<name>/repo` (a bare git directory or a
   work tree with `.git`), read with `git show <commit>:<path>`; DIR is `--mirror`, else the
   environment variable REFEREE_REAL_MIRRORS, else /work/.mirror (where this team's fetch tool
   puts them);
2. unless `--offline`: https://raw.githubusercontent.com/<owner>/<name>/<commit>/<path>.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import urllib.parse
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
IMAGES = HERE / "images"


class FetchError(RuntimeError):
    """An image could not be had, or was not the file the labels were made on."""


def label_sets(game: str | None = None) -> list[dict]:
    """Every label file in this folder, parsed; with `game`, only that game's ("game" in the file,
    "dition" when absent: the disc sets)."""
    sets = [json.loads(p.read_text()) for p in sorted(HERE.glob("*.json"))]
    return [s for s in sets if game is None or s.get("game", "dition") == game]


def image_path(label_set: dict, image: dict) -> Path:
    """Where the image of `image` (one entry of a label set) lives on disk."""
    return IMAGES / label_set["set"] / (image["name"] + Path(image["path"]).suffix.lower())


def git_blob_id(data: bytes) -> str:
    """The id git gives a file with these bytes (sha1 of 'blob <size>\\0' + data)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _from_mirror(mirrors: Path, repo: str, commit: str, path: str) -> bytes | None:
    base = mirrors / repo.replace("/", "+") / "repo"
    for git_dir in (base, base / ".git"):
        if (git_dir / "objects").is_dir():
            out = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{commit}:{path}"],
                                 capture_output=True, check=False)
            if out.returncode == 0:
                return out.stdout
    return None


def _from_github(repo: str, commit: str, path: str) -> bytes:
    url = f"https://raw.githubusercontent.com/{repo}/{commit}/{urllib.parse.quote(path)}"
    with urllib.request.urlopen(url, timeout=60) as resp:
        return resp.read()


def fetch_all(mirrors: Path, offline: bool) -> list[Path]:
    """Fetch every labelled image that is not on disk yet (or differs); return their paths."""
    done = []
    for s in label_sets():
        for im in s["images"]:
            dst = image_path(s, im)
            if dst.exists() and git_blob_id(dst.read_bytes()) == im["blob"]:
                done.append(dst)
                continue
            data = _from_mirror(mirrors, s["repo"], s["commit"], im["path"])
            if data is None and not offline:
                data = _from_github(s["repo"], s["commit"], im["path"])
            if data is None:
                raise FetchError(f"{s['repo']}@{s['commit'][:10]}:{im['path']}: no mirror under {mirrors} "
                                 f"(and --offline): fetch the repository first")
            if git_blob_id(data) != im["blob"]:
                raise FetchError(f"{s['repo']}:{im['path']}: blob {git_blob_id(data)} is not the labelled "
                                 f"{im['blob']} (a different file)")
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(data)
            done.append(dst)
    return done


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mirror", type=Path, default=Path(os.environ.get("REFEREE_REAL_MIRRORS", "/work/.mirror")))
    ap.add_argument("--offline", action="store_true", help="only local mirrors, no download")
    args = ap.parse_args()
    try:
        paths = fetch_all(args.mirror, args.offline)
    except (FetchError, OSError) as exc:
        sys.exit(f"fetch_images: {exc}")
    print(f"{len(paths)} images in {IMAGES}")


if __name__ == "__main__":
    main()
