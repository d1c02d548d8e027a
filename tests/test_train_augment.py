"""The training script's geometric augmentation: mirror flips and symbol-size scaling (recipe
v7). Synthetic crops only; the script is loaded without PyTorch (torch is imported lazily)."""

from __future__ import annotations

import numpy as np
import pytest

from tests._scripts import load_script
from vision.warp import CROP_HEIGHT, CROP_WIDTH

DRAWS = 240


@pytest.fixture(scope="module")
def recipe():
    return load_script("train_classifier")


def _blank() -> np.ndarray:
    return np.full((CROP_HEIGHT, CROP_WIDTH, 3), 235, np.uint8)


def _dark_centroids(recipe, crop: np.ndarray, seed: int) -> np.ndarray:
    """(DRAWS, 2) centroid (x, y) of the darkest 0.5% of each augmented crop, as fractions."""
    rng = np.random.default_rng(seed)
    out = np.empty((DRAWS, 2))
    for i in range(DRAWS):
        grey = recipe.augment(crop, rng).astype(np.float32).mean(axis=2)
        ys, xs = np.nonzero(grey <= np.quantile(grey, 0.005))
        out[i] = xs.mean() / grey.shape[1], ys.mean() / grey.shape[0]
    return out


@pytest.mark.parametrize(("mirror", "lo", "hi"), [(True, 0.35, 1.0), (False, 0.0, 0.2)])
def test_mirror_flips_half_the_crops(recipe, monkeypatch, mirror: bool, lo: float, hi: float):
    """A mark in the top-left quadrant stays top-left or goes bottom-right under the 180-degree
    turn; only a mirror (or the rare 90-degree turn, 8%) puts it top-right or bottom-left."""
    monkeypatch.setattr(recipe, "MIRROR", mirror)
    crop = _blank()
    crop[20:70, 15:60] = 40
    c = _dark_centroids(recipe, crop, seed=1)
    crossed = ((c[:, 0] > 0.5) != (c[:, 1] > 0.5)).mean()
    assert lo <= crossed <= hi, crossed  # measured: 0.46 with mirrors, 0.06 without


def test_zoom_scales_the_content_about_the_centre(recipe, monkeypatch) -> None:
    """A mark at a quarter of the height from the top moves towards or away from the centre by
    the zoom factor: its spread over the draws is several times wider with ZOOM on (measured:
    0.066 against 0.022)."""
    crop = _blank()
    crop[55:70, 70:90] = 40  # centred across, at y = 0.25
    spreads = {}
    for zoom in (None, (0.8, 1.15)):
        monkeypatch.setattr(recipe, "ZOOM", zoom)
        monkeypatch.setattr(recipe, "ZOOM_P", 1.0)
        dy = np.abs(_dark_centroids(recipe, crop, seed=2)[:, 1] - 0.5)  # 180-degree turns fold
        spreads[zoom] = np.quantile(dy, 0.8) - np.quantile(dy, 0.2)  # 90-degree turns are outliers
    off, on = spreads[None], spreads[(0.8, 1.15)]
    assert on > 2 * off, spreads
    # The middle 60% of the draws: about 0.6 x 0.25 x (1.15 - 0.8) = 0.05, plus the jitter.
    assert 0.04 < on < 0.12, spreads


def test_bad_zoom_arguments_are_refused(recipe, capsys) -> None:
    for argv in (["--zoom", "1.2", "0.8"], ["--zoom", "0", "1"], ["--zoom-p", "1.5"]):
        with pytest.raises(SystemExit) as exit_info:
            recipe.main(argv + ["--cache-only"])
        assert exit_info.value.code == 2
        assert "expected" in capsys.readouterr().err


@pytest.mark.parametrize("bgr", [(235, 235, 235), (200, 50, 30), (40, 160, 60), (120, 40, 110)])
def test_mosaic_keeps_a_flat_colour(recipe, bgr: tuple[int, int, int]) -> None:
    """The simulated Bayer camera neither tints nor moves a flat colour, whatever the
    demosaicing method (a swapped red and blue would show here)."""
    crop = np.full((CROP_HEIGHT, CROP_WIDTH, 3), bgr, np.uint8)
    rng = np.random.default_rng(0)
    for _ in range(3 * len(recipe.DEMOSAIC)):
        out = recipe.mosaic(crop, rng)
        assert out.shape == crop.shape and out.dtype == np.uint8
        assert np.abs(out.astype(int) - bgr).max() <= 2


@pytest.mark.parametrize("pitch", [3.2, 4.0, 4.8])
def test_mosaic_turns_fine_stripes_into_colour_moire(recipe, pitch: float) -> None:
    """Red stripes on white paper (green equal to blue everywhere, the pitch of the rendered
    decks at this crop size) come back with green and blue apart in bands: aliasing at
    different phases per colour, as kaggle's webcam shows it. An anti-aliased shrink of the
    same crop keeps green equal to blue (measured over 12 draws: s.d. of green minus blue 3 to
    84 levels, median 15 to 53 by pitch, against 0; a grid that happens to fit the stripes
    shows little moire)."""
    crop = np.full((CROP_HEIGHT, CROP_WIDTH, 3), 235, np.uint8)
    x = np.arange(CROP_WIDTH)
    crop[75:175, :, :][:, ((x / pitch) % 1.0 < 0.4) & (x >= 20) & (x < 140)] = (40, 40, 200)
    rng = np.random.default_rng(0)
    spread = []
    for _ in range(12):
        inside = recipe.mosaic(crop, rng).astype(np.float32)[90:160, 35:125]
        spread.append((inside[..., 1] - inside[..., 0]).std())
        # The stripes' mean colour survives (within the moire's swing).
        assert np.abs(inside.mean(axis=(0, 1)) - crop[90:160, 35:125].mean(axis=(0, 1))).max() < 40
    assert np.median(spread) > 10, spread


def test_bad_mosaic_share_is_refused(recipe, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        recipe.main(["--mosaic-p", "1.5", "--cache-only"])
    assert exit_info.value.code == 2
    assert "expected" in capsys.readouterr().err


def test_low_res_share_is_an_experiment_with_its_own_recipe(recipe, capsys, monkeypatch) -> None:
    monkeypatch.setattr(recipe, "RECIPE", recipe.RECIPE)
    monkeypatch.setattr(recipe, "LOW_RES_P", recipe.LOW_RES_P)
    with pytest.raises(SystemExit) as exit_info:
        recipe.main(["--low-res-p", "-0.1", "--cache-only"])
    assert exit_info.value.code == 2 and "expected" in capsys.readouterr().err
    assert recipe.LOW_RES_P == 0.2  # the v7 share: the recipe is unchanged by default
