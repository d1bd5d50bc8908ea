"""The stores write SQL once, with sqlite3's `?` placeholders; psycopg takes `%s`.

Translating in one place keeps one text per query for both backends. `?` becomes `%s` only
outside string literals, quoted identifiers and comments; every `%` becomes `%%`, literals
included, since psycopg reads its placeholders across the whole text. Not understood, and
never written by the stores: PostgreSQL's dollar-quoted strings, `E'...'` escapes and the
jsonb operators `?`, `?|`, `?&` (write `jsonb_exists` and friends instead).
"""

from __future__ import annotations

from functools import lru_cache

_CLOSERS = {"'": "'", '"': '"'}


@lru_cache(maxsize=4096)  # the stores build a few hundred distinct texts, each used again and again
def to_pyformat(sql: str) -> str:
    out: list[str] = []
    i, n = 0, len(sql)
    while i < n:
        char = sql[i]
        if char in _CLOSERS:  # a literal or a quoted identifier; a doubled quote escapes itself
            end = i + 1
            while end < n:
                if sql[end] == char:
                    if end + 1 < n and sql[end + 1] == char:
                        end += 2
                        continue
                    break
                end += 1
            out.append(sql[i : end + 1].replace("%", "%%"))
            i = end + 1
        elif sql.startswith("--", i):
            end = sql.find("\n", i)
            end = n if end < 0 else end
            out.append(sql[i:end].replace("%", "%%"))
            i = end
        elif sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(sql[i:end].replace("%", "%%"))
            i = end
        else:
            out.append("%s" if char == "?" else "%%" if char == "%" else char)
            i += 1
    return "".join(out)
