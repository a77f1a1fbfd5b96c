"""Load a Redline export made with ``--profile pyrit-0.12`` into a PyRIT 0.12.1 memory.

PyRIT 0.12.1 has no loader of JSON: its objects are plain classes built from keyword
arguments. Every key of the profile's objects is one of those arguments, so each object is
built as it is, ``Class(**item)``, once the values JSON cannot hold are PyRIT's types again:
dates (``datetime.fromisoformat``), identifiers (``ComponentIdentifier.from_dict``), embedded
pieces and scores, the attack outcome and its related conversations. Nothing is dropped or
renamed here.

    PYRIT_DB=pyrit.db python load_pyrit_0_12.py memory-pyrit-0.12.json

Media values are paths: run it from the folder they are relative to. Runs on every Python
PyRIT 0.12.1 supports (3.10 to 3.13).
"""

import asyncio
import json
import os
import sys
from datetime import datetime

from pyrit.identifiers.component_identifier import ComponentIdentifier
from pyrit.memory import CentralMemory, SQLiteMemory
from pyrit.models import MessagePiece, Score, SeedGroup
from pyrit.models.attack_result import AttackOutcome, AttackResult
from pyrit.models.conversation_reference import ConversationReference, ConversationType
from pyrit.models.seeds import SeedObjective, SeedPrompt, SeedSimulatedConversation

#: A seed's class by its ``seed_type``, as 0.12.1's SeedGroup picks it.
SEED_CLASSES = {
    "prompt": lambda fields: SeedPrompt(**fields),
    "objective": lambda fields: SeedObjective(**fields),
    "simulated_conversation": SeedSimulatedConversation.from_dict,
}


def when(value):
    return datetime.fromisoformat(value) if value else None


def identifier(value):
    return ComponentIdentifier.from_dict(value) if value else None


def score(item):
    return Score(
        **{
            **item,
            "timestamp": when(item["timestamp"]),
            "scorer_class_identifier": identifier(item["scorer_class_identifier"]),
        }
    )


def piece(item):
    return MessagePiece(
        **{
            **item,
            "timestamp": when(item["timestamp"]),
            "converter_identifiers": [identifier(c) for c in item["converter_identifiers"]],
            "prompt_target_identifier": identifier(item["prompt_target_identifier"]),
            "attack_identifier": identifier(item["attack_identifier"]),
            "scorer_identifier": identifier(item["scorer_identifier"]),
            "scores": [score(s) for s in item["scores"]],
        }
    )


def attack_result(item):
    related = {
        ConversationReference(
            conversation_id=ref["conversation_id"],
            conversation_type=ConversationType(ref["conversation_type"]),
            description=ref.get("description"),
        )
        for ref in item["related_conversations"]
    }
    return AttackResult(
        **{
            **item,
            "attack_identifier": identifier(item["attack_identifier"]),
            "atomic_attack_identifier": identifier(item["atomic_attack_identifier"]),
            "last_response": piece(item["last_response"]) if item["last_response"] else None,
            "last_score": score(item["last_score"]) if item["last_score"] else None,
            "outcome": AttackOutcome(item["outcome"]),
            "related_conversations": related,
        }
    )


def seed_fields(item):
    return {**item, "date_added": when(item["date_added"])} if "date_added" in item else item


def loose_seed(item):
    fields = seed_fields(item)
    seed_type = fields.pop("seed_type")
    if seed_type != "prompt":
        fields.pop("data_type", None)  # as SeedGroup does: the class knows its data type
    return SEED_CLASSES[seed_type](fields)


def load(document, memory):
    """Store the document's objects with PyRIT's own ``add_*`` calls; returns the counts."""
    pieces = [piece(p) for p in document["message_pieces"]]
    scores = [s for p in pieces for s in p.scores]
    scores += [score(s) for s in document["scores"]]
    attacks = [attack_result(a) for a in document["attack_results"]]
    groups = [
        SeedGroup(seeds=[seed_fields(s) for s in g["seeds"]]) for g in document["seed_groups"]
    ]
    seeds = [loose_seed(s) for s in document["seeds"]]
    memory.add_message_pieces_to_memory(message_pieces=pieces)
    memory.add_scores_to_memory(scores=scores)
    memory.add_attack_results_to_memory(attack_results=attacks)
    if groups:
        asyncio.run(memory.add_seed_groups_to_memory_async(prompt_groups=groups))
    if seeds:
        asyncio.run(memory.add_seeds_to_memory_async(seeds=seeds))
    return {
        "pieces": len(pieces),
        "scores": len(scores),
        "attack_results": len(attacks),
        "seeds": len(seeds) + sum(len(g.seeds) for g in groups),
    }


def main(path):
    with open(path, encoding="utf-8") as handle:
        document = json.load(handle)
    memory = SQLiteMemory(db_path=os.environ.get("PYRIT_DB", "pyrit.db"))
    CentralMemory.set_memory_instance(memory)
    print(json.dumps(load(document, memory)))
    memory.dispose_engine()


if __name__ == "__main__":
    main(sys.argv[1])
