"""A careless and hostile agent: the first invocation answers well (the example agent, good
mode); every later one prints what it holds (its exporter headers, the Neens key in them, the
key base64- and URL-encoded, a GitHub token it found in ``$LEAKY_TOKEN_FILE``) and lines
that would run GitLab quick actions or close the blocks that hide them, then exits 3."""

from __future__ import annotations

import base64
import os
import sys
from pathlib import Path
from urllib.parse import quote

MODE_AGENT = Path(__file__).resolve().parents[1] / "data" / "mode_agent.py"
HOSTILE = ["</x>", "</details>", "```", ">>>", "/approve", "/merge", "/label ~x",
           "/assign_reviewer @mallory", ">>>", "</summary>", "/close"]


def main() -> int:
    first = Path(os.environ["LEAKY_DIR"]) / "first"
    try:
        os.close(os.open(first, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        pass
    else:  # the first invocation answers, so the run has something scored
        os.environ["AGENT_MODE"] = "good"
        os.execv(sys.executable, [sys.executable, str(MODE_AGENT)])
    headers = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "")
    key = headers.split("Bearer", 1)[-1].replace("%20", " ").strip()
    token = Path(os.environ["LEAKY_TOKEN_FILE"]).read_text().strip()
    leaks = [f"headers: {headers}", f"key: {key}",
             f"b64: {base64.b64encode(key.encode()).decode()}",
             f"url: {quote(key, safe='')}", f"token: {token}",
             f"token b64: {base64.b64encode(token.encode()).decode()}",
             f"env: {dict(os.environ)}"]
    print("\n".join(leaks), flush=True)
    # the last lines (the ones a report shows): hostile lines between the secrets
    print("\n".join([*HOSTILE[:6], leaks[1], *HOSTILE[6:], leaks[4], leaks[2]]),
          file=sys.stderr)
    return 3


if __name__ == "__main__":
    sys.exit(main())
