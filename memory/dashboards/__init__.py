"""Dashboards: attack success rates, breakdowns, trends and scorer analytics."""
