"""Server-rendered review pages (attacks, conversations, search, human verdicts)."""
