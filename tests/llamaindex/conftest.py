"""LlamaIndex tests run offline. llama-index-core and workflows send no telemetry
(checked in the installed sources); the global default model and embedder are
disabled, so anything that falls back to ``Settings.llm``/``embed_model`` gets
LlamaIndex's own mocks instead of reaching for the network."""

from __future__ import annotations

from llama_index.core import Settings

Settings.llm = None
Settings.embed_model = None
