"""PyRIT memory models, one module per aggregate, re-exported here."""

from memory.models.attacks import AttackLabel, AttackResult, RelatedConversation
from memory.models.conversations import Conversation, Message, MessagePiece, PieceConverter
from memory.models.identifiers import ComponentIdentifier, ComponentIdentifierChild
from memory.models.imports import ImportJob, ImportStatus
from memory.models.media import MediaBlob, MediaLocation
from memory.models.push import PushSource
from memory.models.records import PyritRecord
from memory.models.reviews import HumanOutcome, HumanVerdict
from memory.models.scenarios import ScenarioResult
from memory.models.scores import ScorableContent, Score
from memory.models.tags import HarmCategory, Label

__all__ = [
    "AttackLabel",
    "AttackResult",
    "ComponentIdentifier",
    "ComponentIdentifierChild",
    "Conversation",
    "HarmCategory",
    "HumanOutcome",
    "HumanVerdict",
    "ImportJob",
    "ImportStatus",
    "Label",
    "MediaBlob",
    "MediaLocation",
    "Message",
    "MessagePiece",
    "PieceConverter",
    "PushSource",
    "PyritRecord",
    "RelatedConversation",
    "ScenarioResult",
    "ScorableContent",
    "Score",
]
