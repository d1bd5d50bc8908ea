"""Whether the LLM judge runs: MEMORY_JUDGE, and whether there is an upstream to ask.

The one place that decides, so that the service, its start-up log and the stats agree.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from memory_guard.settings import Settings

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class JudgeSwitch:
    on: bool
    why: str  # for the start-up log and the staff's stats

    def announce(self, settings: Settings) -> None:
        # Asked for explicitly yet off: the operator expects judged answers and gets none.
        level = logging.WARNING if settings.memory_judge == "on" and not self.on else logging.INFO
        logger.log(level, "the LLM judge is %s: %s", "on" if self.on else "off", self.why)


def judge_switch(settings: Settings) -> JudgeSwitch:
    """On with MEMORY_JUDGE=on, or =auto, when an LLM upstream is configured, which is what the
    answering model needs too (Settings.llm_configured: its client refuses every call without one,
    as the judge's would)."""
    mode = settings.memory_judge
    if mode == "off":
        return JudgeSwitch(False, "MEMORY_JUDGE=off")
    if not settings.llm_configured:
        return JudgeSwitch(
            False, f"MEMORY_JUDGE={mode} and no LLM upstream is configured (LLM_API_KEY is empty)"
        )
    if mode == "on":
        return JudgeSwitch(True, "MEMORY_JUDGE=on")
    how = "LLM_API_KEY is set" if settings.llm_api_key.get_secret_value() else "LLM_BASE_URL, with no key"
    return JudgeSwitch(True, f"MEMORY_JUDGE=auto and an LLM upstream is configured ({how})")
