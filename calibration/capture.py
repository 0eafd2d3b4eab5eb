"""Choosing calibration photos from a live picture: keep a view only when it shows something new.

`referee calibrate camera` needs 6+ photos of the ChArUco target at distinct poses, taken at the
size the referee will use. `PhotoPicker.consider(view)` says whether a detected view is worth
keeping: enough corners, and far enough from every view kept so far (the same pose twice adds
nothing to the calibration and is refused by it). "Far enough" is measured where the target is:
the mean displacement of the corners two views share, relative to the image diagonal, or a
change in how much of the target is seen.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from calibration.intrinsics import TargetView
from vision.resize import halve_to

#: the live view looks for the target on the picture halved until it is at most this wide: at
#: 2304x1296 a quarter of the pixels, so about a quarter of a full-size detection's time; a
#: target held where a photo is worth taking fills a good part of the picture, its ArUco
#: markers 60+ px wide at full size and so 30+ px halved, several pixels per bit of their 6x6
LIVE_MAX_WIDTH_PX = 1280


@dataclass
class PhotoPicker:
    #: fewer corners than this cannot constrain a view well (corners of a 9x6 target: 40)
    min_corners: int = 12
    #: a new pose moves the shared corners by at least this much of the image diagonal on average
    #: (5 %: about 100 px at 1640x1232, well above a hand's tremor)
    min_shift: float = 0.05
    #: or shows this share of corners the kept views did not (or lost as many)
    min_new_corners: float = 0.3
    kept: list[TargetView] = field(default_factory=list)

    def reason(self, view: TargetView) -> str | None:
        """None if `view` is worth keeping, else why not (a sentence for the live display)."""
        if len(view.ids) < self.min_corners:
            return f"{len(view.ids)} corners: show more of the target (need {self.min_corners})"
        diagonal = float(np.hypot(*view.image_size))
        for old in self.kept:
            shared, mine, theirs = np.intersect1d(view.ids, old.ids, return_indices=True)
            changed = 1.0 - len(shared) / max(len(view.ids), len(old.ids))
            if changed >= self.min_new_corners:
                continue
            shift = float(np.mean(np.linalg.norm(
                view.corners_px[mine] - old.corners_px[theirs], axis=1))) / diagonal
            if shift < self.min_shift:
                return "same pose as a photo already taken: tilt or move the target"
        return None

    def consider(self, view: TargetView) -> bool:
        if self.reason(view) is not None:
            return False
        self.kept.append(view)
        return True


def draw_target(image: npt.NDArray[np.uint8], view: TargetView | None, text: str,
                ) -> npt.NDArray[np.uint8]:
    """A copy of `image` with the detected corners marked and a status line."""
    import cv2

    out = image.copy()
    scale = max(1.0, out.shape[1] / 1000.0)
    if view is not None:
        radius = max(3, round(4 * scale))
        for x, y in view.corners_px:
            cv2.circle(out, (round(float(x)), round(float(y))), radius, (0, 220, 0),
                       max(1, round(2 * scale)), cv2.LINE_AA)
    cv2.rectangle(out, (0, 0), (out.shape[1], round(34 * scale)), (0, 0, 0), -1)
    cv2.putText(out, text, (round(8 * scale), round(24 * scale)), cv2.FONT_HERSHEY_SIMPLEX,
                0.7 * scale, (255, 255, 255), max(1, round(2 * scale)), cv2.LINE_AA)
    return out


def detect_live(image: npt.NDArray[np.uint8], picker: PhotoPicker | None = None, *,
                max_width_px: int = LIVE_MAX_WIDTH_PX) -> dict[str, Any]:
    """What the live view shows of the target in `image`: {"found", "corners", "corners_px"
    (pixels of `image`), "image_size" [w, h], "ready" (a photo taken now would be kept, by
    `picker`'s rules), "text"}. The detection runs on `image` halved until at most
    `max_width_px` wide (a photo is still detected at full size when it is taken)."""
    from calibration.errors import TargetNotFoundError
    from calibration.intrinsics import detect_target

    h, w = image.shape[:2]
    small, factor = halve_to(image, max_width_px)
    try:
        found = detect_target(small, min_corners=1)
    except TargetNotFoundError:
        return {"found": False, "corners": 0, "corners_px": [], "image_size": [w, h],
                "ready": False, "text": "no calibration target in view"}
    # pixel centres: halved pixel u covers full-size pixels 2u and 2u + 1, its centre 2u + 0.5
    corners_px = (found.corners_px.astype(np.float64) + 0.5) * factor - 0.5
    view = TargetView(corners_px.astype(np.float32), found.object_mm, found.ids, (w, h))
    why = (picker or PhotoPicker()).reason(view)
    return {"found": True, "corners": len(view.ids),
            "corners_px": np.round(corners_px, 1).tolist(), "image_size": [w, h],
            "ready": why is None,
            "text": f"{len(view.ids)} corners: " + (why or "a photo now would be kept")}


class PhotoRefusedError(ValueError):
    """The frame is not worth keeping as a calibration photo (the reason is the message)."""


@dataclass
class PhotoSession:
    """Calibration photos saved into `folder`: `take(image)` keeps a frame showing a new pose."""

    folder: str
    picker: PhotoPicker = field(default_factory=PhotoPicker)

    def take(self, image: npt.NDArray[np.uint8]) -> tuple[str, TargetView]:
        """Save `image` as the next photo if the target is well seen in a new pose; the path and
        what was detected. `PhotoRefusedError` says why not."""
        from pathlib import Path

        import cv2

        from calibration.errors import TargetNotFoundError
        from calibration.intrinsics import detect_target

        try:
            view = detect_target(image, min_corners=1)
        except TargetNotFoundError:
            raise PhotoRefusedError("no calibration target in view (`referee print charuco`)"
                                    ) from None
        why = self.picker.reason(view)
        if why is not None:
            raise PhotoRefusedError(why)
        self.picker.consider(view)
        folder = Path(self.folder)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"calib_{len(self.picker.kept):02d}.png"
        cv2.imwrite(str(path), image)
        return str(path), view
