"""Card detection on the reviewed real photos (datasets/detection/), against recorded baselines.

Slow (``pytest -m slow``): runs ``vision.detect.find_cards`` on every reviewed photo of
``datasets/detection/*.json``, reading the shared photos in place, and fails when precision or
recall (IoU >= 0.85; a partial card need not be found, and is no false positive when found once)
falls below the baseline, overall or for a source. Same measurement as
``scripts/eval_detection.py``.

The baseline is the figure measured when it was recorded minus a margin (1 point overall, 3 points
per source, where one card is worth up to 3 points). Raise it when the detector gets better;
re-measure it when photos are added to the annotations.

The baselines and the single-photo checks were recorded for the older contour detector, tuned
photo by photo on these photos (deleted, #33). They run against the learned detector; where it
falls short (measured 2026-12-03 with models/card_detector.onnx, trained on these photos too) the
test is a strict expected failure with the figure it reached, so one that starts passing fails
until its mark is taken off. Its own recorded figures, each source read by a model that never saw
it: ``tests/test_learned_detector.py``.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from tests._annotations import ANNOTATIONS, annotated_photo
from vision.data import shared_datasets
from vision.evaluation import DetectionScore, load_annotations, score_photo, summarise

#: Measured 2026-11-30 (the contour detector with mended notched regions, same-size insets, dim
#: surface patches dropped, parallel retries of neighbours' fourth sides, their edges stepping down
#: onto a dark table, far white cards' sides refined over 6 px at least and their short sides found
#: outwards from the symbols kept through the refinement, neighbours searched beside cards found
#: from their symbols, sides stopped on a shadow's edge moved out to the card's, the unlit paper of
#: a card partly clipped by glare taken as paper, paper brighter than the paper's median in every
#: channel not ink, split pieces' cut corners completed along their seam; 122 reviewed photos, 1069
#: required cards): overall precision 1.000, recall 0.996. Then cards in piles found from their
#: straight sides: 2 more of the top cards of pclewis ``crazy.jpg`` found, and a third taken with a
#: wrong side (its seam is invisible): precision 0.999, recall 0.998. Then quads of far cards seen
#: edge-on judged, and a quad's corners required on paper (``pile.QUAD_AREA``, ``QUAD_GAP``,
#: ``CORNER_DEPTH``): the last two top cards of ``crazy.jpg``, precision 1.000, recall 1.000.
#: Per source:
#: (precision, recall) as measured (maormagori's precision kept at an earlier run's 0.969,
#: where one run differed).
MEASURED = {
    "gractang": (1.000, 1.000),
    "ivankeller": (1.000, 1.000),
    "jtclark2": (1.000, 1.000),
    "koff": (1.000, 1.000),
    "maormagori": (0.969, 1.000),
    "nakkstar123": (1.000, 1.000),
    "omega697": (1.000, 1.000),
    "pclewis": (1.000, 1.000),
    "piratefsh": (1.000, 1.000),
    "rotemabend": (1.000, 1.000),
    "tomwhite": (1.000, 1.000),
}
OVERALL_MEASURED = (1.000, 1.000)
OVERALL_MARGIN = 0.01
SOURCE_MARGIN = 0.03

#: Where the learned detector falls short of a contour baseline, and how (2026-12-03).
LEARNED_SHORT = {
    "overall": "precision 0.979, recall 0.978 (1045 of 1069 found, 22 false)",
    "omega697": "precision 0.842: cards_13_wide_shot, far white cards on a white sill, 5 missed "
    "and 6 false quads",
    "pclewis": "precision 0.939: the pile of crazy.jpg (4 of its 5 top cards missed), line.jpg "
    "and pcl-bad-set1 (a shadow's edge or a reflection cuts a card)",
    "pile": "1 of the 5 top cards of the pile found",
    "white_ramp": "5 of the 13 white cards missed (0, 6, 8, 10 and 11)",
    "tray_960": "11 of 12: one card is found with its tray cell",
    "warm": "precision 0.979 (1042 of 1069 found, 22 false)",
    "dark": "precision 0.977 (1041 of 1069 found, 25 false)",
}


def _short(why: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, reason=f"learned: {LEARNED_SHORT[why]}")


@pytest.fixture(scope="module")
def both() -> dict[str, list[DetectionScore]]:
    """Scores on the photos as taken (``plain``), warm-lit (``warm``) and darkened (``dark``)
    copies: one pass, each photo read once."""
    root = shared_datasets(required=False)
    if root is None or not ANNOTATIONS.is_dir():
        pytest.skip("shared photos or detection annotations not available")
    photos = load_annotations(ANNOTATIONS, reviewed_only=True)
    if not photos:
        pytest.skip("no reviewed detection annotations")
    from vision.detect import find_cards
    from vision.io import load_image

    from ._scripts import load_script

    robustness = load_script("eval_robustness")  # the alterations' pixels, without their PNG
    out: dict[str, list[DetectionScore]] = {"plain": [], "warm": [], "dark": []}
    for photo in photos:
        image = load_image(root / photo.path)
        assert image.shape[:2] == (photo.height, photo.width), photo.path
        for name, frame in (
            ("plain", image),
            ("warm", robustness.warm(image)),
            ("dark", robustness.dark(image)),
        ):
            corners = np.asarray(find_cards(frame).corners, dtype=np.float64)
            out[name].append(score_photo(photo, corners))
    return out


@pytest.fixture(scope="module")
def scores(both: dict[str, list[DetectionScore]]) -> list[DetectionScore]:
    return both["plain"]


@pytest.mark.slow
@_short("overall")
def test_overall_precision_and_recall_hold_the_baseline(scores: list[DetectionScore]) -> None:
    summary = summarise(scores)
    precision_floor = OVERALL_MEASURED[0] - OVERALL_MARGIN
    recall_floor = OVERALL_MEASURED[1] - OVERALL_MARGIN
    detail = (
        f"{summary.true_positives}/{summary.truth} found, {summary.false_positives} false, "
        f"{summary.perfect_photos}/{summary.photos} photos perfect"
    )
    assert summary.precision >= precision_floor, (
        f"precision {summary.precision:.3f} < {precision_floor:.3f} ({detail})"
    )
    assert summary.recall >= recall_floor, (
        f"recall {summary.recall:.3f} < {recall_floor:.3f} ({detail})"
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "source",
    [pytest.param(s, marks=_short(s)) if s in LEARNED_SHORT else s for s in sorted(MEASURED)],
)
def test_each_source_holds_its_baseline(scores: list[DetectionScore], source: str) -> None:
    by_source: dict[str, list[DetectionScore]] = defaultdict(list)
    for s in scores:
        by_source[s.source].append(s)
    if source not in by_source:
        pytest.skip(f"no reviewed photos of {source}")
    summary = summarise(by_source[source])
    precision, recall = MEASURED[source]
    failures = [
        f"{s.path}: missed {list(s.missed)}, false {list(s.false_indices)}"
        for s in by_source[source]
        if not s.perfect
    ]
    assert summary.precision >= precision - SOURCE_MARGIN, (
        f"{source} precision {summary.precision:.3f} < {precision - SOURCE_MARGIN:.3f}: {failures}"
    )
    assert summary.recall >= recall - SOURCE_MARGIN, (
        f"{source} recall {summary.recall:.3f} < {recall - SOURCE_MARGIN:.3f}: {failures}"
    )


@pytest.mark.slow
def test_every_reviewed_source_has_a_baseline(scores: list[DetectionScore]) -> None:
    missing = sorted({s.source for s in scores} - set(MEASURED))
    assert not missing, f"record a baseline for {missing} (run scripts/eval_detection.py)"


#: White cards on a white sill whose far short side lies in the sill's shading toward the
#: window (a ramp, no step, at the refinement's fine scale: 11, 12), one at a slant showing two
#: sides (7, found beside a card found from its symbols), and a lone card on a white wall.
WHITE_ON_WHITE = {
    "tables/omega697/app/src/androidTest/assets/scenes/cards_13_wide_shot.jpg": (7, 11, 12),
    "tables/omega697/app/src/androidTest/assets/scenes/card_1_red_shaded_diamond.jpg": (0,),
}


@pytest.mark.slow
@pytest.mark.parametrize(
    "path",
    [
        pytest.param(p, marks=_short("white_ramp")) if "wide_shot" in p else p
        for p in sorted(WHITE_ON_WHITE)
    ],
)
def test_white_cards_whose_short_side_fades_in_a_ramp_are_found(path: str) -> None:
    root = shared_datasets(required=False)
    if root is None or not ANNOTATIONS.is_dir():
        pytest.skip("shared photos or detection annotations not available")
    from vision.detect import find_cards
    from vision.io import load_image

    photo = annotated_photo(path)
    score = score_photo(photo, np.asarray(find_cards(load_image(root / path)).corners, float))
    assert not set(WHITE_ON_WHITE[path]) & set(score.missed), f"missed {list(score.missed)}"
    assert not score.false_indices


@pytest.mark.slow
def test_a_near_card_cut_by_the_frame_edge_is_not_split(scores: list[DetectionScore]) -> None:
    # pclewis angle.jpg, a low camera: the near card cut by the bottom edge is larger than the
    # scene's median card, and was once split as a grid of two touching cards, both reported
    # (one read wrong at 64%, a SET missed). Its second piece now counts as a false positive.
    path = "tables/pclewis/resources/angle.jpg"
    (score,) = [s for s in scores if s.path == path]
    assert score.false_positives == 0, f"false {list(score.false_indices)}"


@pytest.mark.slow
@_short("pile")
@pytest.mark.parametrize("long_side", [None, 1600])
def test_cards_on_top_of_a_pile_are_found(long_side: int | None) -> None:
    # pclewis crazy.jpg, a heap of 12 overlapping cards: the 5 on top merge with the cards
    # under them into one region, and only the one lying clear of the others' edges was found
    # (1 of 5) before the contour detector's pile search; 3 of 5 and a wrong quad for
    # the faint striped oval's card before the far cards' quads were judged and a quad's
    # corners had to lie on paper. At full size and at the reduced size ``setvision photo``
    # reads 16 MP photos at (``REDUCED_LONG_SIDE``).
    root = shared_datasets(required=False)
    if root is None or not ANNOTATIONS.is_dir():
        pytest.skip("shared photos or detection annotations not available")
    from vision.detect import find_cards
    from vision.io import load_image

    path = "tables/pclewis/resources/crazy.jpg"
    photo = annotated_photo(path)
    frame = load_image(root / path, min_long_side=long_side)
    scale = photo.width / frame.shape[1]
    score = score_photo(photo, np.asarray(find_cards(frame).corners, float) * scale)
    assert score.true_positives == 5, f"missed {list(score.missed)}"
    assert score.false_positives == 0, f"false {list(score.false_indices)}"


def _jpeg50(frame: np.ndarray) -> tuple[np.ndarray, float]:
    import cv2

    encoded = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, 50])[1]
    return cv2.imdecode(encoded, cv2.IMREAD_COLOR), 1.0


def _long_side_960(frame: np.ndarray) -> tuple[np.ndarray, float]:
    import cv2

    scale = 960 / max(frame.shape[:2])
    size = (round(frame.shape[1] * scale), round(frame.shape[0] * scale))
    return cv2.resize(frame, size, interpolation=cv2.INTER_AREA), scale


@pytest.mark.slow
@pytest.mark.parametrize(
    ("path", "alter", "least"),
    [
        ("tables/koff/images/IMG08.jpg", _jpeg50, 11),
        # Two of its cards kept their cells (the contour detector's inset search reached the
        # symbols' outer edges).
        pytest.param("tables/koff/images/IMG01.jpg", _long_side_960, 12, marks=_short("tray_960")),
    ],
    ids=["IMG08-jpeg50", "IMG01-960px"],
)
def test_cards_in_tray_cells_are_taken_without_their_cells(
    path: str,
    alter,  # noqa: ANN001
    least: int,
) -> None:
    # koff IMG08 saved at JPEG quality 50: one card found with its tray cell seeded a chain of
    # neighbour hypotheses that snapped to the next cells, and each replaced the card found
    # inside it (5 of 12; two read as 3 symbols for 2 at 0.94-0.98). A hypothesis now replaces
    # a detection nested in it only when it is nearer the table's card size.
    root = shared_datasets(required=False)
    if root is None or not ANNOTATIONS.is_dir():
        pytest.skip("shared photos or detection annotations not available")
    from vision.detect import find_cards
    from vision.io import load_image

    photo = annotated_photo(path)
    frame, scale = alter(load_image(root / path))
    score = score_photo(photo, np.asarray(find_cards(frame).corners, float) / scale)
    assert score.true_positives >= least, f"missed {list(score.missed)}"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("path", "alteration"),
    [
        # Shadows lifted (gamma 0.5, ``eval_robustness.py``'s ``gamma05``): five cards' open
        # outlines in pale red, grey-purple and light green come out 6-10 % darker than their
        # paper, under the strict ink step, and those cards were refused as blank (4 of 9
        # found). Four cards found by their own ink now vouch for them.
        ("tables/jtclark2/ImageLibrary/Capture_AllShades_MatchedToSilhouette.jpg", "gamma05"),
        # Blended 50 % with white (a new user's trial; ``washed50``): the grey-blue carpet
        # between the cards comes out bright and pale, and the search beside found cards
        # (the contour detector's) took 11 card-sized patches of it for cards. Their
        # "paper" is grainy, the cards' is not (``vision.detect.plausible.textured``).
        ("tables/jtclark2/ImageLibrary/IMG_6394.jpg", "washed50"),
    ],
    ids=["faint-symbols-gamma05", "carpet-washed50"],
)
def test_every_card_and_nothing_else_on_a_washed_out_photo(path: str, alteration: str) -> None:
    root = shared_datasets(required=False)
    if root is None or not ANNOTATIONS.is_dir():
        pytest.skip("shared photos or detection annotations not available")
    import cv2

    from vision.detect import find_cards
    from vision.io import load_image

    from ._scripts import load_script

    photo = annotated_photo(path)
    encoded, _ = load_script("eval_robustness").ALTERATIONS[alteration](load_image(root / path))
    frame = cv2.imdecode(np.frombuffer(encoded, np.uint8), cv2.IMREAD_COLOR)
    score = score_photo(photo, np.asarray(find_cards(frame).corners, float))
    assert score.true_positives == len(photo.cards), f"missed {list(score.missed)}"
    assert not score.false_indices, f"{len(score.false_indices)} false positives"


#: Warm-lit copies of the same photos (``scripts/eval_robustness.py``'s ``warm``: blue x 0.75,
#: green x 0.95, red x 1.1; ``scripts/eval_detection.py --alter warm``), measured 2026-11-30:
#: precision 0.993, recall 0.979 (1047 of 1069 cards; before the working image's colour
#: balance: 0.983 and 0.935).
WARM_MEASURED = (0.993, 0.979)


#: Copies darkened to 60 % (``eval_robustness.py``'s ``dark60``), measured 2026-11-30: precision
#: 0.997, recall 0.989 (1057 of 1069; when a dim working image was brightened only to a white
#: level of 150, not to a typical photo's 216: 0.990, 0.978).
DARK_MEASURED = (0.997, 0.989)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("alteration", "measured"),
    [
        pytest.param("warm", WARM_MEASURED, marks=_short("warm")),
        pytest.param("dark", DARK_MEASURED, marks=_short("dark")),
    ],
)
def test_altered_copies_hold_their_baseline(
    both: dict[str, list[DetectionScore]], alteration: str, measured: tuple[float, float]
) -> None:
    summary = summarise(both[alteration])
    detail = f"{summary.true_positives}/{summary.truth} found, {summary.false_positives} false"
    assert summary.precision >= measured[0] - OVERALL_MARGIN, f"{alteration}: {detail}"
    assert summary.recall >= measured[1] - OVERALL_MARGIN, f"{alteration}: {detail}"
