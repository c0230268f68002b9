"""The sandbox is its own package: ``neens_sandbox`` imports nothing from ``neens_action`` (so a
bug in the client cannot hide behind a matching bug in the server), and ``neens_action`` knows
the sandbox only by the one lazy CLI entry string (``neens sandbox ...``). Both are checked in
the source (every import statement, function-level ones included, by ``ast``) and at run time
(the sandbox serves with ``neens_action`` made unimportable)."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import requests

from tests.helpers import PY, ROOT, SEED, TEST_KEY

SANDBOX = ROOT / "neens_sandbox"
PRODUCT = ROOT / "neens_action"
# The one place neens_action names the sandbox: its entry in the `neens` command table.
CLI_ENTRY = (PRODUCT / "cli" / "app.py", "neens_sandbox.cli")


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in ``path``, wherever it stands."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found += [(node.lineno, node.module)]
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
    return found


def _code_strings(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every string literal that is not a docstring (dynamic imports)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and id(n) not in docstrings]


def _top(name: str) -> str:
    return name.split(".")[0]


def test_the_sandbox_imports_nothing_from_neens_action():
    files = sorted(SANDBOX.rglob("*.py"))
    assert len(files) > 20
    bad = []
    for path in files:
        where = path.relative_to(ROOT)
        bad += [f"{where}:{line}: import {name}" for line, name in _imports(path)
                if _top(name) == "neens_action"]
        bad += [f"{where}:{line}: {text!r}" for line, text in _code_strings(path)
                if "neens_action" in text]
    assert bad == []


def test_neens_action_names_the_sandbox_only_in_its_lazy_cli_entry():
    files = sorted(PRODUCT.rglob("*.py"))
    assert len(files) > 20
    bad, entries = [], []
    for path in files:
        where = path.relative_to(ROOT)
        bad += [f"{where}:{line}: import {name}" for line, name in _imports(path)
                if _top(name) == "neens_sandbox"]
        for line, text in _code_strings(path):
            if "neens_sandbox" not in text:
                continue
            if (path, text) == CLI_ENTRY:
                entries.append(line)
            else:
                bad.append(f"{where}:{line}: {text!r}")
    assert bad == []
    assert len(entries) == 1, "the `neens sandbox` entry of cli/app.py's _COMMANDS is gone"


def _sandbox_graph() -> dict[str, set[str]]:
    """Module -> sandbox modules it imports (module- and function-level, ``from X import m``
    counted as ``X.m`` when that is a module)."""
    modules = {}
    for path in SANDBOX.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = set()
        for _, imported in _imports(path):
            while imported and imported not in modules:
                imported = imported.rpartition(".")[0]
            if imported and imported != name:
                targets.add(imported)
        graph[name] = targets
    return graph


def test_the_sandbox_has_no_import_circle():
    graph = _sandbox_graph()
    assert {"neens_sandbox.runs_api", "neens_sandbox.routes.traces"} <= set(graph)
    circles = []
    for start in sorted(graph):
        seen, todo = set(), list(graph[start])
        while todo:
            node = todo.pop()
            if node == start:
                circles.append(start)
                break
            if node not in seen:
                seen.add(node)
                todo.extend(graph[node])
    assert circles == []


def test_the_sandbox_loads_no_neens_action_module_at_run_time():
    code = (
        "import contextlib, io, sys\n"
        "from neens_sandbox.app import load_routes\n"
        "from neens_sandbox.cli import main\n"
        "import neens_sandbox.runs_api\n"
        "load_routes()\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    rc = main(['serve', '--help'])\n"
        "print(rc, ','.join(sorted(m for m in sys.modules if m.split('.')[0] == 'neens_action')))\n"
    )
    proc = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "0"


def test_python_m_neens_sandbox_serves_with_neens_action_unimportable(tmp_path):
    # A neens_action that cannot be imported, first on the path (the cwd is not the checkout).
    blocker = tmp_path / "blocker" / "neens_action"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('neens_action is blocked here')\n")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(blocker.parent)}
    check = subprocess.run([PY, "-c", "import neens_action"], capture_output=True, text=True,
                           timeout=60, cwd=tmp_path, env=env)
    assert check.returncode == 1 and "blocked here" in check.stderr
    proc = subprocess.Popen(
        [PY, "-m", "neens_sandbox", "serve", "--host", "127.0.0.1", "--port", "0",
         "--db", str(tmp_path / "s.db"), "--seed", str(SEED), "--api-key", TEST_KEY],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=env)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("sandbox listening on http://127.0.0.1:"), proc.stderr
        url = line.split("listening on ", 1)[1].split()[0]
        resp = requests.get(f"{url}/flywheel/gates/ci", timeout=10,
                            headers={"Authorization": f"Bearer {TEST_KEY}"})
        assert resp.status_code == 200 and resp.json()["gates"], resp.text
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "Traceback" not in err
