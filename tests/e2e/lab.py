"""The container lab as the e2e tests use it: Docker, act and gitlab-ci-local.

``../shared/tools/container-lab up`` (run by ``scripts/test e2e``) provides a loopback-only
Docker daemon, a local Debian+Python base image (also tagged ``python:3.12-slim``), act and
gitlab-ci-local; ``container-lab env`` exports where they are. Every container here runs with
``--network host`` so it reaches the sandbox on 127.0.0.1.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.helpers import ROOT

LAB_VARS = ("DOCKER_HOST", "NEENS_BASE_IMAGE", "ACT", "GITLAB_CI_LOCAL")
IMAGE_LABEL = "org.opencontainers.image.title=neens eval-action"  # set by the Dockerfile


def action_image() -> str:
    """The image action.yml names, without the ``docker://`` prefix."""
    image = yaml.safe_load((ROOT / "action.yml").read_text())["runs"]["image"]
    assert image.startswith("docker://"), image
    return image.removeprefix("docker://")


@dataclass
class Lab:
    docker: str
    base_image: str
    act: str
    gitlab_ci_local: str
    env: dict[str, str]

    def run(self, args: list[str], *, timeout: float, cwd: Path | None = None,
            env: dict[str, str] | None = None, log: Path | None = None,
            ) -> subprocess.CompletedProcess[str]:
        """Run a lab tool; stdout+stderr merged (the order matters in CI logs)."""
        started = time.monotonic()
        try:
            proc = subprocess.run(
                args, cwd=cwd, env={**self.env, **(env or {})}, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout,
            )
        except subprocess.TimeoutExpired as exc:
            out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else ""
            if log is not None:
                log.write_text(out or "")
            pytest.fail(f"{Path(args[0]).name} did not finish within {timeout:.0f}s "
                        f"(log: {log}):\n{(out or '')[-3000:]}")
        if log is not None:
            log.write_text(proc.stdout)
            print(f"{Path(args[0]).name}: {time.monotonic() - started:.1f}s, log {log}")
        return proc

    def docker_cmd(self, *args: str, timeout: float = 120, **kw) -> subprocess.CompletedProcess:
        return self.run([self.docker, *args], timeout=timeout, **kw)


def find_lab() -> Lab:
    """The lab from the environment, or a test failure that says how to get it."""
    missing = [v for v in LAB_VARS if not os.environ.get(v)]
    if missing:
        pytest.fail(
            f"the e2e tier needs the container lab ({', '.join(missing)} not set): run "
            "`scripts/test e2e`, or `../shared/tools/container-lab up` then "
            '`eval "$(../shared/tools/container-lab env)"`'
        )
    docker = "/usr/bin/docker" if os.access("/usr/bin/docker", os.X_OK) else shutil.which("docker")
    if docker is None:
        pytest.fail("docker CLI not found: run `../shared/tools/container-lab up`")
    for var in ("ACT", "GITLAB_CI_LOCAL"):
        if not os.access(os.environ[var], os.X_OK):
            pytest.fail(f"{var}={os.environ[var]} is not executable: run container-lab up")
    env = dict(os.environ)
    env.pop("NO_COLOR", None)
    lab = Lab(docker=docker, base_image=os.environ["NEENS_BASE_IMAGE"], act=os.environ["ACT"],
              gitlab_ci_local=os.environ["GITLAB_CI_LOCAL"], env=env)
    info = lab.docker_cmd("info", "--format", "{{.ServerVersion}}", timeout=60)
    if info.returncode != 0:
        pytest.fail(f"the lab's Docker daemon does not answer at {env['DOCKER_HOST']}: "
                    f"{info.stdout.strip()[-500:]}")
    return lab


def build_image(lab: Lab, tag: str, log: Path) -> float:
    """``docker build --network host -t TAG .`` from the repository; returns seconds taken."""
    if not (ROOT / "entrypoint.py").is_file():
        pytest.fail("entrypoint.py is missing at the repository root (the image's ENTRYPOINT)")
    started = time.monotonic()
    # One build at a time from this checkout (pytest-xdist workers each build the session's
    # image): the next one waits and then finds every layer in the daemon's cache.
    log.parent.mkdir(parents=True, exist_ok=True)
    with (log.parent / ".docker-build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        proc = lab.docker_cmd("build", "--network", "host", "-t", tag, str(ROOT), timeout=900,
                              log=log)
        if proc.returncode != 0:
            pytest.fail(f"docker build failed (log {log}):\n{proc.stdout[-4000:]}")
        # Earlier builds of this image, now untagged, would pile up in the lab's daemon.
        lab.docker_cmd("image", "prune", "-f", "--filter", f"label={IMAGE_LABEL}")
    return time.monotonic() - started


def image_size(lab: Lab, image: str) -> int:
    proc = lab.docker_cmd("image", "inspect", "--format", "{{.Size}}", image)
    assert proc.returncode == 0, proc.stdout
    return int(proc.stdout.strip())


def make_repo(dest: Path, files: dict[str, Path | str], *, branch: str = "feature/e2e") -> str:
    """A small git repository at ``dest`` holding ``files`` (repo path -> source path or
    text); returns the commit sha. The e2e platforms run on a copy like this, so tests do not
    depend on untracked files elsewhere in the checkout."""
    dest.mkdir(parents=True, exist_ok=True)
    for rel, src in files.items():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(src, Path) and src.is_dir():
            shutil.copytree(src, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        elif isinstance(src, Path):
            shutil.copy2(src, target)
        else:
            target.write_text(src)
    git = ["git", "-C", str(dest), "-c", "user.name=e2e", "-c", "user.email=e2e@example.com"]
    subprocess.run([*git, "init", "-q", "-b", branch], check=True, timeout=30)
    subprocess.run([*git, "add", "-A"], check=True, timeout=30)
    subprocess.run([*git, "commit", "-q", "-m", "e2e fixture"], check=True, timeout=30)
    subprocess.run([*git, "remote", "add", "origin", "https://example.com/neens/demo.git"],
                   check=True, timeout=30)
    return subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True,
                          text=True, timeout=30).stdout.strip()


def write_event(path: Path, payload: dict) -> Path:
    path.write_text(json.dumps(payload))
    return path


def act_outputs(log: str) -> dict[str, str]:
    """Outputs act reports for the action step (``::set-output:: name=value`` lines)."""
    out: dict[str, str] = {}
    for line in log.splitlines():
        if "::set-output:: " in line:
            name, _, value = line.split("::set-output:: ", 1)[1].partition("=")
            out[name.strip()] = value
    return out


def act_summary(log: str) -> str:
    """The job-summary Markdown act echoes: the ``Summary - `` line and the unprefixed lines
    that follow it, up to the next line of act's own (``[workflow/job] ...``)."""
    parts: list[str] = []
    inside = False
    for line in log.splitlines():
        if "Summary - " in line and line.startswith("["):
            inside = True
            parts.append(line.split("Summary - ", 1)[1])
        elif inside and line.startswith("["):
            inside = False
        elif inside:
            parts.append(line)
    return "\n".join(parts)
