"""Replay a stream of questions through the real service: how often a need asked again is answered
from memory, how often wrongly, and what the upstream costs, against two baselines (issue 14).

    python bench/replay.py --data DIR [--size 3600] [--seed 7] [--setting KEY=VALUE ...]
    python bench/replay.py --quick            # a few hundred questions of the template bank

The stream (bench/replay_stream.py): clusters of same-answer wordings from the held-out templates
of training/make_pairs.py and from QQP's eval half (`qqp_pairs.jsonl.gz` in the folder given by
--data; without it, the templates only), with near misses that need another answer, each need
asked again later in new words. Every question goes through `POST /chat` (SSE, a client key) of
three `memory-guard serve` processes (of this tree, or of the one --tree names, so that a commit
exported elsewhere gives the figures before a change), each with its own temporary SQLite file and
the local models, configured through environment variables only:
  memory-guard    the service as configured (its defaults and any --setting);
  no-memory       the same with `cache: bypass` on every request: every question is a miss;
  threshold-0.95  MEMORY_VERIFIER=off, MEMORY_DIRECT_THRESHOLD=0.95, no judge: a score-only cache,
                  what other gateways do.
The upstream is scripted (bench/replay_upstream.py): it answers a miss with the need's answer,
reuses the grounding answer of the question's need, and errs 5% of the time (a wrong grounding
answer reused, a wrong judge verdict). An answer is wrong from memory when it was served direct,
or reused from grounding, and is of another need than the question's. Printed by tenths of the
stream, the three arms side by side, then a summary over the last half.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # the training bank and the test harness are reused here
    sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
from tests.server import parse_sse  # noqa: E402

from bench.replay_stream import Question, Stream, build_stream  # noqa: E402
from bench.replay_tally import (  # noqa: E402
    TENTH_HEAD,
    Outcome,
    Tally,
    summary_lines,
    tenth_lines,
    wrong_examples,
)
from bench.replay_upstream import ArmState, Script, ScriptedUpstream, need_in  # noqa: E402
from bench.service import imported_from, tree_process  # noqa: E402

CLIENT_KEY = "replay-client-key"
TENANT = "replay"
ARMS = ("memory-guard", "no-memory", "threshold-0.95")
QUICK_SIZE = 300


@dataclass(frozen=True, slots=True)
class Arm:
    name: str
    cache: str  # the `cache` field of every /chat request
    overrides: dict[str, str] = field(default_factory=dict)  # environment variables of its service


def settings_source(tree: Path) -> Path:
    """The tree's settings module: a package since the outdated names moved apart, a file before."""
    package = tree / "src" / "memory_guard" / "settings" / "__init__.py"
    return package if package.is_file() else tree / "src" / "memory_guard" / "settings.py"


def judge_off(tree: Path) -> dict[str, str]:
    """The judge switched off, as the tree's settings spell it (MEMORY_JUDGE, or the older
    MEMORY_JUDGE_ENABLED); an unknown variable would be ignored, a replaced one refused."""
    settings = settings_source(tree).read_text(encoding="utf-8")
    if re.search(r"^\s*memory_judge\s*:", settings, re.MULTILINE):
        return {"MEMORY_JUDGE": "off"}
    return {"MEMORY_JUDGE_ENABLED": "false"} if "memory_judge_enabled:" in settings else {}


def arms_of(names: Sequence[str], settings: dict[str, str], tree: Path = ROOT) -> list[Arm]:
    known = {
        "memory-guard": Arm("memory-guard", "use", dict(settings)),
        "no-memory": Arm("no-memory", "bypass"),
        "threshold-0.95": Arm(
            "threshold-0.95",
            "use",
            {"MEMORY_VERIFIER": "off", "MEMORY_DIRECT_THRESHOLD": "0.95", **judge_off(tree)},
        ),
    }
    return [known[name] for name in names]


def service_env(arm: Arm, db: Path, llm_url: str, common: dict[str, str]) -> dict[str, str]:
    """The service's settings, as environment variables only: any source tree reads them."""
    return {
        "MEMORY_DB_PATH": str(db),
        "API_KEYS": f"{CLIENT_KEY}:{TENANT}:client",
        "LLM_BASE_URL": llm_url,
        "LLM_API_KEY": "sk-replay",
        "LLM_MAX_RETRIES": "0",
        "LLM_TIMEOUT_S": "30",
        **common,
        **arm.overrides,
    }


def ask(client: httpx.Client, arm: Arm, state: ArmState, question: Question) -> Outcome:
    """One question through POST /chat; what was answered, from where, at what upstream cost."""
    spent, verdicts = state.tokens, len(state.judged)
    with client.stream("POST", "/chat", json={"message": question.text, "cache": arm.cache}) as response:
        lines = [line.rstrip("\r") for line in response.iter_lines()]
    tokens = state.tokens - spent
    judged = " ".join(f"{a.kind}{'(flipped)' if a.erred else ''}" for a in state.judged[verdicts:])
    if response.status_code != 200:
        return Outcome("error", None, False, tokens, action=f"http {response.status_code}")
    events = parse_sse(lines)
    cached = next((e.data for e in events if e.event == "cached_response"), None)
    done = next((e.data for e in events if e.event == "done"), None)
    if done is None:
        failure = next((e.data for e in events if e.event == "error"), {})
        return Outcome("error", None, False, tokens, action=str(failure.get("code", "no done")))
    decision = str(done["decision"])
    if cached is not None:
        matched = str(cached.get("matched_question", ""))
        return Outcome(
            decision, need_in(str(cached["answer"])), True, tokens, matched, judged, cached["score"]
        )
    answer = "".join(str(e.data.get("content", "")) for e in events if e.event == "text")
    if done.get("learned_entry_id") is not None:
        state.entries[answer] = int(done["learned_entry_id"])  # for a `use_memory_answer` call later
    action = state.last.get(question.text)
    kind = " ".join(filter(None, (judged, action.kind if action else "")))
    reused = action is not None and action.kind.startswith(("reuse_", "tool_"))
    matched = action.chosen.question if action and action.chosen else ""
    return Outcome(decision, need_in(answer), reused, tokens, matched, kind)


@contextmanager
def services(
    arms: Sequence[Arm],
    upstream: ScriptedUpstream,
    common: dict[str, str],
    tree: Path,
    keep_db: Path | None = None,
) -> Iterator[list[httpx.Client]]:
    """A fresh `memory-guard serve` of `tree` per arm (own temporary SQLite file), and a client of
    each; `keep_db` receives the SQLite files once the services have stopped (their lookup logs say
    why each answer was served)."""
    with tempfile.TemporaryDirectory(prefix="mg-replay-") as tmp, ExitStack() as stack:
        imported_from(tree, Path(tmp))  # raises unless that tree's code is the one run
        if keep_db is not None:
            # Registered first, so it runs last: after every service has closed its database.
            stack.callback(_copy_databases, Path(tmp), keep_db)
        clients = []
        for arm in arms:
            env = service_env(arm, Path(tmp) / f"{arm.name}.db", upstream.base_url(arm.name), common)
            server = stack.enter_context(tree_process(tree, env, Path(tmp)))
            headers = {"Authorization": f"Bearer {CLIENT_KEY}"}
            client = httpx.Client(base_url=server.base_url, headers=headers, timeout=120)
            clients.append(stack.enter_context(client))
        yield clients


def _copy_databases(source: Path, target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    for db in source.glob("*.db"):
        shutil.copy2(db, target / db.name)


def replay(
    stream: Stream,
    arms: Sequence[Arm],
    script: Script,
    common: dict[str, str],
    tree: Path = ROOT,
    keep_db: Path | None = None,
) -> list[Tally]:
    """Every question to every arm (the arms in step, one thread each), printed by tenths."""

    def emit(*lines: str) -> None:
        for line in lines:
            print(line, flush=True)

    upstream = ScriptedUpstream(script).start()
    tallies = [Tally(arm.name) for arm in arms]
    try:
        with (
            services(arms, upstream, common, tree, keep_db) as clients,
            ThreadPoolExecutor(len(arms)) as pool,
        ):
            states = [upstream.arm(arm.name) for arm in arms]
            emit(TENTH_HEAD)
            size = len(stream.questions)
            bounds = [round(size * k / 10) for k in range(11)]
            started = time.perf_counter()
            for question in stream.questions:
                jobs = [
                    pool.submit(ask, client, arm, state, question)
                    for client, arm, state in zip(clients, arms, states, strict=True)
                ]
                for tally, job in zip(tallies, jobs, strict=True):
                    outcome = job.result()
                    stored = script.need(outcome.matched) if outcome.matched else None
                    tally.outcomes.append(dataclasses.replace(outcome, stored_need=stored))
                done = question.index + 1
                if done in bounds[1:]:
                    tenth = bounds.index(done)
                    emit(*tenth_lines(tenth, stream, tallies, bounds[tenth - 1], done))
            emit(f"replayed {size} questions on {len(arms)} arms in {time.perf_counter() - started:.0f} s")
        kinds = {name: state.kinds for name, state in upstream.arms.items()}
        emit(*summary_lines(stream, tallies, kinds))
        emit("wrong answers from memory (first ones):")
        for tally in tallies:
            emit(*wrong_examples(stream, tally, 6))
    finally:
        upstream.stop()
    return tallies


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--data", type=Path, help=f"folder holding {'qqp_pairs.jsonl.gz'} (else templates only)"
    )
    parser.add_argument("--size", type=int, default=3600, help="questions in the stream (about)")
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_SIZE} questions, for a check")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--arms", default=",".join(ARMS), help=f"comma-separated, of {', '.join(ARMS)}")
    parser.add_argument(
        "--setting",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a setting of the memory-guard arm",
    )
    parser.add_argument(
        "--embedder", choices=("local", "hashing"), default="local", help="EMBEDDING_PROVIDER of every arm"
    )
    parser.add_argument("--embedding-model", help="EMBEDDING_MODEL of every arm (default: the tree's own)")
    parser.add_argument(
        "--tree",
        type=Path,
        default=ROOT,
        help="the source tree whose `memory-guard serve` runs (another commit exported elsewhere; "
        "default this one)",
    )
    parser.add_argument(
        "--keep-db", type=Path, help="a folder to copy each arm's SQLite file into when the run ends"
    )
    parser.add_argument("--error-rate", type=float, default=0.05, help="share of wrong reuses by the LLM")
    parser.add_argument("--judge-error", type=float, default=0.05, help="share of wrong judge verdicts")
    args = parser.parse_args(argv)
    names = [name.strip() for name in args.arms.split(",") if name.strip()]
    if not names or any(name not in ARMS for name in names):
        parser.error(f"--arms takes names among {', '.join(ARMS)}")
    args.arm_names = names
    if any("=" not in item for item in args.setting):
        parser.error("--setting takes KEY=VALUE")
    args.settings = {k.strip().upper(): v for k, _, v in (item.partition("=") for item in args.setting)}
    if not settings_source(args.tree).is_file():
        parser.error("--tree must be a memory-guard source tree (with src/memory_guard)")
    if args.data is not None and not (args.data / "qqp_pairs.jsonl.gz").is_file():
        parser.error("--data must be a folder holding qqp_pairs.jsonl.gz")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    size = QUICK_SIZE if args.quick else args.size
    stream = build_stream(size, args.seed, args.data)
    print(stream.describe())
    print(
        f"arms: {', '.join(args.arm_names)}; embedder={args.embedder}; seed={args.seed}; "
        f"LLM error rate={args.error_rate}; judge error rate={args.judge_error}; settings={args.settings}; "
        f"tree={'this one' if args.tree == ROOT else args.tree.name}",
        flush=True,
    )
    answers = {need.id: need.answer for need in stream.needs.values()}
    script = Script(stream.need_of(), answers, args.seed, args.error_rate, args.judge_error)
    common = {"EMBEDDING_PROVIDER": args.embedder}
    if args.embedding_model:
        common["EMBEDDING_MODEL"] = args.embedding_model
    arms = arms_of(args.arm_names, args.settings, args.tree)
    replay(stream, arms, script, common, args.tree, args.keep_db)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
