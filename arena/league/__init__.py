"""The league: who plays whom, playing it, and what the results say.

schedule   who plays whom, on which seed, in which order
plan       the config checked and resolved; what each game's episodes need
run        the producer, the workers, the signal watcher and the one writer
store      the SQLite store a resumed run continues from
standings  W/D/L/NC, mean score, fallbacks, latency, tokens and cost
ratings    Elo in schedule order, Bradley-Terry with bootstrap intervals
tables     the league's tables, as summary.json and reports show them
report     `arena report`: tables, JSON or CSV
"""
