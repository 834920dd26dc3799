"""The league: who plays whom, and playing it; what the results say is `arena.results`.

schedule   who plays whom, on which seed, in which order
plan       the config checked and resolved (a resume's too: what a run folder keeps for
           good); what each game's episodes need
run        the producer, the workers, the signal watcher and the one writer
store      the SQLite store a resumed run continues from; `arena rebuild` re-creates it
lock       one run per folder
preflight  every model's endpoint checked before the first game
health     endpoint health: circuits, probes, and when a gateway stops the run
backlog    which episode goes out next, and what is still out
summary    what a session produced, and summary.json for readers
stopping   when a run starts no new match: budgets, the SPRT
sprt       the sequential probability ratio test
adaptive   how sure the ranking is, and which pairs play next
rounds     the adaptive schedule's rounds, picked from earlier results
"""
