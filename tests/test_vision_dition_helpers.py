"""vision.dition's vectorised helpers against the plain loops they stand for (the reader's CPU
time, issue 21: each was a Python loop over rays or over pairs of vote peaks; the readings must
stay the same bit for bit)."""

from __future__ import annotations

import numpy as np

from vision import dition


def _greedy_loop(n: int, pairs: np.ndarray) -> np.ndarray:
    """Greedy suppression as its definition reads: in index order, a kept item drops every later
    item it is paired with."""
    later: list[list[int]] = [[] for _ in range(n)]
    for a, b in pairs.tolist():
        later[min(a, b)].append(max(a, b))
    keep = np.ones(n, bool)
    for i in range(n):
        if keep[i]:
            keep[later[i]] = False
    return keep


def test_greedy_keep_is_the_sequential_greedy() -> None:
    rng = np.random.default_rng(21)
    cases = [(0, np.zeros((0, 2), int)), (5, np.zeros((0, 2), int))]
    # (a chain, each item paired with the next: every other one stays)
    cases.append((301, np.stack([np.arange(300), np.arange(1, 301)], axis=1)))
    for _ in range(200):
        n = int(rng.integers(1, 300))
        pairs = rng.integers(0, n, size=(int(rng.integers(0, 4 * n)), 2))
        cases.append((n, pairs[pairs[:, 0] != pairs[:, 1]]))
    # (vote peaks as a bright board gives them: points in a plane, paired within a radius, in the
    # order of their strength)
    from scipy.spatial import cKDTree

    for _ in range(20):
        pts = rng.uniform(0, 300, size=(int(rng.integers(50, 2000)), 2))
        cases.append((len(pts), cKDTree(pts).query_pairs(8.4, output_type="ndarray")))
    for n, pairs in cases:
        assert np.array_equal(dition._greedy_keep(n, pairs), _greedy_loop(n, pairs))


def _step_centroid_loop(ds: np.ndarray, k: np.ndarray, off: np.ndarray, reach: int = 6) -> np.ndarray:
    """`_step_centroid` ray by ray and step by step, as its docstring reads."""
    n, rays, m = ds.shape
    peak = ds[np.arange(n)[:, None], np.arange(rays)[None, :], k]
    runs = np.zeros((n, rays, 2), int)  # samples of the run before and after the peak
    for i in range(n):
        for r in range(rays):
            for side, sign in ((0, -1), (1, 1)):
                t = 1
                while t <= reach and 0 <= k[i, r] + sign * t < m and ds[i, r, k[i, r] + sign * t] >= 0.5 * peak[i, r]:
                    t += 1
                runs[i, r, side] = t - 1
    width = runs.sum(axis=2) + 1
    strong = peak >= np.percentile(peak, 75, axis=0, keepdims=True)
    out = off.astype(np.float64)
    for r in range(rays):
        frame_width = np.median(width[strong[:, r], r]) if strong[:, r].any() else 1.0
        if frame_width <= dition.SHARP_STEP_SAMPLES:
            continue
        half = int(frame_width // 2 + 1)
        for i in range(n):
            lo, hi = min(runs[i, r, 0], half), min(runs[i, r, 1], half)
            if lo + hi + 1 <= 3 or peak[i, r] <= 0:
                continue
            j = np.arange(-lo, hi + 1)
            w = np.zeros(2 * reach + 1, np.float32)
            w[reach - lo:reach + hi + 1] = ds[i, r, k[i, r] + j]
            jj = np.arange(-reach, reach + 1)
            out[i, r] = (w * jj).sum() / max(w.sum(), 1e-9)
    return out


def test_step_centroid_is_the_per_ray_rule() -> None:
    """The centroid of each blurred step over its run above half its peak, held to the width the
    frame's strongest steps show along each ray; a sharp ray keeps the parabola's offset."""
    rng = np.random.default_rng(18)
    checked = spread = 0
    for t in range(60):
        n, m = int(rng.integers(1, 40)), int(rng.choice([15, 18]))
        ds = rng.normal(size=(n, 24, m)).astype(np.float32)
        if t % 2 == 0:  # blurred: plateaus of the derivative several samples wide
            ds = np.abs(np.cumsum(ds, axis=2)).astype(np.float32)
        k = rng.integers(0, m, size=(n, 24))
        off = rng.uniform(-0.5, 0.5, size=(n, 24)).astype(np.float32)
        got, want = dition._step_centroid(ds, k, off), _step_centroid_loop(ds, k, off)
        assert np.allclose(got, want, rtol=0, atol=1e-6), t
        checked += 1
        spread += not np.array_equal(got, off.astype(np.float64))
    assert checked == 60 and spread >= 10  # the centroid moved steps on the blurred ones


def test_edge_nearest_the_rim_is_the_first_maximum_by_distance() -> None:
    """`_edge_positions(..., near=(radius, least))` takes, on each ray, the local maximum of the
    smoothed step stronger than `least` nearest `radius` (of two as near, the inner one), and the
    strongest step where there is none: the ray's loop picks the same samples (profiles of noise:
    their steps are sharp, the parabola's offset stays within half a sample)."""
    rng = np.random.default_rng(7)
    radii = dition.RIM_RADII
    mids = radii[0] + (np.arange(1, len(radii) - 2) + 0.5) * (radii[1] - radii[0])
    for t in range(40):
        n = int(rng.integers(1, 30))
        vals = rng.normal(128, 30, size=(n, 24, len(radii))).astype(np.float32)
        polarity = rng.choice([-1.0, 1.0], size=n)
        # (a target halfway between two samples' midpoints: two maxima as near)
        target = float(mids[5] + 0.5 * (mids[6] - mids[5])) if t % 2 else float(rng.uniform(0.4, 0.6))
        least = float(rng.uniform(0, 15))
        r_edge, _ = dition._edge_positions(vals, radii, polarity, near=(target, least))
        plain, _ = dition._edge_positions(vals, radii, polarity)
        d = np.diff(vals, axis=2) * polarity[:, None, None].astype(np.float32)
        ds = d.copy()
        ds[..., 1:-1] = (d[..., :-2] + d[..., 2:]) * np.float32(0.25) + d[..., 1:-1] * np.float32(0.5)
        for i in range(n):
            for r in range(24):
                best = None
                for k in range(1, ds.shape[2] - 1):
                    maximum = ds[i, r, k] >= ds[i, r, k - 1] and ds[i, r, k] > ds[i, r, k + 1] and ds[i, r, k] > least
                    if maximum and (best is None or abs(mids[k - 1] - target) < abs(mids[best - 1] - target)):
                        best = k
                if best is None:
                    assert r_edge[i, r] == plain[i, r]
                else:  # the parabola's sub-sample radius lies within the chosen sample's step
                    step = radii[1] - radii[0]
                    assert abs(r_edge[i, r] - (radii[0] + (best + 0.5) * step)) <= 0.5 * step + 1e-9


def test_upper_quartile_is_numpys_percentile_bit_for_bit() -> None:
    # (the steps' strongest quarter in `_step_centroid`: float32 steps of (N, 24) profiles, N from
    # one candidate up; whole grey levels give ties, fractions the interpolation's rounding)
    rng = np.random.default_rng(21)
    for n in (1, 2, 3, 4, 5, 6, 7, 8, 9, 50, 101, 233):
        for k in range(40):
            values = (rng.normal(size=(n, 24)) * 30).astype(np.float32)
            if k % 2:
                values = np.round(values)
            want = np.percentile(values, 75, axis=0)
            got = dition._upper_quartile(values)
            assert got.dtype == want.dtype
            assert np.array_equal(got, want), n


def test_suppression_on_the_grid_is_the_greedy_over_all_pairs() -> None:
    # (vote peaks as the vote scale gives them: whole pixels, strongest first, paired within the
    # separation (8.4 px); clipped paper's plateau: a dense patch of equal peaks, in any order)
    from scipy.spatial import cKDTree

    rng = np.random.default_rng(21)
    h, w = 259, 259
    for k in range(40):
        n = int(rng.integers(2, 3000))
        if k % 2:
            pts = rng.integers(0, [w, h], size=(n, 2))
        else:
            # (a plateau: every pixel of a patch, shuffled, after a few scattered strong peaks)
            x0, y0 = rng.integers(0, 150, 2)
            yy, xx = np.mgrid[y0:y0 + int(rng.integers(5, 100)), x0:x0 + int(rng.integers(5, 100))]
            patch = rng.permutation(np.stack([xx.ravel(), yy.ravel()], axis=1))
            pts = np.concatenate([rng.integers(0, [w, h], size=(int(rng.integers(0, 50)), 2)), patch])
        pts = pts[np.unique(pts[:, 1] * w + pts[:, 0], return_index=True)[1]]
        pts = pts[rng.permutation(len(pts))]
        for radius in (8.4, 5.0, 3.0):
            want = dition._greedy_keep(len(pts), cKDTree(pts).query_pairs(radius, output_type="ndarray"))
            assert np.array_equal(dition._suppress_on_grid(pts, radius, (h, w)), want), (k, radius)


def test_strong_gradients_do_not_depend_on_where_the_arrays_lie() -> None:
    # (the reader's vote step. cv2.magnitude, used before, rounded ~40 % of a frame's magnitudes
    # by its own approximation, and some of them by where its output buffer lay in memory (384 of
    # 512 alignments of inputs and output differed): the same frame read twice in one process gave
    # readings ~1e-7 d apart. Each magnitude is to be float32 arithmetic's, element by element,
    # whatever the arrays' alignment)
    rng = np.random.default_rng(3)
    n = 200_003
    gx0 = (rng.normal(size=n) * 9).astype(np.float32)
    gy0 = (rng.normal(size=n) * 9).astype(np.float32)
    threshold = np.float32(4.0)
    want_idx, want_g = dition._strong_gradients(gx0, gy0, threshold)
    strong = set(want_idx.tolist())
    for i in rng.choice(n, 3000, replace=False).tolist():
        x, y = gx0[i], gy0[i]
        m2 = np.float32(x * x) + np.float32(y * y)
        assert (i in strong) == bool(m2 > threshold * threshold), i
    for j in rng.choice(len(want_idx), 3000, replace=False).tolist():
        i = want_idx[j]
        x, y = gx0[i], gy0[i]
        assert want_g[j] == np.sqrt(np.float32(np.float32(x * x) + np.float32(y * y))), i
    for offset_x in range(0, 64, 4):
        for offset_y in (0, 4, 12, 36):
            bx = np.empty(n * 4 + 64, np.uint8)
            by = np.empty(n * 4 + 64, np.uint8)
            gx = bx[offset_x:offset_x + n * 4].view(np.float32)
            gy = by[offset_y:offset_y + n * 4].view(np.float32)
            gx[:] = gx0
            gy[:] = gy0
            idx, g = dition._strong_gradients(gx, gy, threshold)
            assert np.array_equal(idx, want_idx), (offset_x, offset_y)
            assert np.array_equal(g, want_g), (offset_x, offset_y)


def test_chroma_distance_is_the_exact_distance_wherever_the_arrays_lie() -> None:
    # (the colour pass's distance to the board's colour: cv2.magnitude, used before, rounded some
    # elements by its buffers' alignment, and the coloured readings of a real photo moved ~1e-9 d
    # from one read to the next. Each distance is the correctly rounded square root of a whole
    # number, whatever the arrays' alignment)
    rng = np.random.default_rng(5)
    h, w = 97, 131
    planes0 = rng.integers(0, 256, size=(4, h, w)).astype(np.uint8)
    d = planes0.astype(np.float64)
    want = np.sqrt((d[0] - d[2]) ** 2 + (d[1] - d[3]) ** 2).astype(np.float32)
    for offset in range(0, 64, 7):
        bufs = [np.empty(h * w + 128, np.uint8) for _ in range(4)]
        planes = [b[offset + 3 * k:offset + 3 * k + h * w].reshape(h, w) for k, b in enumerate(bufs)]
        for p, p0 in zip(planes, planes0):
            p[:] = p0
        assert np.array_equal(dition._chroma_distance(*planes), want), offset


def test_pixels_near_points_are_within_the_radius() -> None:
    # (the colour pass leaves out the peaks surely within the separation of a disc read before the
    # exact distances: every pixel marked must lie within the radius of a point, and those well
    # within it are marked)
    rng = np.random.default_rng(8)
    h, w = 60, 70
    yy, xx = np.mgrid[0:h, 0:w]
    for k in range(60):
        pts = rng.uniform(-8, 78, size=(int(rng.integers(0, 12)), 2))
        radius = float(rng.uniform(0.5, 9.0))
        near = dition._near_points((h, w), pts, radius)
        assert near.shape == (h, w)
        if len(pts) == 0:
            assert not near.any()
            continue
        dist = np.min(np.hypot(xx[..., None] - pts[:, 0], yy[..., None] - pts[:, 1]), axis=2)
        assert np.all(dist[near] < radius), k
        # (those within the radius less a pixel's diagonal, around points on the image, are all marked)
        on = (pts[:, 0] >= 0.5) & (pts[:, 0] < w - 0.5) & (pts[:, 1] >= 0.5) & (pts[:, 1] < h - 0.5)
        if on.any():
            d_on = np.min(np.hypot(xx[..., None] - pts[on, 0], yy[..., None] - pts[on, 1]), axis=2)
            assert np.all(near[d_on < radius - 1.5]), k
