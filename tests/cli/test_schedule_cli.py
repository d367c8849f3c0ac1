"""`lar schedule` and `lar inbox` from the command line, in real processes on one lar.db."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest
from test_cli import lar

from lar.scheduler import JobStore


def test_add_list_show_pause_resume_remove(lar_home: Path) -> None:
    added = lar("schedule", "add", "daily 08:30", "stretch", "--tz", "Europe/Lisbon", home=lar_home)
    assert added.returncode == 0, added.stderr
    assert "job 1: reminder: stretch" in added.stdout
    assert "schedule: cron 30 8 * * * (written 'daily 08:30'), zone Europe/Lisbon" in added.stdout
    assert "may use without asking: nothing" in added.stdout
    listed = lar("schedule", "list", home=lar_home).stdout
    assert "cron 30 8 * * *" in listed and "stretch" in listed and "active" in listed
    assert "runs: none yet" in lar("schedule", "show", "1", home=lar_home).stdout
    assert lar("schedule", "pause", "1", home=lar_home).stdout.strip() == "job 1 paused"
    assert "paused" in lar("schedule", "list", home=lar_home).stdout
    assert "job 1 active; next: " in lar("schedule", "resume", "1", home=lar_home).stdout
    assert "job 1 removed: stretch" in lar("schedule", "remove", "1", home=lar_home).stdout
    missing = lar("schedule", "show", "1", home=lar_home)
    assert missing.returncode == 1 and "no job 1 (see `lar schedule list`)" in missing.stderr


def test_a_bad_expression_or_tool_is_a_clear_error_and_stores_nothing(lar_home: Path) -> None:
    bad = lar("schedule", "add", "every 5 fortnights", "x", home=lar_home)
    assert bad.returncode == 1
    assert "cannot read 'every 5 fortnights' as a time; use a cron expression" in bad.stderr
    tool = lar("schedule", "add", "daily 09:00", "x", "--run", "--allow", "rm", home=lar_home)
    assert tool.returncode == 1 and "--allow: unknown tool 'rm'" in tool.stderr
    # Granting a tool needs a person's yes: not in a pipe without --yes.
    unasked = lar("schedule", "add", "daily 09:00", "x", "--run", "--allow", "shell", home=lar_home)
    assert unasked.returncode == 1 and "granting tools needs a yes" in unasked.stderr
    assert "no jobs" in lar("schedule", "list", home=lar_home).stdout


@pytest.mark.parametrize(("policy", "delivered"), [("once", 1), ("skip", 1)])
def test_a_job_due_while_no_scheduler_ran_fires_once_or_is_skipped_on_start(
    lar_home: Path, policy: str, delivered: int
) -> None:
    """The scheduler was down at the due time; each start afterwards is a new process."""
    day = 86400.0
    store = JobStore(lar_home / "lar.db")
    job = store.add("water the plants", "every 1h", tz="UTC", now=time.time() - day, missed=policy)  # type: ignore[arg-type]
    for _ in range(2):  # started, stopped, started again
        done = lar("schedule", "run", "--once", home=lar_home)
        assert done.returncode == 0, done.stderr
    runs = store.runs(job.id)
    assert [r.state for r in runs] == (["done"] if policy == "once" else ["skipped"])
    inbox = lar("inbox", home=lar_home).stdout
    expected = "Reminder: water the plants" if policy == "once" else "skipped: water the plants"
    assert inbox.count(expected) == delivered
    assert "no unread items" in lar("inbox", home=lar_home).stdout  # shown once, then read
    assert lar("inbox", "--all", home=lar_home).stdout.count(expected) == 1


def test_run_now_fires_a_reminder_into_the_inbox_and_a_webhook(lar_home: Path) -> None:
    got: list[dict[str, Any]] = []

    class Hook(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            got.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/hook"
        (lar_home / "config.yaml").write_text(
            f"scheduler:\n  notify:\n    - {{kind: webhook, url: '{url}'}}\n"
        )
        lar("schedule", "add", "tomorrow at 9am", "call my mother", home=lar_home)
        fired = lar("schedule", "run-now", "1", home=lar_home)
        assert fired.returncode == 0, fired.stderr
        assert "job 1 done: call my mother" in fired.stderr
    finally:
        server.shutdown()
        server.server_close()
    assert got == [{"title": "Reminder: call my mother", "body": "call my mother"}]
    assert "Reminder: call my mother" in lar("inbox", home=lar_home).stdout
    # By hand does not use up the schedule: it is still due tomorrow.
    assert "active" in lar("schedule", "list", home=lar_home).stdout
