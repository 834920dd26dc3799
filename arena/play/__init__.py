"""Playing an episode: the game loop and the decisions in it.

match      two games on one seed with the seats swapped, and its episodes
episode    the game loop: ask the seats, validate, apply, record
protocol   the seat protocol: requests, decisions, questions and answers, and
           what the loop asks for its seats
decisions  one decision of a text seat: deadlines, the retry, the fallback
extract    reading the move, `say` and `notes` out of a reply
prompts    templates and the exact prompt a seat receives
preview    `arena prompt`: a prompt before it costs a token
"""
