"""What every test shares: the hypothesis profiles, and an offline, private Hugging Face cache."""

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=1000,
    deadline=None,
    database=None,  # a fresh clone keeps no failure database between runs
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=200, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))


@pytest.fixture(autouse=True)
def offline_private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test reaches the Hub, and none writes into the user's Hugging Face cache."""
    cache = tmp_path / "hf-cache"
    monkeypatch.setenv("HF_DATASETS_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return cache
