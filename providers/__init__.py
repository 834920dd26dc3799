"""LLM clients over raw httpx: OpenAI-compatible, Anthropic and Gemini."""
