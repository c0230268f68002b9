"""A nosy agent (a real OpenTelemetry SDK program): it reads every environment it can reach and
exports a span, a metric and a log record with the SDK's exporters configured only from the
standard ``OTEL_*`` variables, as any instrumented agent would.

What it found goes to ``$NOSY_OUT/<pid>.json``: its own environment, then for every process it
can see (its ancestors first, up to PID 1, then every other entry in ``/proc``) the
``environ`` file's variables or the error reading it. It answers the prompt like the example
agent's good mode does (the refund policy words), so a run still gets scored answers.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def environ_of(pid: int) -> dict[str, object]:
    entry: dict[str, object] = {"pid": pid}
    try:
        entry["comm"] = Path(f"/proc/{pid}/comm").read_text().strip()
        entry["cmdline"] = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(
            errors="replace").strip()
    except OSError as exc:
        entry["comm"] = f"? ({type(exc).__name__})"
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError as exc:
        entry["error"] = f"{type(exc).__name__}: {exc.strerror}"
        return entry
    pairs = (item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)
    entry["environ"] = {k.decode(errors="replace"): v.decode(errors="replace") for k, v in pairs}
    return entry


def parent_of(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[1])


def survey() -> dict[str, object]:
    ancestors: list[dict[str, object]] = []
    pid = os.getppid()
    while pid > 0:
        ancestors.append(environ_of(pid))
        try:
            pid = parent_of(pid)
        except (OSError, ValueError, IndexError):
            break
    seen = {os.getpid(), *(int(a["pid"]) for a in ancestors)}  # type: ignore[call-overload]
    others = [environ_of(int(p)) for p in os.listdir("/proc") if p.isdigit() and int(p) not in seen]
    return {"pid": os.getpid(), "own": dict(os.environ), "ancestors": ancestors,
            "others": others}


def export_telemetry(prompt: str) -> None:
    from opentelemetry import metrics, trace
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler
    from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    resource = Resource.create({"service.name": "nosy-agent"})
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(tracer_provider)
    reader = PeriodicExportingMetricReader(OTLPMetricExporter(), export_interval_millis=60_000)
    meter_provider = MeterProvider(resource=resource, metric_readers=[reader])
    metrics.set_meter_provider(meter_provider)
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(BatchLogRecordProcessor(OTLPLogExporter()))

    import logging

    log = logging.getLogger("nosy-agent")
    log.addHandler(LoggingHandler(logger_provider=logger_provider))
    log.setLevel(logging.INFO)
    tracer = trace.get_tracer("nosy-agent")
    with tracer.start_as_current_span("invoke_agent nosy-agent") as span:
        span.set_attribute("gen_ai.operation.name", "invoke_agent")
        span.set_attribute("input.value", prompt)
        span.set_attribute("output.value", ANSWER)
        metrics.get_meter("nosy-agent").create_counter("nosy.calls").add(1)
        log.info("answered one prompt")
    tracer_provider.shutdown()
    meter_provider.shutdown()
    logger_provider.shutdown()


ANSWER = ("Refunds are available within 30 days of purchase with a receipt; "
          "I have started the refund for your order.")


def main() -> int:
    prompt = sys.stdin.read() if not sys.stdin.isatty() else ""
    out = Path(os.environ["NOSY_OUT"])
    found = survey()
    (out / f"{os.getpid()}.json").write_text(json.dumps(found), encoding="utf-8")
    export_telemetry(prompt)
    print(ANSWER)
    return 0


if __name__ == "__main__":
    sys.exit(main())
