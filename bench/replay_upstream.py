"""The scripted LLM of bench/replay.py: a real OpenAI-compatible streaming upstream on loopback.

It knows the need of every question of the stream (`Script.need_of`) and the answer of every need.
Each arm of the bench has its own path prefix (`/{arm}/v1/chat/completions`), so that the tokens
and the choices of each arm are counted apart. For one request it:
  * judges, when asked as the LLM judge ("Stored answer: … New question: …", verify/llm_judge.py):
    YES when the stored answer is of the question's need, NO otherwise;
  * otherwise reads the grounding in the system prompt (agent/prompt.py: each stored answer carries
    its "[need N]" tag, since the answers are this script's own) and reuses the one of the
    question's need when there is one, or else writes the need's canonical answer (a miss);
  * errs a fixed share of the time (`error_rate`, drawn per question from the seed, so that every
    arm meets the same errors): it reuses a wrong grounding answer when one is given; the judge
    says the opposite with `judge_error`;
  * when the request offers a tool named `use_memory_answer`, reuses by calling it with the chosen
    entry's id (streamed as tool-call fragments, as providers do) instead of writing the text; the
    id is read from the grounding block, or else from the answers the arm learned (`ArmState.entries`).
Usage is estimated (characters / 4) and sent in the last chunk, as `stream_options.include_usage` asks.
"""

from __future__ import annotations

import json
import random
import re
import threading
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from tests.serving import ThreadedServer

from bench.upstream import chunk, chunk_base
from memory_guard.core.normalize import normalize_question

TOOL = "use_memory_answer"
NEED_TAG = re.compile(r"\[need (\d+)\]")
_JUDGE = re.compile(r"Stored answer:\s*(?P<answer>.*?)\n\s*New question:\s*(?P<question>.*)\s*$", re.DOTALL)
_ENTRY_ID = re.compile(r"\b(?:entry_id|entry|entrée|id)\b\s*[:=#]?\s*(\d+)", re.IGNORECASE)
_QUESTION_HEAD = re.compile(r"^#+.*\bquestion\b", re.IGNORECASE)  # "### Entrée 12 : question proche…"


def need_in(text: str) -> int | None:
    """The need an answer is of, from its tag; None for an answer without one."""
    found = NEED_TAG.search(text)
    return int(found.group(1)) if found else None


def tokens(text: str) -> int:
    return max(1, len(text) // 4)


@dataclass(frozen=True, slots=True)
class Block:
    """One stored answer given as grounding."""

    answer: str
    need: int
    question: str
    entry_id: int | None


@dataclass(slots=True)
class Script:
    need_of: dict[str, int]  # question text -> need id
    answers: dict[int, str]  # need id -> its canonical answer
    seed: int
    error_rate: float = 0.05
    judge_error: float = 0.05
    _by_key: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        # The judge may be handed the question as the service normalized or trimmed it.
        self._by_key = {normalize_question(text): need for text, need in self.need_of.items()}

    def need(self, question: str) -> int | None:
        found = self.need_of.get(question)
        return found if found is not None else self._by_key.get(normalize_question(question))

    def errs(self, kind: str, question: str, rate: float) -> bool:
        return random.Random(f"{self.seed}:{kind}:{question}").random() < rate


@dataclass(slots=True)
class Action:
    # fresh, reuse_right, reuse_wrong, tool_right, tool_wrong, tool_result, judge_yes, judge_no, unknown
    kind: str
    question: str
    need: int | None
    chosen: Block | None = None
    erred: bool = False  # the scripted error: a wrong grounding answer reused, a judge verdict flipped


@dataclass(slots=True)
class ArmState:
    """What one arm cost and what the script did for it."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    last: dict[str, Action] = field(default_factory=dict)  # question -> the last agent action on it
    judged: list[Action] = field(default_factory=list)  # every judge verdict, in order
    entries: dict[str, int] = field(default_factory=dict)  # answer text -> an entry learned with it

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True, slots=True)
class Reply:
    text: str = ""
    tool_args: dict[str, Any] | None = None


def grounding(system: str) -> list[Block]:
    """The stored answers of the system prompt, best first: each tagged line is one, and the text
    since the previous one holds its question (under a "### … question …" head) and maybe its id
    ("Entrée 12", "entry 12", "id: 12")."""
    blocks: list[Block] = []
    since: list[str] = []
    for line in system.splitlines():
        need = need_in(line)
        if need is None:
            since.append(line)
            continue
        heads = [i for i, text in enumerate(since) if _QUESTION_HEAD.match(text)]
        question = since[heads[-1] + 1].strip() if heads and heads[-1] + 1 < len(since) else ""
        ids = [int(m.group(1)) for text in since for m in _ENTRY_ID.finditer(text)]
        blocks.append(Block(line.strip(), need, question, ids[-1] if ids else None))
        since = []
    return blocks


def _content(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):  # content parts
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content or "")


def _tool_argument(tools: list[Any]) -> str | None:
    """The argument name of the `use_memory_answer` tool when the request offers it."""
    for tool in tools:
        function = tool.get("function", {}) if isinstance(tool, dict) else {}
        if function.get("name") == TOOL:
            properties = (function.get("parameters") or {}).get("properties") or {}
            required = (function.get("parameters") or {}).get("required") or []
            return "entry_id" if "entry_id" in properties else next(iter(required or properties), "entry_id")
    return None


def decide(script: Script, arm: ArmState, body: dict[str, Any]) -> tuple[Reply, Action]:
    """What the scripted LLM answers to one chat-completions request."""
    messages = [m for m in body.get("messages", []) if isinstance(m, dict)]
    users = [_content(m) for m in messages if m.get("role") == "user"]
    last = users[-1] if users else ""
    judged = _JUDGE.search(last)
    if judged is not None:
        question = judged.group("question").strip()
        need = script.need(question)
        serves = need is not None and need_in(judged.group("answer")) == need
        flipped = script.errs("judge", f"{question}\x1f{judged.group('answer')[:40]}", script.judge_error)
        serves = serves != flipped
        kind = "judge_yes" if serves else "judge_no"
        reply = Reply("YES: same need" if serves else "NO: another need")
        return reply, Action(kind, question, need, erred=flipped)
    need = script.need(last)
    if messages and messages[-1].get("role") == "tool":
        earlier = arm.last.get(last)
        text = earlier.chosen.answer if earlier and earlier.chosen else _content(messages[-1])
        return Reply(text), Action("tool_result", last, need, earlier.chosen if earlier else None)
    if need is None:
        return Reply("[need 0] I do not know this question."), Action("unknown", last, None)
    system = "\n".join(_content(m) for m in messages if m.get("role") == "system")
    blocks = grounding(system)
    wrong = [b for b in blocks if b.need != need]
    right = [b for b in blocks if b.need == need]
    chosen: Block | None = right[0] if right else None
    if wrong and script.errs("reuse", last, script.error_rate):
        chosen = wrong[0]
    if chosen is None:
        return Reply(script.answers[need]), Action("fresh", last, need)
    verdict = "right" if chosen.need == need else "wrong"
    argument = _tool_argument(body.get("tools") or [])
    entry_id = chosen.entry_id if chosen.entry_id is not None else arm.entries.get(chosen.answer)
    if argument is not None and entry_id is not None:
        action = Action(f"tool_{verdict}", last, need, chosen, erred=chosen.need != need)
        return Reply(tool_args={argument: entry_id}), action
    return Reply(chosen.answer), Action(f"reuse_{verdict}", last, need, chosen, erred=chosen.need != need)


def _pieces(text: str, n: int = 4) -> list[str]:
    size = max(1, -(-len(text) // n))
    return [text[i : i + size] for i in range(0, len(text), size)]


async def _stream(reply: Reply, model: str, usage: dict[str, int] | None) -> AsyncIterator[bytes]:
    base = chunk_base(model)
    yield chunk(base, {"role": "assistant", "content": ""}, None)
    if reply.tool_args is not None:
        call_id = f"call_{uuid.uuid4().hex[:24]}"
        head = {"index": 0, "id": call_id, "type": "function", "function": {"name": TOOL, "arguments": ""}}
        yield chunk(base, {"tool_calls": [head]}, None)
        for piece in _pieces(json.dumps(reply.tool_args)):
            yield chunk(base, {"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}, None)
        yield chunk(base, {}, "tool_calls")
    else:
        for piece in _pieces(reply.text):
            yield chunk(base, {"content": piece}, None)
        yield chunk(base, {}, "stop")
    if usage is not None:
        yield f"data: {json.dumps({**base, 'choices': [], 'usage': usage})}\n\n".encode()
    yield b"data: [DONE]\n\n"


class ScriptedUpstream:
    """The scripted LLM served by uvicorn in a thread; `base_url(arm)` is an arm's LLM_BASE_URL."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.arms: dict[str, ArmState] = {}
        self._lock = threading.Lock()
        self._server: ThreadedServer | None = None
        route = Route("/{arm}/v1/chat/completions", self._completions, methods=["POST"])
        self.app = Starlette(routes=[route])

    def arm(self, name: str) -> ArmState:
        with self._lock:
            return self.arms.setdefault(name, ArmState())

    def base_url(self, arm: str) -> str:
        assert self._server is not None, "start() first"
        self.arm(arm)
        return f"http://127.0.0.1:{self._server.port}/{arm}/v1"

    def start(self) -> ScriptedUpstream:
        self._server = ThreadedServer(self.app)
        self._server.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
        self._server = None

    async def _completions(self, request: Request) -> Response:
        body = json.loads(await request.body())
        if not isinstance(body, dict):
            return JSONResponse({"error": {"message": "not a JSON object", "type": "invalid_request"}}, 400)
        state = self.arm(str(request.path_params["arm"]))
        reply, action = decide(self.script, state, body)
        prompt = sum(tokens(_content(m)) for m in body.get("messages", []) if isinstance(m, dict))
        prompt += tokens(json.dumps(body["tools"])) if body.get("tools") else 0
        completion = tokens(reply.text if reply.tool_args is None else json.dumps(reply.tool_args))
        with self._lock:
            state.prompt_tokens += prompt
            state.completion_tokens += completion
            state.calls += 1
            state.kinds[action.kind] += 1
            if action.kind.startswith("judge"):
                state.judged.append(action)
            else:
                state.last[action.question] = action
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
        include = bool((body.get("stream_options") or {}).get("include_usage"))
        model = str(body.get("model") or "scripted")
        if not body.get("stream"):
            message = {"role": "assistant", "content": reply.text}
            choice = {"index": 0, "message": message, "finish_reason": "stop", "logprobs": None}
            return JSONResponse(
                {"object": "chat.completion", "model": model, "choices": [choice], "usage": usage}
            )
        return StreamingResponse(
            _stream(reply, model, usage if include else None), media_type="text/event-stream"
        )
