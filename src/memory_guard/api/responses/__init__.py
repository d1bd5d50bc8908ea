"""The models of every JSON answer the API gives, one module per domain.

Domain code returns its own objects (or their `to_public()` dicts); a route maps them onto these
models, which FastAPI serializes and the OpenAPI document describes. `extra="forbid"` keeps the two in
step: a field that domain code adds without a model field fails the tests instead of vanishing.
"""
