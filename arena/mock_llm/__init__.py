"""A local mock LLM server: the three wire protocols, plausible moves, seeded faults.

Endpoints (raw ASGI, served by uvicorn):

    POST /v1/chat/completions, /chat/completions      OpenAI Chat Completions
    POST /v1/messages                                 Anthropic Messages
    POST /v1beta/models/{model}:generateContent       Gemini generateContent
    GET  /stats                                       requests served, faults injected

The reply reads the arena's machine-readable prompt lines in the last user
message: `REPLY KEY: move|orders|setup`, `LEGAL MOVES: m1, m2, ...` (one is
picked with the seeded rng), and for the battle `YOUR SQUADS: A1 A2 ...`,
`ENEMY SQUADS: B1 ...`, `MAP SIZE: 45`. It answers a JSON object
`{"<key>": ..., "say": ..., "notes": ...}`: a legal move, random valid battle
orders, a valid random Stratego setup, or without a list a plausible token.

Faults are drawn per request at seeded rates (`parse_faults`): 429 (with a
50 ms retry hint), 500, 529, hang (no answer until the client gives up or
the server stops), slow (answers after slow_ms), garbage (a 200 whose body is
not JSON), truncated (stop reason length and a cut reply), prose (no move at
all), illegal (a well-formed reply whose move is not legal).
"""

from __future__ import annotations

from arena.mock_llm.answers import (
    FAULTS,
    ILLEGAL_MOVE,
    STRATEGO_PIECES,
    PromptLines,
    check_faults,
    invent,
    parse_faults,
    reply_text,
)
from arena.mock_llm.server import MockLLM, build_app, main_mock_llm, serve, serving
from arena.mock_llm.shapes import RETRY_AFTER_S, respond

__all__ = [
    "FAULTS",
    "ILLEGAL_MOVE",
    "RETRY_AFTER_S",
    "STRATEGO_PIECES",
    "MockLLM",
    "PromptLines",
    "build_app",
    "check_faults",
    "invent",
    "main_mock_llm",
    "parse_faults",
    "reply_text",
    "respond",
    "serve",
    "serving",
]
