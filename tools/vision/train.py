"""Train the card classifier and write it as ONNX (referee/vision/cards.onnx): `make model`.

    .venv/bin/python -m tools.vision.train [--photos DIR] [--epochs 8]

Needs the development extra (`pip install -e '.[train]'`: torch, CPU build) and the real
photos prepared by tools/vision/set_photos.py (DIR by default where set_photos.prepared()
finds them; without them it trains on rendered cards alone, and says so). The examples
(tools/vision/dataset.py): every card rendered PER_FACE times, the labelled crops of
tomwhite/set-game's deck (its photos split: 85 % to train, 15 % held out to check and to
set the sureness threshold), the real cards of the finder's tuning boards as the finder
finds them (pclewis's, TUNING_COPIES times each; never a board held out: MODEL.md), and
cut-outs of what is not a card. 38 minutes on the development machine's two cores, shared (load 7 to
13); `--cache FILE` keeps the examples (9 of those minutes) for a second run. `--looks`
renders the hard looks as well (dataset.LOOKS), and cards partly hidden by something over
them taught as unreadable (COVERED); referee/vision/MODEL.md says what each model read.

The network: four 3x3 convolutions (16, 32, 64, 64 channels, the first three with stride
2), then the features averaged over each quarter of the card's width (where one, two or
three symbols stand) and their maximum over the whole card, and five heads: number,
colour, shading, shape, and card or not. Some 93,000 weights (375 kB), 25 MFLOPs a card.
"""

import argparse
import hashlib
import json
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

from referee.vision.card import all_faces
from referee.vision.classify import (
    INPUT_H,
    INPUT_W,
    MODEL,
    OUTPUTS,
    digest_path,
    load,
    network_input,
)

from . import dataset
from .set_photos import prepared

ROOT = Path(__file__).resolve().parents[2]
PER_FACE = 120
NOT_CARDS = 3000
# With --looks, the share of the cards, rendered and real, shown partly hidden by something
# over them (a blot, fingers, another card: render.cover) and taught as unreadable: every
# attribute's target even over its three values, the card still a card. Not as "not a
# card": layout.read_frame drops a whole region the network calls no card, and a card a
# hand covers would leave the table's count as if it had been picked up.
COVERED = 0.12
# Each real card of the finder's tuning boards (dataset.tuning_cards: some 95 cards of 33
# faces, another deck, three phones, lamps' and hands' shadows) is taken this many times,
# each time warped and lit anew as a tomwhite crop is once: some 1,900 examples beside
# 11,178 crops, about 58 a face where tomwhite's deck gives 138, so the looks they bring
# weigh without one deck's few cards outweighing the other's.
TUNING_COPIES = 20
HEADS = (3, 3, 3, 3, 2)


class CardNet(nn.Module):  # type: ignore[misc,unused-ignore]  # checked with torch or without
    def __init__(self) -> None:
        super().__init__()

        def block(i: int, o: int, stride: int) -> nn.Sequential:
            return nn.Sequential(
                nn.Conv2d(i, o, 3, stride, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU()
            )

        self.features = nn.Sequential(
            block(3, 16, 2), block(16, 32, 2), block(32, 64, 2), block(64, 64, 1)
        )
        h, w = INPUT_H // 8, INPUT_W // 8
        self.quarters = nn.AvgPool2d((h, w // 4))
        self.whole = nn.MaxPool2d((h, w))
        self.hidden = nn.Sequential(nn.Linear(64 * 4 + 64, 96), nn.ReLU(), nn.Dropout(0.2))
        self.heads = nn.ModuleList(nn.Linear(96, n) for n in HEADS)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        f = self.features(x)
        pooled = torch.cat([self.quarters(f).flatten(1), self.whole(f).flatten(1)], 1)
        h = self.hidden(pooled)
        return tuple(head(h) for head in self.heads)


def inputs(flats: np.ndarray) -> np.ndarray:
    out = np.empty((len(flats), 3, INPUT_H, INPUT_W), np.float16)
    for i in range(0, len(flats), 512):
        out[i : i + 512] = network_input(list(flats[i : i + 512]))
    return out


def build(
    photos: Path,
    rng: np.random.Generator,
    looks: bool,
    tuning_copies: int,
    chance: frozenset[str] = frozenset(),
) -> dict[str, np.ndarray]:
    faces = all_faces()
    print(f"rendering {PER_FACE} of each of the 81 cards ...", flush=True)
    x_r, y_r = dataset.rendered(
        faces,
        PER_FACE,
        rng,
        None if looks or chance else frozenset(),
        COVERED if looks else 0.0,
        frozenset(dataset.LOOKS) if looks else chance,
    )
    print(f"cutting {NOT_CARDS} things that are not cards ...", flush=True)
    x_n = dataset.not_cards(NOT_CARDS, rng)
    y_n = np.full((len(x_n), 4), -1, np.int8)
    crops = dataset.tomwhite_crops(photos / "tomwhite" / "labelled")
    photos_seen = sorted({c[2] for c in crops})
    held = (
        set(rng.choice(photos_seen, size=max(1, len(photos_seen) * 15 // 100), replace=False))
        if crops
        else set()
    )
    train_c = [c for c in crops if c[2] not in held]
    val_c = [c for c in crops if c[2] in held]
    print(
        f"real crops: {len(train_c)} to train ({len(photos_seen) - len(held)} photos),"
        f" {len(val_c)} held out ({len(held)} photos)",
        flush=True,
    )
    if not crops:
        print("no real crops: training on rendered cards alone (tools/vision/set_photos.py)")
    x_t, y_t = (
        dataset.real(
            [c[0] for c in train_c],
            [c[1] for c in train_c],
            rng,
            hard=looks,
            covered=COVERED if looks else 0.0,
        )
        if train_c
        else (np.zeros((0, *x_r.shape[1:]), np.uint8), np.zeros((0, 4), np.int8))
    )
    tuned = dataset.tuning_cards(photos) if tuning_copies else []
    if tuned:
        print(f"the finder's tuning boards: {len(tuned)} real cards, {tuning_copies} times each")
    elif tuning_copies:
        print("no tuning boards' photos (pclewis, tools/vision/set_photos.py): not trained on")
    if tuned:
        x_p, y_p = dataset.real(
            [c[0] for c in tuned],
            [c[1] for c in tuned],
            rng,
            copies=tuning_copies,
            hard=looks,
            covered=COVERED if looks else 0.0,
        )
        x_t, y_t = np.concatenate([x_t, x_p]), np.concatenate([y_t, y_p])
    x_v, y_v = (
        dataset.real([c[0] for c in val_c], [c[1] for c in val_c], rng, hard=looks)
        if val_c
        else (np.zeros((0, *x_r.shape[1:]), np.uint8), np.zeros((0, 4), np.int8))
    )
    # A tenth of the rendered cards and of the cut-outs are held out as well.
    cut_r, cut_n = len(x_r) // 10, len(x_n) // 10
    order_r, order_n = rng.permutation(len(x_r)), rng.permutation(len(x_n))
    x_r, y_r, x_n = x_r[order_r], y_r[order_r], x_n[order_n]
    train_x = np.concatenate([x_r[cut_r:], x_t, x_n[cut_n:]])
    train_y = np.concatenate([y_r[cut_r:], y_t, y_n[cut_n:]])
    val_r, val_y = x_r[:cut_r], y_r[:cut_r]
    shown = val_y[:, 0] != dataset.HIDDEN_CARD[0]
    print("preparing the network's inputs ...", flush=True)
    return {
        "train_x": inputs(train_x),
        "train_y": train_y,
        "val_real_x": inputs(x_v),
        "val_real_y": y_v,
        "val_rendered_x": inputs(val_r[shown]),
        "val_rendered_y": val_y[shown],
        "val_hidden_x": inputs(val_r[~shown]),
        "val_not_x": inputs(x_n[:cut_n]),
        "val_not_y": y_n[:cut_n],
    }


def augment(x: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    n = x.shape[0]
    flip_h = torch.rand(n, generator=gen) < 0.5
    flip_v = torch.rand(n, generator=gen) < 0.5
    x = torch.where(flip_h[:, None, None, None], x.flip(3), x)
    x = torch.where(flip_v[:, None, None, None], x.flip(2), x)
    gain = 1 + 0.08 * torch.randn(n, 3, 1, 1, generator=gen)
    x = (x * 64 + 128) * gain  # back to pixel levels, each channel off by a few percent
    x = x + 4 * torch.randn(x.shape, generator=gen)
    return (x - 128) / 64


def loss_of(outputs: tuple[torch.Tensor, ...], y: torch.Tensor) -> torch.Tensor:
    is_card = (y[:, 0] != dataset.NOT_A_CARD[0]).long()
    total = nn.functional.cross_entropy(outputs[4], is_card)
    cards = int(is_card.sum())
    seen = y[:, 0] >= 0
    hidden = y[:, 0] == dataset.HIDDEN_CARD[0]
    for k in range(4):
        if seen.any():
            total = total + nn.functional.cross_entropy(
                outputs[k][seen], y[seen, k].long(), label_smoothing=0.02, reduction="sum"
            ) / max(cards, 1)
        if hidden.any():  # against an even target: log-probabilities' mean over the three
            even = -nn.functional.log_softmax(outputs[k][hidden], 1).mean(1)
            total = total + even.sum() / max(cards, 1)
    return total


def predict(model: nn.Module, x: np.ndarray) -> list[np.ndarray]:
    model.eval()
    outs: list[list[np.ndarray]] = [[] for _ in HEADS]
    with torch.no_grad():
        for i in range(0, len(x), 512):
            batch = torch.from_numpy(x[i : i + 512].astype(np.float32))
            both = torch.cat([batch, batch.flip(2, 3)])
            for k, o in enumerate(model(both)):
                p = torch.softmax(o, 1).numpy()
                a, b = p[: len(batch)], p[len(batch) :]
                mean = (a + b) / 2
                disagree = a.argmax(1) != b.argmax(1)
                mean[disagree] = np.minimum(a[disagree], b[disagree])
                outs[k].append(mean)
    return [np.concatenate(o) if o else np.zeros((0, n)) for o, n in zip(outs, HEADS, strict=True)]


def report(name: str, probs: list[np.ndarray], y: np.ndarray, sure: float) -> dict[str, object]:
    """Per attribute: right, wrong and sure, unsure; and whole cards read surely and right."""
    if not len(y):
        return {}
    out: dict[str, object] = {"cards": len(y)}
    card_sure = np.ones(len(y), bool)
    card_right = np.ones(len(y), bool)
    for k, attr in enumerate(("number", "color", "shading", "shape")):
        guess = probs[k].argmax(1)
        conf = probs[k].max(1)
        right = guess == y[:, k]
        is_sure = conf >= sure
        out[attr] = {
            "right": round(float(right.mean()), 4),
            "wrong_and_sure": round(float((~right & is_sure).mean()), 4),
            "unsure": round(float((~is_sure).mean()), 4),
        }
        card_sure &= is_sure
        card_right &= right
    card_sure &= probs[4][:, 1] >= 0.5
    out["card_right_and_sure"] = round(float((card_right & card_sure).mean()), 4)
    out["card_wrong_and_sure"] = round(float((~card_right & card_sure).mean()), 4)
    out["card_unsure"] = round(float((~card_sure).mean()), 4)
    print(f"{name}: {json.dumps(out)}", flush=True)
    return out


LOOK_CARDS = 300


def looks_trade_off(model: nn.Module, rng: np.random.Generator) -> None:
    """The sureness rule's trade-off on cards rendered anew with one of what real photos do
    (dataset.LOOKS) alone: where classify.SURE reads none of them wrong and surely, found on
    this side of the training, never on the photos held out."""
    faces = all_faces()
    for look in dataset.LOOKS:
        picked = [faces[i] for i in rng.choice(len(faces), LOOK_CARDS)]
        flats = np.array([dataset.rendered_flat(f, rng, frozenset({look}))[0] for f in picked])
        y = np.array([f.values() for f in picked])
        probs = predict(model, inputs(flats))
        right = np.all([probs[k].argmax(1) == y[:, k] for k in range(4)], axis=0)
        least = np.min([probs[k].max(1) for k in range(4)], axis=0)
        cells = []
        for sure in (0.8, 0.85, 0.9, 0.95):
            is_sure = (least >= sure) & (probs[4][:, 1] >= 0.5)
            good, bad = int((right & is_sure).sum()), int((~right & is_sure).sum())
            cells.append(f"{sure}: {good} right, {bad} wrong")
        print(f"{look}, {LOOK_CARDS} cards read surely at " + "; ".join(cells), flush=True)
    picked = [faces[i] for i in rng.choice(len(faces), LOOK_CARDS)]
    made = [dataset.rendered_flat(f, rng, frozenset(), hide=True) for f in picked]
    hidden_read(predict(model, inputs(np.array([m[0] for m in made if m[1]]))), "hidden cards")


def hidden_read(probs: list[np.ndarray], name: str) -> None:
    """How many cards partly hidden are read surely (none should be), by threshold."""
    least = np.min([p.max(1) for p in probs[:4]], axis=0)
    cells = [
        f"{sure}: {int(((least >= sure) & (probs[4][:, 1] >= 0.5)).sum())}"
        for sure in (0.8, 0.85, 0.9, 0.95)
    ]
    print(f"{name}, {len(least)}, read surely at " + "; ".join(cells), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--photos", type=Path, default=prepared())
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--seed", type=int, default=32)
    parser.add_argument("--out", type=Path, default=MODEL)
    parser.add_argument(
        "--looks",
        action="store_true",
        help="render by chance what real photos do to cards (dataset.LOOKS) and give the real"
        " crops sharp shadows and glare: the model so trained is not taken (MODEL.md)",
    )
    parser.add_argument(
        "--chance-looks",
        default="",
        help="the looks (dataset.LOOKS, by name, a comma between) rendered cards are given"
        " by chance, without the rest of --looks (the real crops as they are, none covered)",
    )
    parser.add_argument(
        "--tuning-copies",
        type=int,
        default=TUNING_COPIES,
        help="how many times each real card of the finder's tuning boards is taken, each"
        " time warped and lit anew (0: none)",
    )
    parser.add_argument(
        "--cache",
        type=Path,
        help="keep the examples in this .npz and take them from it next time (a second"
        " training that changes only the network); without it they are made anew",
    )
    args = parser.parse_args()
    torch.set_num_threads(2)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    start = time.monotonic()
    if args.cache is not None and args.cache.exists():
        data = dict(np.load(args.cache))
    else:
        chance = frozenset(filter(None, args.chance_looks.split(",")))
        if not chance <= dataset.LOOKS.keys():
            parser.error(f"--chance-looks: one of {', '.join(dataset.LOOKS)}")
        data = build(args.photos, rng, args.looks, args.tuning_copies, chance)
        if args.cache is not None:
            args.cache.parent.mkdir(parents=True, exist_ok=True)
            np.savez(args.cache, **data)  # type: ignore[arg-type]  # numpy's stub takes allow_pickle for a key
    print(
        f"examples ready in {time.monotonic() - start:.0f} s: {len(data['train_x'])} to train",
        flush=True,
    )
    model = CardNet()
    print(f"{sum(p.numel() for p in model.parameters())} weights", flush=True)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    x = torch.from_numpy(data["train_x"])
    y = torch.from_numpy(data["train_y"])
    steps = args.epochs * ((len(x) + 127) // 128)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=steps)
    gen = torch.Generator().manual_seed(args.seed)
    for epoch in range(args.epochs):
        model.train()
        order = torch.randperm(len(x), generator=gen)
        total = 0.0
        for i in range(0, len(x), 128):
            idx = order[i : i + 128]
            batch = augment(x[idx].float(), gen)
            loss = loss_of(model(batch), y[idx])
            opt.zero_grad()
            loss.backward()  # type: ignore[no-untyped-call,unused-ignore]  # with torch installed
            opt.step()
            sched.step()
            total += loss.item() * len(idx)
        print(
            f"epoch {epoch + 1}/{args.epochs}: loss {total / len(x):.4f},"
            f" {time.monotonic() - start:.0f} s",
            flush=True,
        )
        if data["val_real_x"].size:
            report(
                "  held-out real crops", predict(model, data["val_real_x"]), data["val_real_y"], 0.9
            )
    results = {}
    for name in ("val_real", "val_rendered"):
        if data[f"{name}_x"].size:
            probs = predict(model, data[f"{name}_x"])
            for sure in (0.8, 0.9, 0.95, 0.98):
                results[f"{name} sure>={sure}"] = report(
                    f"{name} sure>={sure}", probs, data[f"{name}_y"], sure
                )
    looks_trade_off(model, np.random.default_rng(args.seed + 1))
    if data.get("val_hidden_x") is not None and data["val_hidden_x"].size:
        hidden_read(predict(model, data["val_hidden_x"]), "held-out hidden cards")
    probs = predict(model, data["val_not_x"])
    taken = float((probs[4][:, 1] >= 0.5).mean())
    print(f"not cards taken for cards: {taken:.4f} of {len(data['val_not_x'])}")
    export(model, args.out)
    print(
        f"wrote {args.out} ({args.out.stat().st_size / 1000:.0f} kB)"
        f" in {time.monotonic() - start:.0f} s"
    )


def export(model: nn.Module, path: Path) -> None:
    model.eval()
    dummy = torch.zeros(1, 3, INPUT_H, INPUT_W)
    torch.onnx.export(
        model,
        (dummy,),
        str(path),
        input_names=["flat"],
        output_names=list(OUTPUTS),
        dynamic_axes={"flat": {0: "n"}, **{o: {0: "n"} for o in OUTPUTS}},
        opset_version=13,
        dynamo=False,
    )
    # The box loads only a model whose SHA-256 is this one (classify.checked_model).
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    digest_path(path).write_text(f"{digest}  {path.name}\n", encoding="ascii")
    # Read back as the box loads it (its digest too), or the box could not.
    net = load(path)
    net.setInput(np.zeros((2, 3, INPUT_H, INPUT_W), np.float32))
    shapes = [o.shape for o in net.forward(list(OUTPUTS))]
    assert shapes == [(2, n) for n in HEADS], shapes


if __name__ == "__main__":
    main()
