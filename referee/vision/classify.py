"""What each flat card shows: the classifier, a small network run by OpenCV's dnn module.

The network (cards.onnx beside this file, made by tools/vision/train.py) takes the flat
card with its paper made white (find_cards.paper_balanced), 128 x 80, and gives five
heads: number, colour, shading, shape (three ways each) and whether it is a card at all.
An attribute is *sure* when its probability is at least SURE; a card is read surely when
it is a card, whole, and every attribute is sure. The network sees each card twice, as it
is and turned half a turn (the same card to a player), and the two readings must agree.

The network is loaded only with the SHA-256 it was made with (cards.onnx.sha256, written
beside it by the training): of 31 single bits flipped through its weights, every one
loaded, and 14 changed what it reads. Damaged, it is ModelDamaged, at the first frame
read, cards on it or not.
"""

import hashlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import cv2
import numpy as np

from referee.errors import ModelDamaged

from .card import Face
from .find_cards import paper_balanced, paper_band

MODEL = Path(__file__).with_name("cards.onnx")
INPUT_W, INPUT_H = 128, 80
# Set from the held-out photos of the training's own decks (tools/vision/train.py, which
# prints the trade-off): a probability under it leaves the card unsure.
SURE = 0.9
IS_A_CARD = 0.5
# Cards a forward pass: OpenCV's network keeps the working memory of the largest batch it
# was given, between frames too: 7.2 MB at 8 cards, 3.0 MB at 2, 2.3 MB at 1; 2 read as
# fast as 8 within the noise of one shared core (bench/vision.py).
BATCH = 2


def network_input(flats: list[np.ndarray]) -> np.ndarray:
    """The batch the network takes: N x 3 x INPUT_H x INPUT_W, float32, about 0 +- 1."""
    batch = np.empty((len(flats), 3, INPUT_H, INPUT_W), np.float32)
    for i, flat in enumerate(flats):
        small = cv2.resize(paper_balanced(flat), (INPUT_W, INPUT_H), interpolation=cv2.INTER_AREA)
        batch[i] = small.transpose(2, 0, 1)
    # In place: two more copies of the whole layout's input would be held at once.
    batch -= 128.0
    batch /= 64.0
    return batch


@dataclass(frozen=True)
class Reading:
    """A flat card read: the likeliest face, each attribute's probability, whether it is a
    card at all (probability)."""

    face: Face
    confidence: tuple[float, float, float, float]
    card: float

    @property
    def sure(self) -> bool:
        return self.card >= IS_A_CARD and min(self.confidence) >= SURE


def digest_path(model: Path) -> Path:
    """Where a model's SHA-256 is kept, written beside it when it is made
    (tools/vision/train.py), as `sha256sum` writes it: `sha256sum -c` checks it too."""
    return model.with_name(model.name + ".sha256")


def checked_model(model: Path) -> bytes:
    """The model's bytes, the same SHA-256 as when it was made; ModelDamaged, in a line
    naming the file, where they are not or cannot be read. A worn card's flipped bit in a
    weight still loads, and would read cards wrong and surely."""
    try:
        data = model.read_bytes()
        made = digest_path(model).read_text(encoding="ascii").split()
    except (OSError, UnicodeDecodeError) as err:
        raise ModelDamaged(f"{model}: cannot be read whole ({err}): reinstall referee") from None
    if made[:1] != [hashlib.sha256(data).hexdigest()]:
        raise ModelDamaged(
            f"{model}: damaged (its SHA-256 is not the one in {digest_path(model).name}): "
            "reinstall referee"
        )
    return data


def load(model: Path) -> "cv2.dnn.Net":
    """The network from the model's checked bytes, as the box runs it."""
    net = cv2.dnn.readNetFromONNX(np.frombuffer(checked_model(model), np.uint8))
    net.setPreferableBackend(cv2.dnn.DNN_BACKEND_OPENCV)
    return net


@cache
def _network() -> "cv2.dnn.Net":
    return load(MODEL)


OUTPUTS = ("number", "color", "shading", "shape", "card")


def probabilities(flats: list[np.ndarray]) -> list[np.ndarray]:
    """Each head's softmax for each flat card (N x 3, and N x 2 for "card"), averaged over
    the card as it is and turned half a turn; where the two disagree on an attribute, its
    probability is the lower of the two."""
    net = _network()  # with no card too: a damaged model is said at the first frame
    if not flats:
        return [np.zeros((0, 3), np.float32)] * 4 + [np.zeros((0, 2), np.float32)]
    n = len(flats)
    upright = network_input(flats)
    outs: list[list[np.ndarray]] = [[] for _ in OUTPUTS]
    for turned in (False, True):
        for i in range(0, n, BATCH):
            batch = upright[i : i + BATCH]
            # Turned a batch at a time, never the whole layout at once.
            net.setInput(np.ascontiguousarray(batch[:, :, ::-1, ::-1]) if turned else batch)
            for k, logits in enumerate(net.forward(list(OUTPUTS))):
                outs[k].append(np.asarray(logits, np.float32).reshape(-1, logits.shape[-1]))
    heads = []
    for chunks in outs:
        p = _softmax(np.concatenate(chunks))
        a, b = p[:n], p[n:]
        mean = (a + b) / 2
        agree = a.argmax(axis=1) == b.argmax(axis=1)
        mean[~agree] = np.minimum(a[~agree], b[~agree])
        heads.append(mean)
    return heads


def read(flats: list[np.ndarray]) -> list[Reading]:
    heads = probabilities(flats)
    readings = []
    for i in range(len(flats)):
        values = tuple(int(h[i].argmax()) for h in heads[:4])
        confidence = tuple(float(h[i].max()) for h in heads[:4])
        readings.append(Reading(Face.of(values), confidence, float(heads[4][i][1])))  # type: ignore[arg-type]
    return readings


def blown(flat: np.ndarray) -> bool:
    """Whether the flat card's paper is blown white: most of its margin at the very top of
    what the camera records, in every channel. What is fainter than paper went with it: a
    striped symbol's stripes (it looks open), a pale ink's tint."""
    band = paper_band(flat)
    return bool((band.min(axis=1) >= BLOWN_LEVEL).mean() > BLOWN_SHARE)


# Blown: every channel at this level on more than this share of the margin. A sensor
# clips after its noise, so blown paper is flat at the top (a phone's JPEG after it leaves
# half to all of it so); a rendered table's noise, added after its light, leaves none
# there. No card's paper is, of the 400 real cards as photographed; brightened in linear
# light by a stop (render.exposed), 6 striped cards were read surely open, and are so no
# more, at 2/3 of a stop 3 of 5 (MODEL.md; evaluate --as over-1-stop). Not caught: a purple
# read red where a warm lamp's red alone is blown (an ink balanced against paper whose red
# the camera cut short leans to red).
BLOWN_LEVEL, BLOWN_SHARE = 255, 0.5


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    p: np.ndarray = e / e.sum(axis=1, keepdims=True)
    return p
