# neens eval-action: the container behind the GitHub Action, the GitLab component and the
# Jenkins `docker run` recipe. Published as ghcr.io/neens/eval-action:<version> (and :<major>).
#
#   docker build --network host -t ghcr.io/neens/eval-action:1.0.0 .
#   docker run --rm IMAGE neens --version          # a CLI word runs the `neens` CLI
#   docker run --rm -e INPUT_... IMAGE             # no arguments: the CI front door
ARG BASE_IMAGE=python:3.12-slim
FROM ${BASE_IMAGE}

LABEL org.opencontainers.image.title="neens eval-action" \
      org.opencontainers.image.description="Run Neens pre-prod evaluations as a CI gate" \
      org.opencontainers.image.source="https://github.com/neens/eval-action" \
      org.opencontainers.image.licenses="Apache-2.0"

# A virtualenv keeps our pinned dependencies apart from the distribution's Python and gives the
# `install` input a pip that writes where the agent's python3 looks. It comes first on PATH,
# so `python3`, `pip` and `neens` are all the venv's.
ENV PATH=/opt/neens/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore

# git: for the `install` input (e.g. `pip install git+https://...`); neens itself never runs
# git (provenance comes from the CI variables), so git keeps its default ownership check on
# the mounted checkout: no exception is configured. Installed only when the base lacks it.
RUN set -eux; \
    if ! command -v git >/dev/null 2>&1; then \
        apt-get update; \
        apt-get install -y --no-install-recommends git ca-certificates; \
        rm -rf /var/lib/apt/lists/*; \
    fi

# Dependencies first, the package second, so editing the code does not re-download the
# dependencies. Every wheel is checked against its sha256 (requirements-image.txt: the pins of
# constraints.txt and the build backend, written by scripts/update-image-hashes): a wheel
# that changed on the index fails the build. The `agent` extra (OpenTelemetry SDK +
# OTLP/HTTP exporter) is baked in: the pull flow's agent runs inside this container.
COPY constraints.txt requirements-image.txt /opt/neens/
RUN set -eux; \
    python3 -m venv /opt/neens/venv; \
    pip install --no-cache-dir --only-binary=:all: --require-hashes \
        -r /opt/neens/requirements-image.txt; \
    find /opt/neens/venv/lib -path '*/site-packages/pip/*' -name __pycache__ -prune \
        -exec rm -rf {} +

# Only neens_action: the sandbox (neens_sandbox, a test and demo server) and its `sandbox`
# extra stay out of the image; pyproject's package `include` tolerates the missing folder.
# (opentelemetry-proto is still here, as a dependency of the agent extra's OTLP exporter.)
COPY pyproject.toml README.md* LICENSE* /opt/neens/src/
COPY neens_action /opt/neens/src/neens_action
# Nothing is fetched here: the dependencies are in, and the build backend is the hashed one
# (no build isolation). Smaller: setuptools and wheel then go (not needed at run time).
RUN set -eux; \
    pip install --no-cache-dir --no-deps --no-build-isolation --no-index '/opt/neens/src[agent]'; \
    pip check; \
    pip uninstall -y -q setuptools wheel; \
    rm -rf /opt/neens/src; \
    neens --version

COPY entrypoint.py /opt/neens/entrypoint.py

# No USER: GitHub runs Docker actions as root with the workspace mounted; no WORKDIR
# reliance: every platform passes its own working directory.
ENTRYPOINT ["python3", "/opt/neens/entrypoint.py"]
