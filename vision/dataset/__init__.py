"""Labelling SET photos: pre-labels from the model, a review page, and the files other tools read.

``setvision label`` (:mod:`vision.cli_label`) is built from these modules:

* :mod:`~vision.dataset.records`: the photos, cards and checked flags of a dataset (frozen);
* :mod:`~vision.dataset.prelabel`: pre-labels from the photo pipeline;
* :mod:`~vision.dataset.store`: the dataset folder, its ``annotations.json`` and atomic saves;
* :mod:`~vision.dataset.coco`, :mod:`~vision.dataset.labelstudio`, :mod:`~vision.dataset.yolo`,
  :mod:`~vision.dataset.crops`: COCO, Label Studio, YOLO and ImageFolder crops;
* :mod:`~vision.dataset.project`: the project's own annotations (``datasets/detection``) to and
  from a dataset, and a dataset's checked photos as training truth (``--data``);
* :mod:`~vision.dataset.snap`: a card's sides snapped onto the paper edge;
* :mod:`~vision.dataset.review_server`: the review page (standard library ``http.server``).
"""
