"""Telemetry (O1–O3): energy collectors now; per-inference records and aggregates next."""
