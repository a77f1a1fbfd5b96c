"""``GET /api/v1/seed-datasets/<name>/yaml/``: the dataset as PyRIT YAML, with permissions."""

from __future__ import annotations

import pytest
import yaml
from django.test import Client

from seeds.importing import import_commit
from tests.conftest import FIXTURES_DIR
from tests.factories import make_dataset, make_group, make_seed

pytestmark = pytest.mark.django_db

MULTIMODAL = (FIXTURES_DIR / "seed-yaml" / "illegal-multimodal-dataset.prompt").read_bytes()


def test_yaml_export_of_a_dataset(viewer_client):
    import_commit(files=[("m.prompt", MULTIMODAL)], added_by="t")
    response = viewer_client.get("/api/v1/seed-datasets/pyrit_example_dataset/yaml/")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/yaml; charset=utf-8"
    assert 'filename="pyrit_example_dataset.prompt"' in response["Content-Disposition"]
    data = yaml.safe_load(response.content)
    assert data["dataset_name"] == "pyrit_example_dataset" and len(data["seeds"]) == 8
    aliases = {s.get("prompt_group_alias") for s in data["seeds"]}
    assert aliases == {None, "audio_request", "image_request"}
    media = [s["value"] for s in data["seeds"] if s.get("data_type") == "audio_path"]
    assert media == [
        "{{ datasets_path }}/seed_datasets/local/examples/multimodal_data/molotov.wav\n"
    ]


def test_yaml_export_without_trailing_slash_redirects(viewer_client):
    make_dataset("d")
    response = viewer_client.get("/api/v1/seed-datasets/d/yaml")
    assert response.status_code == 301 and response["Location"].endswith("/d/yaml/")


def test_unknown_dataset_is_404_and_permissions_hold(viewer_client, reader):
    assert viewer_client.get("/api/v1/seed-datasets/nope/yaml/").status_code == 404
    assert Client().get("/api/v1/seed-datasets/nope/yaml/").status_code == 401
    client = Client()
    client.force_login(reader)
    make_dataset("d")
    assert client.get("/api/v1/seed-datasets/d/yaml/").status_code == 403


def test_yaml_export_query_count_does_not_grow(viewer_client, django_assert_num_queries):
    dataset = make_dataset("d")

    def add(n: int) -> None:
        for i in range(n):
            group = make_group(alias=f"g{i}-{dataset.seeds.count()}")
            make_seed(f"a {i} {dataset.seeds.count()}", dataset=dataset, group=group)
            make_seed(f"b {i} {dataset.seeds.count()}", dataset=dataset, sequence=1, group=group)

    add(1)
    # session, user, permissions (user + group), the dataset, its seeds with their groups
    with django_assert_num_queries(6):
        assert viewer_client.get("/api/v1/seed-datasets/d/yaml/").status_code == 200
    add(5)
    with django_assert_num_queries(6):
        response = viewer_client.get("/api/v1/seed-datasets/d/yaml/")
    assert len(yaml.safe_load(response.content)["seeds"]) == 12


def test_schema_documents_the_yaml_endpoint(viewer_client):
    schema = yaml.safe_load(viewer_client.get("/api/schema/").content)
    operation = schema["paths"]["/api/v1/seed-datasets/{name}/yaml/"]["get"]
    assert "application/yaml" in operation["responses"]["200"]["content"]
