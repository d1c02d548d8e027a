"""Data-only package: the shipped models (installed as ``setvision_models``)."""
