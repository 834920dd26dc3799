"""What sits in a seat, one module a kind, each answering the seat protocol.

scripted   a baseline: the game's own, or random
mock       an in-process stand-in for a model, with seeded faults
llm        a model behind a provider's wire protocol
cache      the response cache a model's seat asks first (`[run] response_cache`)
breaker    each model endpoint's circuit
program    a sandboxed program (`arena.programs`)
factory    a session's one seat maker: from a policy to the seat it plays through
"""
