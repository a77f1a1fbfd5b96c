"""PyRIT memory models, one module per aggregate, re-exported here."""

from memory.models.attacks import AttackLabel, AttackResult, RelatedConversation
from memory.models.conversations import Conversation, Message, MessagePiece, PieceConverter
from memory.models.crosswalk import (
    CrosswalkLoad,
    CrosswalkMapping,
    CrosswalkOrigin,
    CrosswalkSourceKind,
    Framework,
    FrameworkEntry,
)
from memory.models.findings import (
    Evidence,
    EvidenceKind,
    Finding,
    FindingComment,
    FindingStatus,
    Operation,
    Report,
    Retest,
    RetestResult,
    Severity,
)
from memory.models.identifiers import ComponentIdentifier, ComponentIdentifierChild
from memory.models.imports import ImportJob, ImportStatus
from memory.models.media import MediaBlob, MediaLocation
from memory.models.push import PushSource
from memory.models.queues import QueueResolution, ReviewQueue
from memory.models.records import PyritRecord
from memory.models.reviews import HumanOutcome, HumanVerdict
from memory.models.rollups import (
    ConverterRollup,
    CountRollup,
    FactRollup,
    HarmListRollup,
    HarmRollup,
    HourRollup,
    LabelRollup,
    ObjectiveRollup,
    ScoreRollup,
)
from memory.models.scenarios import ScenarioResult
from memory.models.scores import ScorableContent, Score
from memory.models.tags import HarmCategory, Label
from memory.models.webhooks import (
    SUBSCRIBABLE_EVENTS,
    DeliveryState,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
    WebhookFormat,
)

__all__ = [
    "SUBSCRIBABLE_EVENTS",
    "AttackLabel",
    "AttackResult",
    "ComponentIdentifier",
    "ComponentIdentifierChild",
    "Conversation",
    "ConverterRollup",
    "CountRollup",
    "CrosswalkLoad",
    "CrosswalkMapping",
    "CrosswalkOrigin",
    "CrosswalkSourceKind",
    "DeliveryState",
    "Evidence",
    "EvidenceKind",
    "FactRollup",
    "Finding",
    "FindingComment",
    "FindingStatus",
    "Framework",
    "FrameworkEntry",
    "HarmCategory",
    "HarmListRollup",
    "HarmRollup",
    "HourRollup",
    "HumanOutcome",
    "HumanVerdict",
    "ImportJob",
    "ImportStatus",
    "Label",
    "LabelRollup",
    "MediaBlob",
    "MediaLocation",
    "Message",
    "MessagePiece",
    "ObjectiveRollup",
    "Operation",
    "PieceConverter",
    "PushSource",
    "PyritRecord",
    "QueueResolution",
    "RelatedConversation",
    "Report",
    "Retest",
    "RetestResult",
    "ReviewQueue",
    "ScenarioResult",
    "ScorableContent",
    "Score",
    "ScoreRollup",
    "Severity",
    "WebhookDelivery",
    "WebhookEndpoint",
    "WebhookEvent",
    "WebhookFormat",
]
