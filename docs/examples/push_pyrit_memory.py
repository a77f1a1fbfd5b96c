"""Push everything a PyRIT 1.1.0 memory holds to Redline, read with PyRIT's own API.

Conversations (their target and every piece), scores (of pieces and of loose content, with
that content), attack results, scenario results, seeds and seed groups, then the media files.

    REDLINE_URL=http://127.0.0.1:8000 REDLINE_TOKEN=rl_… PYRIT_DB=dbdata/pyrit.db \\
        python push_pyrit_memory.py

Media values are paths: run it from the folder they are relative to (for PyRIT's default
database, anywhere: its paths are absolute). Re-running is safe: what Redline holds already is
reported ``unchanged``. The token needs the ``ingest`` scope:
``manage.py create_api_token ci-bot --scope ingest``.
"""

import json
import os
import pathlib
import urllib.request
import uuid
from collections import defaultdict
from datetime import UTC, datetime

from pyrit.memory import CentralMemory, SQLiteMemory

REDLINE = os.environ.get("REDLINE_URL", "http://127.0.0.1:8000")
TOKEN = os.environ["REDLINE_TOKEN"]
PIECES_PER_REQUEST = 2000  # keeps a request well under INGEST_MAX_BODY_MB
MEDIA_TYPES = {"image_path", "audio_path", "video_path", "binary_path"}
#: PyRIT 1.1.0's get_scores() returns nothing without a filter; this one matches every score.
EVERY_SCORE = {"sent_after": datetime(1, 1, 1, tzinfo=UTC)}


def call(method, path, data, content_type):
    request = urllib.request.Request(
        f"{REDLINE}{path}",
        data=data,
        method=method,
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": content_type},
    )
    with urllib.request.urlopen(request) as response:
        return json.load(response)


def ingest(batch):
    """POST one envelope; print what Redline did with each kind of object."""
    report = call("POST", "/api/v1/ingest/", json.dumps(batch).encode(), "application/json")
    for kind, counts in report["counts"].items():
        print(f"{kind}: {counts}")
    return report


def upload(location):
    """PUT a media file under the location PyRIT stored, so the pieces and seeds link to it."""
    path = pathlib.Path(location)
    if not path.is_file():
        print(f"media not found, skipped: {location}")
        return
    boundary = uuid.uuid4().hex
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="path"\r\n\r\n{location}\r\n'
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{path.name}"'
        "\r\nContent-Type: application/octet-stream\r\n\r\n"
    ).encode()
    body += path.read_bytes() + f"\r\n--{boundary}--\r\n".encode()
    call("PUT", "/api/v1/media/", body, f"multipart/form-data; boundary={boundary}")


def conversations(memory, pieces):
    """``{"conversation", "messages"}`` items: pieces grouped by conversation and sequence."""
    grouped = defaultdict(lambda: defaultdict(list))
    for piece in pieces:
        grouped[piece.conversation_id][piece.sequence].append(piece.model_dump(mode="json"))
    for conversation_id, messages in grouped.items():
        # PyRIT 1.1.0 keeps a conversation's target in its Conversations table and has no
        # public getter for it; _get_conversation is the one its own backend uses.
        conversation = memory._get_conversation(conversation_id=conversation_id)
        yield {
            "conversation": (
                conversation.model_dump(mode="json")
                if conversation
                else {"conversation_id": conversation_id}
            ),
            "messages": [{"message_pieces": messages[seq]} for seq in sorted(messages)],
        }


def main():
    # PYRIT_DB unset: PyRIT's default database (dbdata/pyrit.db).
    memory = SQLiteMemory(db_path=os.environ.get("PYRIT_DB"), silent=True)
    CentralMemory.set_memory_instance(memory)

    # 1. Conversations with their pieces, a few thousand pieces per request.
    pieces = memory.get_message_pieces()
    batch, size = [], 0
    for item in conversations(memory, pieces):
        batch.append(item)
        size += sum(len(m["message_pieces"]) for m in item["messages"])
        if size >= PIECES_PER_REQUEST:
            ingest({"conversations": batch})
            batch, size = [], 0
    if batch:
        ingest({"conversations": batch})

    # 2. Scores, and the loose content some of them judged (scored outside a conversation).
    scores = memory.get_scores(**EVERY_SCORE)
    content_ids = [
        s.scorable.content_id
        for s in scores
        if s.scorable is not None and s.scorable.scorable_type == "content_entry"
    ]
    contents = memory.get_scorable_content(content_ids=content_ids)
    ingest(
        {
            "scorable_contents": [
                {"id": str(content_id), "value": content.value, "data_type": content.data_type}
                for content_id, content in contents.items()
            ],
            "scores": [s.model_dump(mode="json") for s in scores],
        }
    )

    # 3. Attack results and scenario results: they name pieces and scores sent above.
    ingest(
        {
            "attack_results": [a.model_dump(mode="json") for a in memory.get_attack_results()],
            "scenario_results": [s.model_dump(mode="json") for s in memory.get_scenario_results()],
        }
    )

    # 4. Seeds: groups whole, and the seeds that belong to none.
    groups = memory.get_seed_groups()
    grouped = {seed.id for group in groups for seed in group.seeds}
    seeds = memory.get_seeds()
    ingest(
        {
            "seed_groups": [g.model_dump(mode="json") for g in groups],
            "seeds": [s.model_dump(mode="json") for s in seeds if s.id not in grouped],
        }
    )

    # 5. Media files: each once, under the location PyRIT stored.
    locations = {
        value
        for piece in pieces
        for value, data_type in (
            (piece.original_value, piece.original_value_data_type),
            (piece.converted_value, piece.converted_value_data_type),
        )
        if data_type in MEDIA_TYPES
    }
    locations |= {seed.value for seed in seeds if seed.data_type in MEDIA_TYPES}
    for location in sorted(locations):
        upload(location)
    print(f"uploaded {len(locations)} media locations")


if __name__ == "__main__":
    main()
