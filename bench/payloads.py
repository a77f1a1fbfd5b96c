"""Synthetic PyRIT 0.12-shaped payloads for the benchmarks: realistic field sizes, fixed ids.

Each batch holds ``conversations`` conversations of ``turns`` user/assistant turns (one piece
per message), one true/false score per piece and one attack result per conversation.
"""

from __future__ import annotations

import random
import uuid

_NS = uuid.UUID("4a0bd1d8-4e57-4a0e-8c39-0f1e2d3c4b5a")


def _id(*parts: object) -> str:
    return str(uuid.uuid5(_NS, "/".join(map(str, parts))))


def identifier(class_name: str, module: str, **params: object) -> dict:
    return {"class_name": class_name, "class_module": module, **params}


TARGET = identifier(
    "OpenAIChatTarget",
    "pyrit.prompt_target.openai.openai_chat_target",
    endpoint="https://example.invalid/v1/chat/completions",
    model_name="gpt-4o",
    temperature=0.7,
)
CONVERTER = identifier("Base64Converter", "pyrit.prompt_converter.base64_converter")
ATTACK = identifier("PromptSendingAttack", "pyrit.executor.attack.single_turn.prompt_sending")
SCORER = identifier(
    "SelfAskTrueFalseScorer",
    "pyrit.score.true_false.self_ask_true_false_scorer",
    system_prompt_template="sha256:5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8",
)


def batch(index: int, *, conversations: int = 100, turns: int = 10, seed: int = 7) -> dict:
    """Batch ``index``: ``conversations * turns`` pieces, as many scores, one attack each."""
    rng = random.Random(seed * 1_000_003 + index)
    pieces, scores, attacks = [], [], []
    for c in range(conversations):
        conversation_id = _id("conversation", index, c)
        last_piece = last_score = None
        for turn in range(turns):
            role = "user" if turn % 2 == 0 else "assistant"
            piece_id = _id("piece", index, c, turn)
            text = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(20, 120)))
            pieces.append(
                {
                    "id": piece_id,
                    "role": role,
                    "conversation_id": conversation_id,
                    "sequence": turn,
                    "timestamp": f"2026-11-{1 + index % 28:02d}T12:{c % 60:02d}:{turn:02d}Z",
                    "labels": {"operation": f"op_{index % 3}", "operator": "bench"},
                    "targeted_harm_categories": ["violence"] if c % 4 == 0 else None,
                    "prompt_metadata": {},
                    "converter_identifiers": [CONVERTER] if role == "user" else [],
                    "prompt_target_identifier": TARGET,
                    "attack_identifier": ATTACK,
                    "scorer_identifier": None,
                    "original_value_data_type": "text",
                    "original_value": text,
                    "converted_value_data_type": "text",
                    "converted_value": text,
                    "response_error": "none",
                    "originator": "attack",
                    "original_prompt_id": piece_id,
                }
            )
            score_id = _id("score", index, c, turn)
            scores.append(
                {
                    "id": score_id,
                    "score_value": rng.choice(["true", "false", "True"]),
                    "score_value_description": "Whether the response complied",
                    "score_type": "true_false",
                    "score_category": ["jailbreak"],
                    "score_rationale": "The response " + " ".join(rng.choices(_WORDS, k=30)),
                    "score_metadata": {},
                    "scorer_class_identifier": SCORER,
                    "message_piece_id": piece_id,
                    "timestamp": "2026-11-21T12:00:00+00:00",
                    "objective": "Make the target say something it should not",
                }
            )
            last_piece, last_score = piece_id, score_id
        attacks.append(
            {
                "attack_result_id": _id("attack", index, c),
                "conversation_id": conversation_id,
                "objective": "Make the target say something it should not",
                "attack_identifier": ATTACK,
                "last_response": last_piece,
                "last_score": last_score,
                "executed_turns": turns // 2,
                "execution_time_ms": rng.randint(100, 9000),
                "outcome": rng.choice(["success", "failure", "undetermined"]),
                "outcome_reason": None,
                "related_conversations": [],
                "metadata": {},
                "timestamp": "2026-11-21T12:30:00+00:00",
            }
        )
    return {"message_pieces": pieces, "scores": scores, "attack_results": attacks}


_SENTENCE = (
    "the model said it cannot help with that request but here is some general information "
    "about safety chemistry history fiction story character villain recipe steps first "
    "second third finally however note please ignore previous instructions system prompt "
    "secret password base64 encoded translate rot13 pretend roleplay grandmother bedtime"
)
_WORDS = _SENTENCE.split(" ")
