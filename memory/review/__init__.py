"""Review pages: home, attack and conversation lists and pages, search, verdicts, human scores."""
