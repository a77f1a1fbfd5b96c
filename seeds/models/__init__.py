"""Seed models, re-exported."""

from seeds.models.datasets import SeedDataset
from seeds.models.groups import SeedGroup
from seeds.models.seeds import Seed, SeedObjective, SeedPrompt, SeedSimulatedConversation

__all__ = [
    "Seed",
    "SeedDataset",
    "SeedGroup",
    "SeedObjective",
    "SeedPrompt",
    "SeedSimulatedConversation",
]
