"""The real photos as other cameras, lights and hands would have taken them.

Each perturbation gives the image changed and where a point of the photo (x, y as shares
of its width and height, as the labels give a card's middle) lies in it. Used by
`tools.vision.evaluate --as NAME` to ask how the reading holds up where the photos we
hold are not like the ones we will be judged on: a camera turned, a smaller sensor, a
harsher encoder, a lamp's colour, an exposure for the dark table.
"""

from collections.abc import Callable

import cv2
import numpy as np

from .render import exposed

Where = Callable[[float, float], tuple[float, float]]


def _same(x: float, y: float) -> tuple[float, float]:
    return x, y


def _turned_90(image: np.ndarray) -> tuple[np.ndarray, Where]:
    return np.ascontiguousarray(np.rot90(image, -1)), lambda x, y: (1 - y, x)


def _turned_180(image: np.ndarray) -> tuple[np.ndarray, Where]:
    return np.ascontiguousarray(image[::-1, ::-1]), lambda x, y: (1 - x, 1 - y)


def _shrunk(long_side: int) -> Callable[[np.ndarray], tuple[np.ndarray, Where]]:
    def shrink(image: np.ndarray) -> tuple[np.ndarray, Where]:
        height, width = image.shape[:2]
        s = long_side / max(height, width)
        if s >= 1:
            return image, _same
        size = (round(width * s), round(height * s))
        return cv2.resize(image, size, interpolation=cv2.INTER_AREA), _same

    return shrink


def _jpeg(quality: int) -> Callable[[np.ndarray], tuple[np.ndarray, Where]]:
    def encode(image: np.ndarray) -> tuple[np.ndarray, Where]:
        _, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
        decoded = cv2.imdecode(data, cv2.IMREAD_COLOR)
        assert decoded is not None  # our own encoding
        return decoded, _same

    return encode


def _exposed(stops: float) -> Callable[[np.ndarray], tuple[np.ndarray, Where]]:
    return lambda image: (exposed(image, stops), _same)


def _balanced(
    gains: tuple[float, float, float],
) -> Callable[[np.ndarray], tuple[np.ndarray, Where]]:
    """White balance moved in linear light, each channel (B, G, R) scaled by its gain."""

    def balance(image: np.ndarray) -> tuple[np.ndarray, Where]:
        channels = [exposed(image[..., i : i + 1], float(np.log2(g))) for i, g in enumerate(gains)]
        return np.concatenate(channels, axis=2), _same

    return balance


def _then(
    first: Callable[[np.ndarray], tuple[np.ndarray, Where]],
    then: Callable[[np.ndarray], tuple[np.ndarray, Where]],
) -> Callable[[np.ndarray], tuple[np.ndarray, Where]]:
    """One perturbation after another: a point is where the first puts it, then where the
    second puts that."""

    def both(image: np.ndarray) -> tuple[np.ndarray, Where]:
        once, where_once = first(image)
        twice, where_twice = then(once)
        return twice, lambda x, y: where_twice(*where_once(x, y))

    return both


def _noisy(sd: float) -> Callable[[np.ndarray], tuple[np.ndarray, Where]]:
    def noise(image: np.ndarray) -> tuple[np.ndarray, Where]:
        rng = np.random.default_rng(0)
        return np.clip(image + rng.normal(0, sd, image.shape), 0, 255).astype(np.uint8), _same

    return noise


PERTURBATIONS: dict[str, Callable[[np.ndarray], tuple[np.ndarray, Where]]] = {
    "turned-90": _turned_90,
    "turned-180": _turned_180,
    "shrunk-1280": _shrunk(1280),
    "shrunk-640": _shrunk(640),
    "jpeg-40": _jpeg(40),
    "noise-8": _noisy(8),
    "under-1-stop": _exposed(-1.0),
    "over-1/3-stop": _exposed(1 / 3),
    "over-2/3-stop": _exposed(2 / 3),
    "over-1-stop": _exposed(1.0),
    # A phone's encoder after its sensor: what was clipped is no longer flat to the bit.
    "over-1-stop-jpeg-90": _then(_exposed(1.0), _jpeg(90)),
    "warmer": _balanced((0.8, 1.0, 1.2)),
    "cooler": _balanced((1.2, 1.0, 0.85)),
}
