"""Read endpoints of PyRIT memory in PyRIT's own shapes (``/api/v1/conversations/`` …)."""
