import {
  type Attributes,
  context,
  type Context,
  type Link,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';

type Env = Record<string, string | undefined>;

/** The tracer of our own spans (guard, database); the HTTP span comes from instrumentation-http. */
const TRACER_NAME = 'animal-store-api';

let tracingOn = false;
/** The context whose work is never traced: made when tracing starts, from the SDK's core. */
let untracedContext: Context = ROOT_CONTEXT;

/**
 * Tracing is off unless an OTLP endpoint or a traces exporter is named, with the standard
 * OpenTelemetry variables (docs/observability.md, "Traces"); OTEL_SDK_DISABLED and
 * OTEL_TRACES_EXPORTER=none turn it off.
 */
export function tracingRequested(env: Env = process.env): boolean {
  const named = Boolean(
    env.OTEL_EXPORTER_OTLP_ENDPOINT ||
    env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ||
    env.OTEL_TRACES_EXPORTER,
  );
  return named && env.OTEL_TRACES_EXPORTER !== 'none' && env.OTEL_SDK_DISABLED !== 'true';
}

export interface Tracing {
  shutdown(): Promise<void>;
}

/**
 * Starts the OpenTelemetry SDK when requested; must run before the HTTP server module is loaded,
 * so instrumentation-http sees every request. The SDK is imported only then: with tracing off,
 * none of it is loaded and no hook is installed.
 */
export async function startTracing(env: Env = process.env): Promise<Tracing | undefined> {
  if (!tracingRequested(env)) return undefined;
  // Traces only: metrics are Prometheus's (METRICS_PORT), logs are the JSON lines on stdout.
  env.OTEL_METRICS_EXPORTER ??= 'none';
  env.OTEL_LOGS_EXPORTER ??= 'none';
  env.OTEL_SERVICE_NAME ??= 'animal-store-api';
  const { NodeSDK } = await import('@opentelemetry/sdk-node');
  const { HttpInstrumentation } = await import('@opentelemetry/instrumentation-http');
  const { suppressTracing } = await import('@opentelemetry/core');
  const sdk = new NodeSDK({
    // Incoming requests only: the service makes no outgoing HTTP calls worth a span.
    instrumentations: [new HttpInstrumentation({ disableOutgoingRequestInstrumentation: true })],
  });
  sdk.start();
  untracedContext = suppressTracing(ROOT_CONTEXT);
  tracingOn = true;
  return sdk;
}

export function isTracingOn(): boolean {
  return tracingOn;
}

/**
 * Runs `work` in a child span of the current one when tracing is on; otherwise just runs it, so
 * the off path costs one boolean test.
 */
export function inSpan<T>(
  name: string,
  attributes: Record<string, string | number>,
  work: () => Promise<T>,
): Promise<T> {
  if (!tracingOn) return work();
  return trace
    .getTracer(TRACER_NAME)
    .startActiveSpan(name, { attributes }, (span) => endWhenSettled(span, work()));
}

/**
 * Runs `work` outside every trace, its statements unrecorded: background work that runs every
 * second (the webhook worker's passes) would otherwise be a trace each time, or a part of the
 * request whose commit woke it.
 */
export function untraced<T>(work: () => Promise<T>): Promise<T> {
  if (!tracingOn) return work();
  return context.with(untracedContext, work);
}

/**
 * Runs synchronous `work`, such as writing events to streams, in a span linked to the requests
 * that made those events (`traceParents`, see currentTraceParent); `root` starts a trace of its
 * own instead of a child of the current span.
 */
export function inLinkedSpan(
  name: string,
  traceParents: readonly (string | null)[],
  work: () => void,
  { root = false } = {},
): void {
  if (!tracingOn) return work();
  const options = { links: linksTo(traceParents), root };
  trace.getTracer(TRACER_NAME).startActiveSpan(name, options, (span) => {
    try {
      work();
    } finally {
      span.end();
    }
  });
}

/**
 * Runs `work`, a call to another service made in the background (a webhook delivery attempt),
 * in a client span of a trace of its own, linked to the request that caused it (`traceParent`),
 * even inside `untraced`; the statements `work` runs stay untraced. `outcome` gives the
 * attributes known at the end, and whether the call failed.
 */
export async function inLinkedRootSpan<T>(
  name: string,
  traceParent: string | null,
  attributes: Attributes,
  work: () => Promise<T>,
  outcome: (result: T) => { attributes: Attributes; failed: boolean },
): Promise<T> {
  if (!tracingOn) return work();
  const options = { kind: SpanKind.CLIENT, root: true, links: linksTo([traceParent]), attributes };
  const span = trace.getTracer(TRACER_NAME).startSpan(name, options, ROOT_CONTEXT);
  try {
    const result = await work();
    const { attributes: known, failed } = outcome(result);
    span.setAttributes(known);
    if (failed) span.setStatus({ code: SpanStatusCode.ERROR });
    return result;
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR });
    throw error;
  } finally {
    span.end();
  }
}

/**
 * The W3C traceparent of the current span, which an event keeps so that the span serving it can
 * link to the request that made it (docs/observability.md, "Traces"); null with tracing off.
 */
export function currentTraceParent(): string | null {
  if (!tracingOn) return null;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ?? null;
}

/** Links the current span, the one serving events, to the requests that made them. */
export function linkCurrentSpanTo(traceParents: readonly (string | null)[]): void {
  if (tracingOn) trace.getActiveSpan()?.addLinks(linksTo(traceParents));
}

/** Links to the spans that stored trace parents name; a missing or invalid one gives none. */
function linksTo(traceParents: readonly (string | null)[]): Link[] {
  const links: Link[] = [];
  for (const traceparent of traceParents) {
    if (traceparent === null) continue;
    const spanContext = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, { traceparent }));
    if (spanContext && trace.isSpanContextValid(spanContext)) links.push({ context: spanContext });
  }
  return links;
}

async function endWhenSettled<T>(span: Span, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR });
    throw error;
  } finally {
    span.end();
  }
}
