"""What every test shares: the hypothesis profiles, and an offline, private Hugging Face cache."""

import atexit
import os
import shutil
import tempfile
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
settings.register_profile("quick", max_examples=40, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))


def pytest_configure(config: pytest.Config) -> None:
    """The one-minute loop (``-m "not slow"``) runs the property tests at a quick strength.

    The full run (what CI runs) keeps ``dev`` (200 examples) or ``ci`` (1,000); a profile
    named in ``HYPOTHESIS_PROFILE`` always wins.
    """
    quick = "not slow" in (config.option.markexpr or "")
    if quick and not os.environ.get("CI") and not os.environ.get("HYPOTHESIS_PROFILE"):
        settings.load_profile("quick")


# `datasets` and `huggingface_hub` read these once, when first imported: set before any test
# module imports them, for the whole run (the fixture below gives each test its own cache)
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_CACHE"] = tempfile.mkdtemp(prefix="sdvm_hf-tests-hf-cache-")
atexit.register(shutil.rmtree, os.environ["HF_DATASETS_CACHE"], ignore_errors=True)


@pytest.fixture(autouse=True)
def offline_private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test reaches the Hub, and none reads or writes the user's Hugging Face cache.

    The cache is each test's own: ``load_dataset`` of a folder at a path an earlier run used
    (pytest reuses ``tmp_path`` names) must not find that run's tables.
    """
    import datasets.config

    cache = tmp_path / "hf-cache"
    monkeypatch.setenv("HF_DATASETS_CACHE", str(cache))
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", cache)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return cache
