"""Per-item resources in a long-lived agent process (the agent side of worker mode).

Neens links a span to its item by the *resource* attributes ``neens.eval_run_id``,
``neens.dataset_item_id`` and ``neens.version_label`` (never only span attributes). One
process serves many items, so the global tracer provider's resource cannot carry them:
:class:`ItemTracing` adds a span processor to the provider that gives every span started
while an item is in hand the provider's resource merged with that item's attributes. All
the provider's processors (the agent's own exporters included) then see the item's
resource when the span ends. Items are served one at a time per process, and the spans of
an item are flushed (``force_flush``) before it is answered.

The processor sets the span's resource when it starts (the SDK keeps it in
``Span._resource``; checked once: an SDK without it is reported, never silently wrong).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

from neens_action.agents.correlation import otlp_configured

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import ReadableSpan, Span, TracerProvider

FLUSH_MILLIS = 30_000


def _warn(text: str) -> None:
    print(f"neens worker: warning: {text}", file=sys.stderr, flush=True)


def _processor_class() -> type:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import SpanProcessor

    class ItemResource(SpanProcessor):
        """Merges the item's attributes into the resource of every span it starts."""

        def __init__(self) -> None:
            self.attrs: dict[str, str] | None = None
            self.merged: dict[int, Resource] = {}  # id(base resource) -> merged, this item
            self.broken = False

        def begin(self, attrs: Mapping[str, str] | None) -> None:
            self.attrs = dict(attrs) if attrs else None
            self.merged = {}

        def on_start(self, span: Span, parent_context: Context | None = None) -> None:
            if self.attrs is None or self.broken:
                return
            base = span.resource
            merged = self.merged.get(id(base))
            if merged is None:
                merged = self.merged[id(base)] = base.merge(Resource(self.attrs))
            if not hasattr(span, "_resource"):
                self.broken = True
                _warn("this OpenTelemetry SDK keeps a span's resource elsewhere: spans "
                      "cannot be linked to their items (pin opentelemetry-sdk>=1.25,<2)")
                return
            span._resource = merged

        def on_end(self, span: ReadableSpan) -> None:
            return None

        def shutdown(self) -> None:
            return None

        def force_flush(self, timeout_millis: int = FLUSH_MILLIS) -> bool:
            return True

    return ItemResource


class ItemTracing:
    """The global tracer provider, set up from the standard OTLP variables when the agent
    set none, and (``per_item``) hooked so each item's spans carry its resource."""

    def __init__(self, provider: TracerProvider | None, *, owned: bool,
                 per_item: bool) -> None:
        self.provider = provider
        self.owned = owned  # we made it: we shut it down at the end
        self.hook = None
        if provider is not None and per_item:
            self.hook = _processor_class()()
            provider.add_span_processor(self.hook)

    @classmethod
    def setup(cls, *, per_item: bool) -> ItemTracing:
        try:
            from opentelemetry import trace
            from opentelemetry.sdk.trace import TracerProvider
        except ImportError:
            if otlp_configured(os.environ):
                _warn("OpenTelemetry is not installed: no spans are exported "
                      "(pip install 'neens-action[agent]')")
            return cls(None, owned=False, per_item=per_item)
        current = trace.get_tracer_provider()
        if isinstance(current, TracerProvider):
            return cls(current, owned=False, per_item=per_item)
        if not isinstance(current, trace.ProxyTracerProvider):
            if per_item:
                _warn(f"the global tracer provider is a {type(current).__name__}, not the "
                      "OpenTelemetry SDK's: spans cannot be linked to their items")
            return cls(None, owned=False, per_item=per_item)
        if not otlp_configured(os.environ):
            return cls(None, owned=False, per_item=per_item)
        provider = _otlp_provider()
        trace.set_tracer_provider(provider)
        return cls(provider, owned=True, per_item=per_item)

    def begin(self, resource: Mapping[str, str] | None) -> None:
        """An item is in hand: spans started from now on carry ``resource`` too."""
        if self.hook is not None:
            self.hook.begin(resource)

    def end(self) -> None:
        """The item is done: export its spans (before it is answered)."""
        if self.hook is not None:
            self.hook.begin(None)
        if self.provider is not None and not self.provider.force_flush(FLUSH_MILLIS):
            _warn(f"spans were not all exported within {FLUSH_MILLIS // 1000}s")

    def close(self) -> None:
        if self.provider is None:
            return
        if self.owned:
            self.provider.shutdown()
        else:
            self.provider.force_flush(FLUSH_MILLIS)


def _otlp_provider() -> TracerProvider:
    """A provider exporting OTLP/HTTP as the standard OTEL_* variables say."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider: TracerProvider = TracerProvider(resource=Resource.create())
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    return provider

