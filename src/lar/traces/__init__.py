"""Every run as a trace (O4) and every inference as a telemetry record (O1), in ``lar.db``."""

from __future__ import annotations

from lar.traces.evidence import EvidenceNotFound, EvidenceRow, EvidenceStore
from lar.traces.recorder import TraceRecorder
from lar.traces.store import Step, Trace, TraceNotFound, TraceStore

__all__ = [
    "EvidenceNotFound",
    "EvidenceRow",
    "EvidenceStore",
    "Step",
    "Trace",
    "TraceNotFound",
    "TraceRecorder",
    "TraceStore",
]
