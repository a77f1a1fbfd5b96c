"""Export of stored memory in PyRIT's own shapes."""
