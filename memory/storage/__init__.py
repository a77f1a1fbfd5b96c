"""Storage of PyRIT memory: the write stack (services over the batch writer), reads and filters."""
