import { createServer } from 'node:http';
import { once } from 'node:events';

/** One span as OTLP/HTTP JSON carries it, with the attributes flattened. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  scope: string;
  attributes: Record<string, unknown>;
  /** The spans this one links to, as `traceId/spanId`. */
  links: string[];
}

export interface OtlpReceiver {
  /** The OTEL_EXPORTER_OTLP_ENDPOINT for the service: traces are POSTed to `<endpoint>/v1/traces`. */
  endpoint: string;
  spans: ReceivedSpan[];
  close(): Promise<void>;
}

interface OtlpAttribute {
  key: string;
  value: Record<string, unknown>;
}

/**
 * A minimal OTLP/HTTP traces receiver (no collector is installed here): accepts the JSON encoding
 * (OTEL_EXPORTER_OTLP_PROTOCOL=http/json) and keeps every span it is sent.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      if (request.url === '/v1/traces' && request.headers['content-type'] === 'application/json')
        spans.push(...spansOf(JSON.parse(body)));
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function spansOf(payload: {
  resourceSpans: {
    scopeSpans: {
      scope: { name: string };
      spans: (Omit<ReceivedSpan, 'scope' | 'attributes' | 'links'> & {
        attributes: OtlpAttribute[];
        links?: { traceId: string; spanId: string }[];
      })[];
    }[];
  }[];
}): ReceivedSpan[] {
  return payload.resourceSpans.flatMap((resource) =>
    resource.scopeSpans.flatMap(({ scope, spans }) =>
      spans.map((span) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId || undefined,
        name: span.name,
        kind: span.kind,
        scope: scope.name,
        attributes: Object.fromEntries(
          span.attributes.map(({ key, value }) => [key, Object.values(value)[0]]),
        ),
        links: (span.links ?? []).map((link) => `${link.traceId}/${link.spanId}`),
      })),
    ),
  );
}
