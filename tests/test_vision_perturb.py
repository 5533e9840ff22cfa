"""tools/vision/perturb.py: the real photos as other cameras would have taken them. A
perturbation that moved the photo but not its labels would score the reading against the
wrong cards, and flatter or slander it without a word."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tools.vision.perturb import PERTURBATIONS
from tools.vision.render import exposed


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(sorted(PERTURBATIONS)),
    st.floats(0.05, 0.95),
    st.floats(0.05, 0.95),
    st.sampled_from([(480, 640), (720, 1280), (1200, 900)]),
)
def test_a_point_of_the_photo_is_where_the_perturbation_says(name, x, y, shape):
    height, width = shape
    image = np.full((height, width, 3), 40, np.uint8)
    cx, cy = round(x * width), round(y * height)
    image[max(cy - 6, 0) : cy + 7, max(cx - 6, 0) : cx + 7] = 230  # a light spot, 13 px
    out, where = PERTURBATIONS[name](image)
    assert out.dtype == np.uint8 and out.ndim == 3
    h, w = out.shape[:2]
    assert max(h, w) <= max(height, width)
    grey = out.astype(np.float32).mean(axis=2)
    ys, xs = np.nonzero(grey >= grey.max() - 1)
    px, py = where(x, y)
    # The spot's middle, within its half width and a pixel of rounding, as the image shrank.
    reach = 7 * max(w / width, h / height) + 1
    assert abs(xs.mean() - px * w) <= reach and abs(ys.mean() - py * h) <= reach


def test_exposure_scales_light_not_the_encoding_and_clips_at_the_top():
    grey = np.arange(256, dtype=np.uint8).reshape(16, 16, 1).repeat(3, axis=2)
    assert np.array_equal(exposed(grey, 0.0), grey)
    brighter = exposed(grey, 1.0)
    # Twice the light: a mid grey (sRGB 128, 0.216 linear) to 0.432 linear, sRGB 175.
    assert abs(int(brighter.reshape(-1, 3)[128, 0]) - 175) <= 1
    assert (brighter >= grey).all() and brighter.max() == 255
    assert (exposed(grey, -1.0) <= grey).all()
