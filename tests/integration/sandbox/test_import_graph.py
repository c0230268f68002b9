"""The sandbox never imports the client, flows, renderers, publishers, policy, verdict or
runner: a bug must not hide behind a matching bug."""

from __future__ import annotations

import ast
import subprocess

from tests.helpers import PY, ROOT

FORBIDDEN = ("client", "transport", "flows", "report", "publish", "policy", "verdict", "runner")
SANDBOX = ROOT / "neens_action" / "sandbox"


def test_no_forbidden_import_in_the_source():
    files = sorted(SANDBOX.rglob("*.py"))
    assert len(files) > 10
    bad = []
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            for name in names:
                parts = name.split(".")
                if parts[0] == "neens_action" and len(parts) > 1 and parts[1] in FORBIDDEN:
                    bad.append(f"{path.relative_to(ROOT)}: {name}")
    assert bad == []


def test_no_forbidden_module_loaded_at_run_time():
    code = (
        "import sys\n"
        "from neens_sandbox.app import load_routes\n"
        "import neens_sandbox.cli, neens_sandbox.runs_api\n"
        "load_routes()\n"
        f"bad = sorted(m for m in sys.modules if m.split('.')[0] == 'neens_action' and "
        f"len(m.split('.')) > 1 and m.split('.')[1] in {FORBIDDEN!r})\n"
        "print(','.join(bad))\n"
    )
    proc = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=60,
                          cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ""
