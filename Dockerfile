# memory-guard: the service on its embedded defaults (SQLite in /app/data, local ONNX model).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app

COPY pyproject.toml README.md ./
COPY src ./src
RUN pip install . && useradd --create-home --uid 10001 guard && mkdir -p /app/data && chown guard /app/data

USER guard
VOLUME ["/app/data"]
EXPOSE 8000
# Listening beyond loopback needs API_KEYS: the service refuses to start in dev mode on 0.0.0.0.
CMD ["memory-guard", "serve", "--host", "0.0.0.0", "--port", "8000"]
HEALTHCHECK --interval=30s --timeout=5s CMD python -c "import urllib.request,sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/readyz').status != 200)"
