"""What a run records, and checking it.

replay     the replay schema, one document per episode, written atomically
ledger     the append-only ledger: commitments, reveals, program hashes
cards      backgammon cards: draw, commit, reveal, cancel, replace
hooks      the episode hooks: where an episode's chance comes from
verify     `arena verify`: re-derive a replay and compare every field
audit      `arena verify RUN`: a run folder checked whole against its store (handed in)
           and ledger; the run digest
"""
