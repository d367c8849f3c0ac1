"""``lar serve`` on the embedded model, spoken to by the official ``openai`` package (I2)."""

from __future__ import annotations

from pathlib import Path

import httpx
import openai
from tests.server._process import ask_streaming, auth, lar_serve, token_of


def test_the_openai_package_gets_tool_using_answers_from_lar_serve(
    lar_home: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "2.4.1"\n')
    with lar_serve(lar_home, cwd=work, wait_s=300) as url:
        client = openai.OpenAI(
            base_url=f"{url}/v1", api_key=token_of(lar_home), max_retries=0, timeout=300
        )
        ids = [m.id for m in client.models.list()]
        assert "lar" in ids and "lar/default" in ids
        reply = client.chat.completions.create(
            model="lar",
            messages=[{"role": "user", "content": "What version does pyproject.toml declare?"}],
        )
        content = reply.choices[0].message.content or ""
        assert "> ⚙ file_read" in content, content  # the tool activity, readable
        assert "2.4.1" in content.split("\n\n")[-1], content
        assert reply.usage is not None and reply.usage.prompt_tokens > 0
        text, usage = ask_streaming(client, "What is 1234 * 5678? Use the calculator.")
        assert "> ⚙ calculate" in text, text
        assert "7006652" in text.replace(",", "").replace(" ", ""), text
        assert usage is not None and usage.completion_tokens > 0
        ready = httpx.get(f"{url}/health/ready", headers=auth(lar_home), timeout=30)
        assert ready.status_code == 200, ready.text
