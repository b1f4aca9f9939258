"""LlamaIndex tests run offline: no telemetry, no default model from the network."""

from __future__ import annotations

import os

os.environ.setdefault("LLAMA_INDEX_DISABLE_TELEMETRY", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "false")
os.environ.setdefault("OPENAI_API_KEY", "sk-offline-tests-never-call-the-network")
