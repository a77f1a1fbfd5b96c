"""PUT /api/v1/media/ and GET /api/v1/media/<sha256>/: storage, dedupe, linking, serving."""

import hashlib
import io
import uuid

import pytest
from django.test import Client

from memory.models import MediaBlob, MessagePiece
from seeds.models import Seed
from tests.ingest.conftest import EXPORT_110, load, post_json
from tests.samples import PNG_BYTES

pytestmark = pytest.mark.django_db

LOCATION = "/home/alice/.local/share/dbdata/prompt-memory-entries/images/1732000000000001.png"


def _upload(client, data=PNG_BYTES, **fields):
    file = io.BytesIO(data)
    file.name = "upload.bin"
    return client.put(
        "/api/v1/media/",
        data=_multipart({"file": file, **fields}),
        content_type="multipart/form-data; boundary=BoUnDaRy",
    )


def _multipart(fields):
    from django.test.client import encode_multipart

    return encode_multipart("BoUnDaRy", fields)


def _image_piece(value=LOCATION, **fields):
    piece = {
        "id": str(uuid.uuid4()),
        "conversation_id": "conv-media",
        "sequence": 0,
        "role": "user",
        "original_value": value,
        "original_value_data_type": "image_path",
    }
    piece.update(fields)
    return piece


def test_upload_stores_content_addressed_and_dedupes(ingest_client):
    first = _upload(ingest_client)
    assert first.status_code == 201
    body = first.json()
    assert body["sha256"] == hashlib.sha256(PNG_BYTES).hexdigest()
    assert body["content_type"] == "image/png"
    assert body["created"] is True
    again = _upload(ingest_client)
    assert again.status_code == 200
    assert again.json()["created"] is False
    assert MediaBlob.objects.count() == 1


def test_supplied_hash_is_verified(ingest_client):
    response = _upload(ingest_client, sha256="0" * 64)
    assert response.status_code == 400
    assert response.json()["sha256"]["computed"] == hashlib.sha256(PNG_BYTES).hexdigest()
    assert MediaBlob.objects.count() == 0


def test_size_cap(ingest_client, settings):
    settings.REDLINE_MEDIA_MAX_BYTES = 10
    response = _upload(ingest_client)
    assert response.status_code == 413
    assert response.json()["limit_bytes"] == 10


def test_media_after_pieces_links_by_location(ingest_client):
    post_json(ingest_client, [_image_piece()])
    response = _upload(
        ingest_client, path="C:\\other\\dbdata\\prompt-memory-entries\\images\\1732000000000001.png"
    )
    assert response.json()["linked"]["message_pieces"] == 2  # original and converted side
    piece = MessagePiece.objects.get()
    assert piece.original_media.sha256 == response.json()["sha256"]
    assert piece.converted_media_id == piece.original_media_id


def test_media_after_pieces_links_by_hash(ingest_client):
    digest = hashlib.sha256(PNG_BYTES).hexdigest()
    post_json(
        ingest_client,
        [_image_piece(value="https-less/elsewhere.png", original_value_sha256=digest)],
    )
    response = _upload(ingest_client)
    assert response.json()["linked"]["message_pieces"] >= 1
    assert MessagePiece.objects.get().original_media.sha256 == digest


def test_media_before_pieces_links_on_ingest(ingest_client):
    _upload(ingest_client, path=LOCATION)
    post_json(ingest_client, [_image_piece()])
    piece = MessagePiece.objects.get()
    assert piece.original_media is not None
    assert piece.converted_media is not None


def test_different_folder_same_name_does_not_link(ingest_client):
    post_json(ingest_client, [_image_piece()])
    other = "/x/dbdata/seed-prompt-entries/images/1732000000000001.png"
    assert _upload(ingest_client, path=other).json()["linked"]["message_pieces"] == 0
    assert MessagePiece.objects.get().original_media is None


def test_fixture_seed_media_links(ingest_client):
    data = load(EXPORT_110)
    post_json(ingest_client, data)
    media_seeds = Seed.objects.exclude(media_key="")
    assert media_seeds.exists()
    seed = media_seeds.first()
    from tests.conftest import FIXTURES_DIR

    name = seed.media_key
    [path] = (FIXTURES_DIR / "pyrit-1.1.0-small" / "dbdata").rglob(name)
    response = _upload(ingest_client, data=path.read_bytes(), path=seed.value)
    assert response.json()["linked"]["seeds"] >= 1
    seed.refresh_from_db()
    assert seed.media is not None


def test_traversal_paths_are_never_opened(ingest_client, tmp_path):
    secret = tmp_path / "secret.png"
    secret.write_bytes(PNG_BYTES)
    post_json(
        ingest_client,
        [_image_piece(value=str(secret)), _image_piece(value="../../../../etc/passwd", sequence=1)],
    )
    # Nothing was read from the named paths: no blob exists until bytes are uploaded.
    assert MediaBlob.objects.count() == 0
    assert MessagePiece.objects.filter(original_media__isnull=False).count() == 0
    # The location string is only a key; stored files are named by their hash.
    response = _upload(ingest_client, path="../../../../etc/passwd")
    blob = MediaBlob.objects.get(sha256=response.json()["sha256"])
    assert ".." not in blob.file.name and blob.file.name.endswith(blob.sha256)


def test_serving_needs_login_and_is_safe(ingest_client, admin_client):
    sha = _upload(ingest_client).json()["sha256"]
    assert Client().get(f"/api/v1/media/{sha}/").status_code == 401
    response = admin_client.get(f"/api/v1/media/{sha}/")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/png"
    assert response["Content-Disposition"].startswith("inline")
    assert "sandbox" in response["Content-Security-Policy"]
    assert b"".join(response.streaming_content) == PNG_BYTES


def test_unknown_bytes_are_served_as_a_download(ingest_client, admin_client):
    sha = _upload(ingest_client, data=b"<script>alert(1)</script>").json()["sha256"]
    response = admin_client.get(f"/api/v1/media/{sha}/")
    assert response["Content-Type"] == "application/octet-stream"
    assert response["Content-Disposition"].startswith("attachment")


def test_read_token_cannot_upload(read_client):
    assert _upload(read_client).status_code == 403


# --- PyRIT's colliding media names (one file name, three pieces' bytes) ----------------------

COLLIDED = [PNG_BYTES + bytes([n]) for n in range(3)]  # three QR images PyRIT wrote in one tick


def _collided_pieces(ingest_client):
    """Three pieces naming LOCATION, each with the SHA-256 of its own bytes; returns their ids."""
    pieces = [
        _image_piece(
            conversation_id=f"conv-qr-{n}",
            original_value_sha256=hashlib.sha256(data).hexdigest(),
            converted_value_sha256=hashlib.sha256(data).hexdigest(),
        )
        for n, data in enumerate(COLLIDED)
    ]
    assert post_json(ingest_client, pieces).status_code in (200, 201)
    return [piece["id"] for piece in pieces]


def _differs(piece_id, n, location=LOCATION):
    digest = hashlib.sha256(COLLIDED[n]).hexdigest()
    return (
        f"media differs from recorded sha256: piece {piece_id} conversation conv-qr-{n} "
        f"file {location} expected sha256 {digest}: not linked"
    )


def test_the_surviving_file_links_only_the_piece_that_recorded_its_bytes(ingest_client):
    ids = _collided_pieces(ingest_client)
    response = _upload(ingest_client, data=COLLIDED[2], path=LOCATION)
    body = response.json()
    assert body["linked"]["message_pieces"] == 2  # the last piece, original and converted side
    assert MessagePiece.objects.get(id=ids[2]).converted_media.sha256 == body["sha256"]
    for piece_id in ids[:2]:
        piece = MessagePiece.objects.get(id=piece_id)
        assert piece.original_media is None and piece.converted_media is None
    # one warning per overwritten piece (not per side), naming piece, conversation and file
    assert body["warnings"] == sorted([_differs(ids[0], 0), _differs(ids[1], 1)])
    assert body["warnings_count"] == 2


def test_the_surviving_file_uploaded_first_links_only_its_piece_on_ingest(ingest_client):
    _upload(ingest_client, data=COLLIDED[2], path=LOCATION)
    ids = _collided_pieces(ingest_client)
    assert MessagePiece.objects.get(id=ids[2]).original_media is not None
    assert not MessagePiece.objects.filter(id__in=ids[:2], original_media__isnull=False).exists()
    assert not MessagePiece.objects.filter(id__in=ids[:2], converted_media__isnull=False).exists()


def test_linking_by_sha256_alone_refuses_other_bytes_and_warns(ingest_client):
    ids = _collided_pieces(ingest_client)
    digest = hashlib.sha256(COLLIDED[2]).hexdigest()
    _upload(ingest_client, data=COLLIDED[2])
    response = ingest_client.put(
        "/api/v1/media/",
        data=_multipart({"sha256": digest, "path": LOCATION}),
        content_type="multipart/form-data; boundary=BoUnDaRy",
    )
    assert response.json()["warnings_count"] == 2
    assert not MessagePiece.objects.filter(id__in=ids[:2], original_media__isnull=False).exists()


def test_the_overwritten_bytes_sent_later_still_link(ingest_client):
    ids = _collided_pieces(ingest_client)
    _upload(ingest_client, data=COLLIDED[2], path=LOCATION)
    body = _upload(ingest_client, data=COLLIDED[0], path=LOCATION).json()
    assert body["linked"]["message_pieces"] == 2
    assert MessagePiece.objects.get(id=ids[0]).converted_media.sha256 == body["sha256"]
    assert body["warnings"] == [_differs(ids[1], 1)]


def test_a_piece_without_a_recorded_sha256_still_links_by_location(ingest_client):
    ids = _collided_pieces(ingest_client)
    post_json(ingest_client, [_image_piece(conversation_id="conv-no-sha")])
    body = _upload(ingest_client, data=COLLIDED[2], path=LOCATION).json()
    assert body["linked"]["message_pieces"] == 4
    assert MessagePiece.objects.get(
        message__conversation__conversation_id="conv-no-sha"
    ).original_media
    assert not MessagePiece.objects.filter(id__in=ids[:2], original_media__isnull=False).exists()


def test_the_page_tells_an_overwritten_file_from_one_not_uploaded(ingest_client, admin_client):
    _collided_pieces(ingest_client)
    page = admin_client.get("/conversations/conv-qr-0/").content.decode()
    assert "Image not uploaded" in page and "media missing" not in page
    _upload(ingest_client, data=COLLIDED[2], path=LOCATION)
    digest = hashlib.sha256(COLLIDED[0]).hexdigest()
    page = admin_client.get("/conversations/conv-qr-0/").content.decode()
    assert (
        "media missing — the file was overwritten or differs "
        f'(expected sha256 <span class="mono">{digest}</span>)'
    ) in page
    assert 'src="/api/v1/media/' not in page  # no image of the bytes that survived
    survivor = hashlib.sha256(COLLIDED[2]).hexdigest()
    assert (
        f"/api/v1/media/{survivor}/"
        in admin_client.get("/conversations/conv-qr-2/").content.decode()
    )
