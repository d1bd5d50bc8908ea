"""Ask memory-guard with the official `openai` client, streaming, and say where the answer came from.

    pip install openai
    python examples/openai_client.py "Quelle est la durée de la garantie de parfait achèvement ?"

MEMORY_GUARD_URL (default http://127.0.0.1:8000) and MEMORY_GUARD_KEY (a key of API_KEYS; any text
in dev mode) say which service to ask; MEMORY_GUARD_PROJECT, when set, is the memory scope's project.
Ask the same question twice: the second answer comes from memory (`direct`), with no LLM call.
"""

from __future__ import annotations

import os
import sys

from openai import OpenAI


def main(question: str) -> None:
    client = OpenAI(
        base_url=f"{os.environ.get('MEMORY_GUARD_URL', 'http://127.0.0.1:8000')}/v1",
        api_key=os.environ.get("MEMORY_GUARD_KEY", "dev"),
    )
    headers = {"X-Memory-Guard-Project": os.environ.get("MEMORY_GUARD_PROJECT", "")}
    raw = client.chat.completions.with_raw_response.create(
        model="gpt-4o-mini",  # echoed back: the service answers with its configured LLM or from memory
        messages=[{"role": "user", "content": question}],
        stream=True,
        extra_headers=headers,
    )
    # The guard decides before the LLM runs, so the decision comes with the headers.
    print(f"[decision: {raw.headers['x-memory-guard-decision']}]", file=sys.stderr)
    for chunk in raw.parse():
        if chunk.choices and chunk.choices[0].delta.content:
            print(chunk.choices[0].delta.content, end="", flush=True)
    print()


if __name__ == "__main__":
    main(" ".join(sys.argv[1:]) or "Quelle est la durée de la garantie de parfait achèvement ?")
