"""What the load benchmark asks and stores: hit probes, miss questions, import files, and the
large database of the start-up figure.

Everything is seeded, so that every tree of one run (and every run) gets the same questions.
The code of the trees under test is never imported here: a tree is reached over HTTP, and its
database only through the schema its own service created.
"""

from __future__ import annotations

import json
import random
import re
import sqlite3
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bench.questions import Faq, exact_variant

SEED = 20251124


@dataclass(frozen=True, slots=True)
class Probe:
    """A question that must be answered direct from `entry_id`."""

    message: str
    entry_id: int
    kind: str  # "exact" or "cosine"
    repeat: bool = False  # this text was asked before in this run


@dataclass(slots=True)
class HitMix:
    """The hits one service is asked: exact variants of the stored questions in turn, and the
    cosine variants of `pool` (bench/load_qualify.py: those this tree serves direct), of which a
    share `repeat` repeats a text this service was already asked (the others are asked for the
    first time, until the fresh ones run out: then every one is a repeat, and the tally says so)."""

    stored: Sequence[tuple[Faq, int]]
    pool: Sequence[Probe]
    repeat: float
    seed: int = SEED
    fresh: deque[Probe] = field(init=False)
    asked: list[Probe] = field(init=False, default_factory=list)
    refused: set[str] = field(init=False, default_factory=set)
    fresh_asked: int = field(init=False, default=0)
    repeats_asked: int = field(init=False, default=0)
    _rng: random.Random = field(init=False)
    _exact: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)
        pool = list(self.pool)
        self._rng.shuffle(pool)
        self.fresh = deque(pool)

    def exact(self) -> Probe:
        faq, entry_id = self.stored[self._exact % len(self.stored)]
        self._exact += 1
        return Probe(exact_variant(faq.question, self._exact), entry_id, "exact")

    def cosine(self) -> Probe:
        turn = self.fresh_asked + self.repeats_asked
        # exactly `repeat` of every run of asks, spread evenly; which text is repeated is drawn
        repeat_now = int((turn + 1) * self.repeat) > int(turn * self.repeat)
        if self.fresh and (not self.asked or not repeat_now):
            probe = self.fresh.popleft()
            self.asked.append(probe)
            self.fresh_asked += 1
            return probe
        if not self.asked:
            raise RuntimeError("no cosine question left to ask")
        self.repeats_asked += 1
        chosen = self.asked[self._rng.randrange(len(self.asked))]
        return Probe(chosen.message, chosen.entry_id, "cosine", repeat=True)

    def next(self, kind: str) -> Probe:
        return self.exact() if kind == "exact" else self.cosine()

    @property
    def has_cosine(self) -> bool:
        return bool(self.fresh or self.asked)

    def alternate(self, turn: int) -> Probe:
        """Exact and cosine in turn; exact only once no cosine variant is left to ask."""
        return self.cosine() if turn % 2 and self.has_cosine else self.exact()

    def refuse(self, probe: Probe) -> None:
        """A variant the guard did not answer direct from its entry (though its lookup did) is
        never asked again."""
        if probe.message not in self.refused:
            self.refused.add(probe.message)
            self.asked = [p for p in self.asked if p.message != probe.message]

    def tally(self) -> str:
        asked = self.fresh_asked + self.repeats_asked
        share = self.repeats_asked / asked if asked else 0.0
        return (
            f"cosine texts asked {asked}: {self.fresh_asked} for the first time, {self.repeats_asked} "
            f"repeated ({share:.0%}); {len(self.refused)} variants not answered direct"
        )


_MISS_WORDS = (
    "aquarium", "bicycle", "cathedral", "dolphin", "eclipse", "falcon", "glacier", "harbour",
    "igloo", "jasmine", "kangaroo", "lantern", "meteor", "nectarine", "orchestra", "pyramid",
    "quartz", "reindeer", "saxophone", "tornado", "umbrella", "volcano", "walrus", "xylophone",
    "yoghurt", "zeppelin", "asteroïde", "boulangerie", "citrouille", "dentelle", "écureuil",
    "fromagerie", "girafe", "hérisson", "imprimante", "jonquille", "kiosque", "libellule",
    "montgolfière", "noisette", "ornithorynque", "parapluie", "quincaillerie", "renard",
    "sous-marin", "tournesol", "usine", "violoncelle", "wagon", "yacht", "zèbre", "marathon",
    "telescope", "pharmacy", "compass", "vineyard", "lighthouse", "blizzard", "carnival",
    "labyrinth", "mosaic", "origami", "pendulum", "satellite", "trombone", "waterfall",
)  # fmt: skip
_MISS_FORMS = (
    "Why would a {0} need a {1} before the {2} reaches {n} {3}?",
    "Pourquoi {0} et {1} parlent-ils de {2} quand {n} {3} arrivent ?",
    "What happens to the {0} of a {1} if {n} {2} meet a {3}?",
    "Comment ranger {n} {0} dans {1} sans déranger {2} ni {3} ?",
)


def miss_questions(count: int, seed: int = SEED) -> list[str]:
    """Questions far from each other and from every FAQ entry: the guard finds nothing to serve."""
    rng = random.Random(seed + 1)
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < count:
        words = rng.sample(_MISS_WORDS, 4)
        text = rng.choice(_MISS_FORMS).format(*words, n=rng.randrange(2, 10_000))
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


_IMPORT_PLACES = ("Lyon", "Genève", "Québec", "Dakar", "Lille", "Montréal", "Nantes", "Liège")


def import_lines(count: int) -> list[str]:
    """A JSON Lines file of `count` new validated entries, none close to the bench FAQ."""
    lines = []
    for n in range(count):
        place = _IMPORT_PLACES[n % len(_IMPORT_PLACES)]
        entry = {
            "question": f"Sous quel code d'entrepôt le lot d'import n°{n} est-il rangé à {place} ?",
            "answer": f"Le lot {n} est rangé sous le code IMP-{n:05d}.",
            "tags": ["bench-import"],
        }
        lines.append(json.dumps(entry, ensure_ascii=False))
    return lines


# ------------------------------------------------------------------ the start-up database

_FRACTION = re.compile(r"\.(\d+)")


def _vary(value: Any, n: int) -> Any:
    """A timestamp like `value` and distinct from it for each `n`, in the same format, so that
    a reader that caches or shares parsed values gets no help from the copies."""
    if isinstance(value, str):
        match = _FRACTION.search(value)
        if match:
            digits = len(match[1])
            return f"{value[: match.start(1)]}{n % 10**digits:0{digits}d}{value[match.end(1) :]}"
        return value
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value - n
    if isinstance(value, float):
        return value - n * 1e-3
    return value


def clone_entries(database: Path, count: int, seed: int = SEED) -> tuple[str, int]:
    """Add `count` copies of the one entry a tree's own service stored in `database`, each with
    its own question, exact-match key, dates and a random unit vector of the same width: the
    tree's schema and date format, whatever they are. Returns (embedding model id, dimension)."""
    rng = np.random.default_rng(seed)
    with sqlite3.connect(database) as db:
        db.row_factory = sqlite3.Row
        rows = db.execute("SELECT * FROM responses ORDER BY id").fetchall()
        if len(rows) != 1:
            raise RuntimeError(f"expected the one template entry in {database}, found {len(rows)}")
        template = dict(rows[0])
        blob = template["embedding"]
        vector = np.frombuffer(blob, dtype="<f4")
        if len(blob) % 4 or not 0.98 < float(np.linalg.norm(vector)) < 1.02:
            raise RuntimeError("the stored vector is not a little-endian float32 unit vector")
        dimension = vector.size
        columns = [name for name in template if name != "id"]
        dated = [name for name in columns if name.endswith("_at") or name.endswith("_ts")]
        insert = f"INSERT INTO responses ({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)})"
        batch = 10_000
        for start in range(0, count, batch):
            size = min(batch, count - start)
            vectors = rng.standard_normal((size, dimension), dtype=np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            values = []
            for offset in range(size):
                n = start + offset + 1
                row = dict(template)
                row["question"] = f"{template['question']} (copie {n})"
                row["key_hash"] = f"{n:064x}"
                row["embedding"] = vectors[offset].astype("<f4").tobytes()
                for name in dated:
                    row[name] = _vary(row[name], n)
                values.append(tuple(row[name] for name in columns))
            db.executemany(insert, values)
        db.commit()
    return str(template["embedding_model"]), int(dimension)


def stored_model(database: Path) -> str:
    """The embedding model id stored beside the vectors of a tree's database."""
    with sqlite3.connect(database) as db:
        row = db.execute("SELECT embedding_model FROM responses ORDER BY id LIMIT 1").fetchone()
    if row is None:
        raise RuntimeError(f"no entry in {database}")
    return str(row[0])


def copy_database(source: Path, target: Path) -> None:
    """A consistent copy of a SQLite file (its WAL included) through the backup API."""
    with sqlite3.connect(source) as src, sqlite3.connect(target) as dst:
        src.backup(dst)
