// A refund agent on the Vercel AI SDK, traced with OpenTelemetry for Neens.
// Reads the question on stdin, prints the answer.
//
// OTLP over HTTP to OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces; the SDK's resource picks up
// OTEL_RESOURCE_ATTRIBUTES (the Neens run and item ids). The model is whatever
// OPENAI_BASE_URL / OPENAI_API_KEY point at.
import { createOpenAI } from '@ai-sdk/openai';
import { LegacyOpenTelemetry, OpenTelemetry } from '@ai-sdk/otel';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { generateText, registerTelemetry } from 'ai';

const sdk = new NodeSDK({ traceExporter: new OTLPTraceExporter() });
sdk.start();
// AI SDK 7 records spans only through a registered integration: OpenTelemetry writes the GenAI
// conventions (gen_ai.*); AI_TELEMETRY=legacy picks the ai.* attributes of earlier versions.
registerTelemetry(process.env.AI_TELEMETRY === 'legacy' ? new LegacyOpenTelemetry()
  : new OpenTelemetry());

const SYSTEM = 'You are a refund assistant. State the refund amount as $X.XX.';

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8').trim();
}

try {
  const question = (await readStdin()) || process.env.NEENS_ITEM_INPUT || '';
  const openai = createOpenAI({ baseURL: process.env.OPENAI_BASE_URL });
  const { text } = await generateText({
    // .chat(): Chat Completions, which any OpenAI-compatible endpoint serves.
    model: openai.chat(process.env.NEENS_EVAL_MODEL || 'gpt-4o-mini'),
    system: SYSTEM,
    prompt: question,
    // recordOutputs (the default) keeps the answer in the trace; Neens scores it.
    telemetry: { functionId: 'refund-agent', recordOutputs: true },
  });
  console.log(text);
} finally {
  // Nothing is exported unless the program awaits the SDK's shutdown (it flushes the spans).
  await sdk.shutdown();
}
