# memory-guard: the service on its embedded defaults (SQLite in /app/data, local ONNX model).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /app

# The exact versions the tests ran against (requirements.lock; docs/DEVELOPMENT.md says how to
# regenerate it), in a layer of their own that only a change of the lock rebuilds.
COPY requirements.lock ./
RUN pip install -r requirements.lock

COPY pyproject.toml README.md ./
COPY src ./src
# --no-deps: nothing beyond the lock; `pip check` fails the build if the lock misses a dependency.
RUN pip install --no-deps . && pip check \
    && useradd --create-home --uid 10001 guard && mkdir -p /app/data && chown guard /app/data

USER guard
# A named volume mounted here starts as a copy of this folder, owned by guard: no chown on the host.
VOLUME ["/app/data"]
EXPOSE 8000
# Listening beyond loopback needs keys. With no API_KEYS, the first start writes one staff key to
# /app/data/api_keys (never logged; `docker compose exec memory-guard cat /app/data/api_keys`) and
# every start uses that file. With API_KEYS set, the file is not read.
CMD ["memory-guard", "serve", "--host", "0.0.0.0", "--port", "8000", "--key-file", "/app/data/api_keys"]
HEALTHCHECK --interval=30s --timeout=5s CMD python -c "import urllib.request,sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/readyz').status != 200)"
