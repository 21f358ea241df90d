from pathlib import Path

import sdvm_hf

README = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")


def test_all_lists_exactly_the_public_names() -> None:
    public = {name for name in vars(sdvm_hf) if not name.startswith("_")}
    modules = {name for name in public if type(getattr(sdvm_hf, name)).__name__ == "module"}
    assert sorted(public - modules) == sorted(sdvm_hf.__all__)


def test_every_exported_name_is_in_the_readme() -> None:
    missing = [name for name in sdvm_hf.__all__ if name not in README]
    assert missing == []
