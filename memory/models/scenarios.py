"""Scenario results: a run of several atomic attacks (contract §7, optional in PyRIT)."""

from __future__ import annotations

import uuid

from django.db import models

from memory.models.identifiers import ComponentIdentifier
from redteam.core import nul
from redteam.core.choices import ScenarioRunState
from redteam.core.constraints import choice_check


class ScenarioResult(models.Model):
    """PyRIT's ``ScenarioResult``: the scenario, its target and scorer, and its run state.

    Attack results belong to a scenario through ``AttackResult.attribution_parent``.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    scenario_name = nul.CharField(max_length=255)
    scenario_description = nul.TextField(null=True, blank=True)
    scenario_version = models.IntegerField(default=1)
    scenario_identifier = models.ForeignKey(
        ComponentIdentifier, on_delete=models.PROTECT, related_name="scenario_results"
    )
    objective_target_identifier = models.ForeignKey(
        ComponentIdentifier,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="scenario_results_as_target",
    )
    objective_scorer_identifier = models.ForeignKey(
        ComponentIdentifier,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="scenario_results_as_scorer",
    )
    scenario_run_state = nul.CharField(
        max_length=16, choices=ScenarioRunState.choices, default=ScenarioRunState.CREATED
    )
    labels = nul.JSONField(default=dict, blank=True)
    number_tries = models.IntegerField(default=0)
    creation_time = models.DateTimeField()
    completion_time = models.DateTimeField(null=True, blank=True)
    display_group_map = nul.JSONField(default=dict, blank=True)
    error_message = nul.TextField(null=True, blank=True)
    error_type = nul.CharField(max_length=255, null=True, blank=True)
    error_attack_result_ids = nul.JSONField(default=list, blank=True)
    metadata = nul.JSONField(default=dict, blank=True)
    pyrit_version = nul.CharField(max_length=32, blank=True, default="")
    extra = nul.JSONField(default=dict, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            choice_check(
                "scenario_run_state", ScenarioRunState, "%(app_label)s_%(class)s_state_valid"
            ),
        ]
        indexes = [
            # Scenario listings, newest first.
            models.Index(fields=["-creation_time"], name="memory_scenario_created_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.scenario_name} ({self.scenario_run_state})"
