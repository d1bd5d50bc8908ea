"""The shipped cross-encoder through its runtime wrapper: the real file, its metadata checks, and
the input format shared with training."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from tokenizers import Tokenizer

from memory_guard.embeddings.local import E5_MODEL
from memory_guard.verify import cross_encoder as ce
from memory_guard.verify.cross_encoder import (
    CrossEncoder,
    CrossEncoderAssetMismatch,
    CrossEncoderCutoffs,
    CrossEncoderFileError,
    pair_ids,
)

onnx = pytest.importorskip("onnx")

PAIRS = [
    ("Quel est le délai de paiement des factures ?", "Quel est le délai de paiement des factures ?"),
    ("Quel est le délai de paiement des factures ?", "What is the payment deadline for invoices?"),
    ("Quelle garantie couvre les fissures ?", "Quelle garantie couvre les infiltrations ?"),
    ("How do I reset my password?", "How do I not reset my password?"),
]


@pytest.fixture(scope="module")
def model() -> Iterator[CrossEncoder]:
    loaded = CrossEncoder.load()
    yield loaded
    loaded.close()


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    path = Path(ce.__file__).parents[1] / "embeddings" / "assets" / E5_MODEL.tokenizer_file
    return Tokenizer.from_file(str(path))


def test_shipped_model_reads_its_cutoffs_and_gives_probabilities(model: CrossEncoder) -> None:
    assert 0 <= model.cutoffs.unsure <= model.cutoffs.direct <= 1
    assert model.model_id.startswith("local/cross-encoder")
    probs = model.probabilities(PAIRS)
    assert len(probs) == len(PAIRS)
    assert all(0.0 <= p <= 1.0 for p in probs)
    assert model.probabilities([]) == []


def test_a_batch_gives_each_pair_what_it_gets_alone_in_order(model: CrossEncoder) -> None:
    # Padding is masked out and no activation is quantized over the batch, so a pair's
    # probability does not depend on its neighbours.
    batched = model.probabilities(PAIRS)
    alone = [model.probabilities([pair])[0] for pair in PAIRS]
    assert batched == pytest.approx(alone, abs=1e-5)
    # Order is kept: reversed input, reversed output.
    assert model.probabilities(PAIRS[::-1]) == pytest.approx(batched[::-1], abs=1e-6)


def test_a_long_pair_is_cut_to_max_len_and_still_scored(model: CrossEncoder) -> None:
    long = "Quel est le délai de paiement des factures du chantier " * 20
    ids = model.pair_ids(long, "Quel délai ?")
    assert len(ids) == model.max_len
    [prob] = model.probabilities([(long, "Quel délai ?")])
    assert 0.0 <= prob <= 1.0


def test_pair_format_cuts_the_longer_side_first(tokenizer: Tokenizer) -> None:
    bos, eos = tokenizer.token_to_id("<s>"), tokenizer.token_to_id("</s>")
    short = tokenizer.encode("query: court ?").ids[1:-1]
    ids = pair_ids(tokenizer, "mot " * 80, "court ?", 32)
    assert len(ids) == 32
    assert ids[0] == bos
    assert ids[-len(short) - 3 :] == [eos, eos, *short, eos]
    both_long = pair_ids(tokenizer, "alpha " * 50, "beta " * 50, 20)
    assert len(both_long) == 20
    assert both_long.count(eos) == 3
    with pytest.raises(ValueError, match="max_len"):
        pair_ids(tokenizer, "a", "b", 3)


def test_cutoffs_are_validated() -> None:
    assert CrossEncoderCutoffs(direct=0.9, unsure=0.5).direct == 0.9
    for direct, unsure in ((0.5, 0.9), (1.2, 0.5), (0.9, -0.1)):
        with pytest.raises(ValueError, match="unsure <= direct"):
            CrossEncoderCutoffs(direct=direct, unsure=unsure)


def test_closed_model_refuses_to_run() -> None:
    model = CrossEncoder.load()
    model.close()
    with pytest.raises(RuntimeError, match="closed"):
        model.probabilities(PAIRS[:1])


@pytest.fixture(scope="module")
def shipped_proto() -> onnx.ModelProto:
    return onnx.load_from_string(ce.shipped_asset().read_bytes())


def _doctored(proto: onnx.ModelProto, folder: Path, change: object) -> Path:
    """A copy of the shipped file with its metadata entry changed (`change(meta)` edits the
    dict in place; a str replaces the entry's raw value; None removes it)."""
    copy = onnx.ModelProto()
    copy.CopyFrom(proto)
    entry = next(p for p in copy.metadata_props if p.key == ce.METADATA_KEY)
    if change is None:
        copy.metadata_props.remove(entry)
    elif isinstance(change, str):
        entry.value = change
    else:
        meta = json.loads(entry.value)
        change(meta)  # type: ignore[operator]
        entry.value = json.dumps(meta)
    target = folder / "doctored.onnx"
    target.write_bytes(copy.SerializeToString())
    return target


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (None, "no 'memory_guard.cross_encoder' metadata"),
        ("{not json", "not JSON"),
        (lambda m: m.pop("max_len"), "no 'max_len'"),
        (lambda m: m.update(format=2), "format 2"),
        (lambda m: m.update(tokenizer_sha256="0" * 64), "tokenizer sha256 0000"),
        (lambda m: m.update(tokenizer="other.tokenizer.json"), "not one this package ships"),
        (lambda m: m.update(cutoffs={"direct": 0.4, "unsure": 0.6}), "unsure <= direct"),
        (lambda m: m.update(cutoffs={"direct": "high", "unsure": 0.5}), "must be a number"),
        (lambda m: m["cutoffs"].pop("unsure"), "no 'unsure'"),
        (lambda m: m.update(max_len=2), "max_len 2"),
    ],
)
def test_bad_metadata_is_refused_with_a_clear_error(
    shipped_proto: onnx.ModelProto, tmp_path: Path, change: object, message: str
) -> None:
    path = _doctored(shipped_proto, tmp_path, change)
    with pytest.raises(CrossEncoderFileError, match=message) as caught:
        CrossEncoder.load(path)
    assert str(path) in str(caught.value)


def test_a_given_path_is_read_as_is(shipped_proto: onnx.ModelProto, tmp_path: Path) -> None:
    path = _doctored(shipped_proto, tmp_path, lambda m: m.update(cutoffs={"direct": 0.9, "unsure": 0.2}))
    loaded = CrossEncoder.load(path)
    assert loaded.cutoffs == CrossEncoderCutoffs(direct=0.9, unsure=0.2)
    loaded.close()


def test_an_altered_shipped_file_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake = tmp_path / "cross_encoder.onnx"
    fake.write_bytes(b"\0" * ce.ASSET_SIZE)  # right size, wrong bytes
    monkeypatch.setattr(ce, "shipped_asset", lambda: fake)
    with pytest.raises(CrossEncoderAssetMismatch, match=ce.ASSET_SHA256) as caught:
        CrossEncoder.load()
    assert str(fake) in str(caught.value)
    fake.write_bytes(b"short")
    with pytest.raises(CrossEncoderAssetMismatch, match="5 bytes"):
        CrossEncoder.load()


ID_PAIRS = [
    ("Quel est le délai de paiement des factures ?", "Quelle est la durée de la garantie décennale ?"),
    ("How do I reset my password?", "What's the 2024 budget for the Dakar–Thiès road (phase 2)?"),
    # Far past max_len on both sides, and past the embedder's 512-token cut on the stored one.
    ("Quel est le délai de paiement des factures du chantier " * 60, "How long is the warranty? " * 20),
]


def test_the_e5_embedder_and_the_cross_encoder_share_one_tokenizer_neither_can_change(
    model: CrossEncoder, tokenizer: Tokenizer
) -> None:
    from memory_guard.embeddings.local import LocalOnnxEmbedder

    embedder = LocalOnnxEmbedder.load(E5_MODEL.name, intra_op_threads=1)
    # The embedder cuts and pads its batches, a long text among them, after the cross-encoder loaded.
    embedder.embed_sync([text for pair in ID_PAIRS for text in pair])
    shared = embedder._get_runtime().tokenizer
    assert model._tokenizer is shared, "one parsed file (about 80 MB), not two"
    assert CrossEncoder.load()._tokenizer is shared
    assert not hasattr(shared, "enable_padding") and not hasattr(shared, "enable_truncation")
    # The shared object encodes as the file does: uncut and unpadded, whatever the embedder does.
    long = ID_PAIRS[2][0]
    assert shared.encode(long).ids == tokenizer.encode(long).ids
    assert len(shared.encode(long).ids) > E5_MODEL.max_tokens
    for stored, incoming in ID_PAIRS:
        expected = pair_ids(tokenizer, stored, incoming, model.max_len)
        assert model.pair_ids(stored, incoming) == expected
    assert len(model.pair_ids(*ID_PAIRS[2])) == model.max_len
