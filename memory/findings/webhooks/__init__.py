"""Signed webhooks for findings and attacks (docs/webhooks.md).

``signing`` and ``payloads`` are pure; ``transport`` sends one request to a checked address;
``services`` queues events as deliveries and works through them; ``receivers`` turns the
findings' and ingestion's signals into queued deliveries, in the changes' own transactions;
``admin`` is the leads' tool for endpoints and the delivery log.
"""
