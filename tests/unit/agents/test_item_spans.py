"""ItemTracing hooks into an SDK tracer provider the agent set up itself: spans started while
an item is in hand carry the item's resource (merged into the provider's), whichever
processor exports them; outside an item they keep the provider's resource."""

from __future__ import annotations

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from neens_action.agents.item_spans import ItemTracing


def test_each_items_spans_carry_its_resource():
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource({"service.name": "svc", "team": "a"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))  # the agent's own exporter
    tracer = provider.get_tracer("agent")  # got before the hook, as a framework would
    tracing = ItemTracing(provider, owned=False, per_item=True)
    for item in ("it_1", "it_2"):
        tracing.begin({"neens.eval_run_id": "ppr_1", "neens.dataset_item_id": item,
                       "neens.version_label": "v1"})
        with tracer.start_as_current_span(f"root {item}"), \
                tracer.start_as_current_span(f"child {item}"):
            pass
        tracing.end()
    with tracer.start_as_current_span("between items"):
        pass
    spans = {s.name: dict(s.resource.attributes) for s in exporter.get_finished_spans()}
    for item in ("it_1", "it_2"):
        for name in (f"root {item}", f"child {item}"):
            assert spans[name] == {"service.name": "svc", "team": "a",
                                   "neens.eval_run_id": "ppr_1",
                                   "neens.dataset_item_id": item,
                                   "neens.version_label": "v1"}
    assert spans["between items"] == {"service.name": "svc", "team": "a"}
