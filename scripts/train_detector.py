"""Train the card segmenter of :mod:`vision.detect.learned` and export it to ONNX.

One seeded command (PyTorch CPU, the ``train`` extra)::

    .venv/bin/python scripts/train_detector.py --out models/card_detector.onnx

Data, per step a batch of random crops of:

* rendered tables (:func:`vision.render.render_table`), drawn once and cached under
  ``build/detector_cache``: every background the renderer has (wood, cloth, carpet, white desk,
  dark felt, light wood, checked, printed), grid and loose layouts, cards touching and
  overlapping, notes, phones, paper sheets, envelopes, card boxes, keyboards, laptops, mice and
  cups beside them, a paper sheet under them (plain, ruled, or a cell drawn round each card as
  in a tray), fingertips, camera tilts up to 55 degrees, the renderer's light and lens effects;
  in :data:`REAL_FACE_SHARE` of them every card's face is a photographed one (the shared crops
  of tomwhite and kaggle-set-cards) warped onto its corners;
* the real photos annotated in ``datasets/detection`` (corners by eye) and the shared photos
  with no card in them, less the sources named by ``--leave-out`` (leave-source-out models for
  ``scripts/eval_detector.py --cv``); with ``--data DATASET_DIR``, also the photos a person
  checked in a dataset made by ``setvision label`` (a user's own table and deck).

Augmentation on every crop: scale (the network meets cards 15 to 150 px wide at its input),
rotation by quarter turns and mirroring (a mirrored card is still a card to a detector),
brightness, contrast, warm and cool casts, blur, noise.

The tables of ``webrew`` carry only boxes, not corners: they are never trained on, and so
are a source no model or constant here has seen.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import sys
import time
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vision.cards import full_deck  # noqa: E402
from vision.data import REPO_ROOT, shared_datasets  # noqa: E402
from vision.dataset.project import checked_datasets  # noqa: E402
from vision.detect.learned import (  # noqa: E402
    BORDER_WIDTH,
    INPUT_LONG_SIDE,
    INPUT_MULTIPLE,
    OUTPUT_STRIDE,
    card_labels,
)
from vision.errors import SetVisionError  # noqa: E402
from vision.evaluation import load_annotations  # noqa: E402
from vision.io import load_image  # noqa: E402
from vision.render import (  # noqa: E402
    BACKGROUNDS,
    CLUTTER_KINDS,
    EXTRA_BACKGROUNDS,
    SHEET_KINDS,
    render_table,
)
from vision.render_clutter import rounded_rect_mask  # noqa: E402

CACHE = REPO_ROOT / "build" / "detector_cache"
#: Leave-source-out folds of the annotated sources (about a third of the cards each): the
#: model of fold i is trained without its sources and measured on them
#: (``scripts/eval_detector.py --cv``).
FOLDS: tuple[tuple[str, ...], ...] = (
    ("pclewis", "ivankeller", "piratefsh"),
    ("tomwhite", "gractang", "omega697"),
    ("koff", "nakkstar123", "rotemabend", "jtclark2", "maormagori"),
)
CV_ROOT = REPO_ROOT / "build" / "detector_cv"
#: Training crop side (network input pixels).
CROP = 192
#: Real photos are kept at this long side in memory; crops are taken after a random rescale.
REAL_LONG_SIDE = 768


#: Version of the rendered mix below, part of the cache's name.
RENDER_MIX = 2
#: Share of rendered tables whose card faces are replaced by real photographed faces.
REAL_FACE_SHARE = 0.3


def real_faces(limit: int, seed: int) -> list[np.ndarray]:
    """Up to ``limit`` photographed card faces from the shared crops of tomwhite and
    kaggle-set-cards (cut at the card's edge, verified labels; omega697's chips show table round
    the card), portrait, in a seeded random choice."""
    root = shared_datasets(required=True)
    with open(root / "crops.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["source"] in ("tomwhite", "kaggle-set-cards")]
    rng = np.random.default_rng(seed)
    faces = []
    for i in rng.permutation(len(rows))[:limit]:
        img = load_image(root / rows[int(i)]["path"])
        if img.shape[0] < img.shape[1]:
            img = cv2.rotate(img, cv2.ROTATE_90_CLOCKWISE)
        faces.append(img)
    return faces


def paste_faces(frame: np.ndarray, corners: np.ndarray, faces: list[np.ndarray],
                rng: np.random.Generator) -> None:  # fmt: skip
    """Replace each card's face in ``frame`` (in place, in the cards' drawing order) by a random
    photographed face warped to its corners, with rounded corners."""
    h, w = frame.shape[:2]
    for quad in corners:
        face = faces[int(rng.integers(len(faces)))]
        fh, fw = face.shape[:2]
        mask = rounded_rect_mask(fw, fh, max(int(0.06 * fw), 1))
        src = np.float32([[-0.5, -0.5], [fw - 0.5, -0.5], [fw - 0.5, fh - 0.5], [-0.5, fh - 0.5]])
        hom = cv2.getPerspectiveTransform(src, quad.astype(np.float32))
        warped = cv2.warpPerspective(face, hom, (w, h), flags=cv2.INTER_AREA)
        alpha = cv2.warpPerspective(mask, hom, (w, h), flags=cv2.INTER_LINEAR)
        a = alpha.astype(np.float32)[:, :, None] / 255.0
        frame[...] = np.clip(frame * (1 - a) + warped * a, 0, 255).astype(np.uint8)


def render_scenes(n: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """``n`` rendered tables (frame, corners), cached by (n, seed, :data:`RENDER_MIX`)."""
    path = CACHE / f"rendered_{n}_{seed}_mix{RENDER_MIX}.npz"
    if path.exists():
        data = np.load(path, allow_pickle=True)
        return list(zip(data["frames"], data["corners"], strict=True))
    rng = np.random.default_rng(seed)
    deck = list(full_deck())
    backgrounds = list(BACKGROUNDS) + list(EXTRA_BACKGROUNDS)
    kinds = ["note", "phone", "paper", "box", *CLUTTER_KINDS]
    faces = real_faces(2000, seed)
    scenes = []
    t0 = time.time()
    for i in range(n):
        k = int(rng.integers(3, 22))
        cards = [deck[j] for j in rng.choice(81, k, replace=False)]
        w = int(rng.choice([640, 720, 800]))
        h = int(w * rng.choice([0.75, 0.5625, 1.0, 1.333]))
        loose = rng.random() < 0.6
        real_face = rng.random() < REAL_FACE_SHARE
        frame, corners = render_table(
            cards, rng, background=str(rng.choice(backgrounds)), size=(w, h),
            layout="loose" if loose else "grid", touching=bool(rng.random() < 0.5),
            distractors=int(rng.integers(0, 5)),
            distractor_kinds=kinds,
            strength=float(rng.uniform(0.2, 0.8)),
            margin=float(rng.choice([0.08, 0.02, -0.05])),
            tilt_deg=float(rng.uniform(0, 55)) if rng.random() < 0.6 else None,
            fingers=0 if real_face else int(rng.integers(0, 3)),
            spacing=float(rng.uniform(0.7, 1.1)) if loose else None,
            sheet=str(rng.choice(SHEET_KINDS)) if rng.random() < 0.3 else None,
        )  # fmt: skip
        if real_face:
            paste_faces(frame, corners, faces, rng)
        scenes.append((frame, corners.astype(np.float32)))
        if (i + 1) % 100 == 0:
            print(f"  rendered {i + 1}/{n} ({time.time() - t0:.0f} s)", flush=True)
    CACHE.mkdir(parents=True, exist_ok=True)
    frames = np.empty(n, object)
    quads = np.empty(n, object)
    for i, (f, c) in enumerate(scenes):
        frames[i], quads[i] = f, c
    np.savez(path, frames=frames, corners=quads)
    return scenes


def real_photos(
    leave_out: set[str], data: tuple[Path, ...] = ()
) -> list[tuple[np.ndarray, np.ndarray]]:
    """The annotated real photos (frame at :data:`REAL_LONG_SIDE`, corners), the checked photos
    of the dataset folders ``data`` (made by ``setvision label``: a user's own), and the shared
    photos with no card (``negative`` in ``tables.csv``), less ``leave_out``'s sources.
    Partial cards are labelled too: they are cards."""
    from vision.dataset.project import dataset_truths

    root = shared_datasets(required=True)
    out = []
    truths = load_annotations(REPO_ROOT / "datasets" / "detection")
    for folder in data:
        truths += dataset_truths(folder)  # absolute paths: root / path is the photo
    for truth in truths:
        if truth.source in leave_out:
            continue
        frame = load_image(root / truth.path)
        corners = np.asarray([c.corners for c in truth.cards], np.float32).reshape(-1, 4, 2)
        scale = min(1.0, REAL_LONG_SIDE / max(frame.shape[:2]))
        if scale < 1.0:
            size = (round(frame.shape[1] * scale), round(frame.shape[0] * scale))
            frame = cv2.resize(frame, size, interpolation=cv2.INTER_AREA)
            corners = (corners + 0.5) * scale - 0.5
        out.append((frame, corners))
    # Photos of tables with no card at all (desk clutter, a street): every pixel is table.
    with open(root / "tables.csv", newline="") as f:
        negatives = [r for r in csv.DictReader(f) if r["labels"] == "negative"]
    for row in negatives:
        if row["source"] not in leave_out:
            frame = load_image(root / row["path"])
            scale = min(1.0, REAL_LONG_SIDE / max(frame.shape[:2]))
            frame = cv2.resize(frame, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
            out.append((frame, np.zeros((0, 4, 2), np.float32)))
    return out


def sample(
    scene: tuple[np.ndarray, np.ndarray], rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """One augmented (CROP, CROP, 3) uint8 crop and its (CROP/stride)^2 labels."""
    frame, corners = scene
    h, w = frame.shape[:2]
    # Scale so the frame's long side is what the network sees of a whole photo, +-; up to
    # 2.5x, so that cards larger than the crop are seen too (a close-up of one card: a first
    # model trained to 1.6x took its symbols for cards).
    long_side = INPUT_LONG_SIDE * float(np.exp(rng.uniform(np.log(0.4), np.log(2.5))))
    s = long_side / max(h, w)
    angle = float(rng.uniform(-180, 180)) if rng.random() < 0.3 else 90.0 * rng.integers(4)
    centre = np.array([rng.uniform(0, w), rng.uniform(0, h)])
    m = cv2.getRotationMatrix2D((float(centre[0]), float(centre[1])), angle, s)
    m[:, 2] += np.array([CROP / 2, CROP / 2]) - centre
    if rng.random() < 0.5:  # mirror
        m = np.array([[-1, 0, CROP - 1], [0, 1, 0]], np.float64) @ np.vstack([m, [0, 0, 1]])
    # Outside the frame: a flat colour of the frame's own (a reflection would show unlabelled
    # mirrored cards).
    fill = tuple(int(v) for v in frame[rng.integers(h), rng.integers(w)])
    crop = cv2.warpAffine(frame, m, (CROP, CROP), flags=cv2.INTER_LINEAR,
                          borderMode=cv2.BORDER_CONSTANT, borderValue=fill)  # fmt: skip
    pts = corners.reshape(-1, 2) @ m[:, :2].T + m[:, 2]
    labels = card_labels(pts.reshape(-1, 4, 2), (CROP // OUTPUT_STRIDE,) * 2, 1 / OUTPUT_STRIDE)
    img = crop.astype(np.float32)
    # Light: brightness, contrast, a colour cast (warm lamps, cool daylight), gamma.
    img = img * rng.uniform(0.5, 1.3) + rng.uniform(-30, 30)
    img = (img - img.mean()) * rng.uniform(0.6, 1.3) + img.mean()
    img *= np.array([rng.uniform(0.75, 1.15), 1.0, rng.uniform(0.85, 1.25)])  # B, G, R
    img = 255.0 * (np.clip(img, 0, 255) / 255.0) ** rng.uniform(0.7, 1.5)
    if rng.random() < 0.3:
        img = cv2.GaussianBlur(img, (0, 0), rng.uniform(0.5, 1.8))
    if rng.random() < 0.4:
        img += rng.normal(0, rng.uniform(2, 10), img.shape)
    return np.clip(img, 0, 255).astype(np.uint8), labels


def build_model():  # noqa: ANN201
    """A small U-Net: a stride-2 stem, four downsamplings, decoder back to 1/2 resolution;
    three logits a pixel (table, card, border). 0.25 M parameters (1 MB in float32): at
    widths 16-96 (0.5 M) a training step took twice as long on 2 cores."""
    import torch
    from torch import nn

    def block(cin: int, cout: int) -> nn.Sequential:
        return nn.Sequential(
            nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(True),
            nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(True),
        )  # fmt: skip

    class UNet(nn.Module):
        def __init__(self, widths: tuple[int, ...] = (12, 24, 32, 48, 64)) -> None:
            super().__init__()
            self.stem = nn.Sequential(
                nn.Conv2d(3, widths[0], 3, stride=2, padding=1, bias=False),
                nn.BatchNorm2d(widths[0]), nn.ReLU(True), block(widths[0], widths[0]),
            )  # fmt: skip
            self.down = nn.ModuleList(
                block(a, b) for a, b in zip(widths[:-1], widths[1:], strict=True)
            )
            self.up = nn.ModuleList(
                block(b + a, a) for a, b in zip(widths[:-1], widths[1:], strict=True)
            )
            self.head = nn.Conv2d(widths[0], 3, 1)
            self.register_buffer("mean", torch.tensor([0.5, 0.5, 0.5]).view(1, 3, 1, 1))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x = self.stem((x - self.mean) * 4.0)
            skips = [x]
            for down in self.down:
                x = down(nn.functional.max_pool2d(x, 2))
                skips.append(x)
            skips.pop()
            for up in reversed(self.up):
                skip = skips.pop()
                x = nn.functional.interpolate(x, size=skip.shape[2:], mode="nearest")
                x = up(torch.cat([x, skip], 1))
            return self.head(x)

    return UNet()


def train(args: argparse.Namespace) -> Path:
    import torch

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(args.seed)
    leave_out = {s for s in args.leave_out.split(",") if s}
    t0 = time.time()
    rendered = render_scenes(args.rendered, args.seed)
    real = real_photos(leave_out, tuple(Path(d) for d in args.data))
    print(f"data: {len(rendered)} rendered, {len(real)} real photos (left out: "
          f"{sorted(leave_out) or 'none'}); {time.time() - t0:.0f} s", flush=True)  # fmt: skip
    model = build_model()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, args.lr, total_steps=args.steps)
    weight = torch.tensor([1.0, 1.0, 1.5])
    model.train()
    t0 = time.time()
    for step in range(args.steps):
        batch = []
        for _ in range(args.batch):
            pool = real if real and rng.random() < args.real_share else rendered
            batch.append(sample(pool[int(rng.integers(len(pool)))], rng))
        x = torch.from_numpy(np.stack([b[0][:, :, ::-1] for b in batch]).copy())
        x = x.permute(0, 3, 1, 2).float() / 255.0
        y = torch.from_numpy(np.stack([b[1] for b in batch]).astype(np.int64))
        loss = torch.nn.functional.cross_entropy(model(x), y, weight=weight)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % 50 == 0 or step == args.steps - 1:
            print(f"step {step}/{args.steps} loss {loss.item():.4f} "
                  f"({time.time() - t0:.0f} s)", flush=True)  # fmt: skip
    return export(model, args, sorted(leave_out), len(rendered), len(real))


def export(model, args: argparse.Namespace, leave_out: list[str], n_rendered: int,  # noqa: ANN001
           n_real: int) -> Path:  # fmt: skip
    import torch

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    model = model.cpu().eval()
    dummy = torch.zeros(1, 3, 384, 512)
    torch.onnx.export(
        model, dummy, str(out), input_names=["image"], output_names=["logits"],
        dynamic_axes={"image": {2: "height", 3: "width"}, "logits": {2: "h", 3: "w"}},
        opset_version=17, dynamo=False,
    )  # fmt: skip
    meta = {
        "format": "setvision-card-detector/1",
        "onnx": out.name,
        "sha256": hashlib.sha256(out.read_bytes()).hexdigest(),
        "input": "image: (1, 3, H, W) float32 RGB in [0, 1], H and W multiples of "
        f"{INPUT_MULTIPLE}, the frame shrunk to a long side of {INPUT_LONG_SIDE}",
        "output": f"logits: (1, 3, H/{OUTPUT_STRIDE}, W/{OUTPUT_STRIDE}): table, card core "
        f"card, card border (a band {BORDER_WIDTH} output px wide on its outline)",
        "input_long_side": INPUT_LONG_SIDE,
        "border_width": BORDER_WIDTH,
        "card_threshold": 0.5,
        "training": {
            "command": "scripts/train_detector.py " + " ".join(sys.argv[1:]),
            "seed": args.seed,
            "steps": args.steps,
            "batch": args.batch,
            "crop": CROP,
            "rendered_tables": n_rendered,
            "render_mix": RENDER_MIX,
            "real_photos": n_real,
            "real_share": args.real_share,
            "left_out_sources": leave_out,
            "never_trained_on": ["webrew (boxes only, no corners)"],
        },
    }
    out.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n")
    print(f"wrote {out} ({out.stat().st_size / 1e6:.2f} MB) and its .json", flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(REPO_ROOT / "models" / "card_detector.onnx"))
    parser.add_argument("--leave-out", default="", help="sources not trained on, comma-separated")
    parser.add_argument("--steps", type=int, default=2500)
    parser.add_argument("--batch", type=int, default=12)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--rendered", type=int, default=1000, help="rendered tables")
    parser.add_argument("--real-share", type=float, default=0.5,
                        help="share of crops from real photos")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--data", action="append", default=[], metavar="DATASET_DIR",
                        help="also train on the checked photos of a dataset made by "
                        "'setvision label' (your own); may be given more than once")  # fmt: skip
    args = parser.parse_args()
    try:  # a missing or unreadable dataset: one line, before any work
        args.data = checked_datasets(args.data)
    except SetVisionError as error:
        parser.error(str(error))
    train(args)


if __name__ == "__main__":
    main()
