// A real OTLP/HTTP receiver for tests: a node http server on 127.0.0.1 port 0 that takes what an
// OTLP/HTTP JSON exporter POSTs to /v1/traces and decodes it into plain spans.
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };

/** A span as received, its attributes flattened (ints as numbers). */
export type ReceivedSpan = {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 3 client. */
  kind: number;
  startMs: number;
  endMs: number;
  attributes: Record<string, string | number | boolean>;
  status: { code?: number; message?: string };
  events: { name: string }[];
  resource: Record<string, string | number | boolean>;
};

export type OtlpReceiver = {
  url: string;
  spans: ReceivedSpan[];
  /** Every request body as received (to look for what must never be there). */
  bodies: string[];
  /** Every request's headers as received (an endpoint's login arrives as Basic auth). */
  headers: IncomingHttpHeaders[];
  close(): Promise<void>;
};

function valueOf(v: AnyValue): string | number | boolean {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.boolValue !== undefined) return v.boolValue;
  return v.doubleValue ?? '';
}

const attributesOf = (list: { key: string; value: AnyValue }[] = []) => Object.fromEntries(list.map((a) => [a.key, valueOf(a.value)]));
const nanosToMs = (n: string | number) => Number(BigInt(n) / 1000n) / 1000;

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const bodies: string[] = [];
  const headers: IncomingHttpHeaders[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    bodies.push(text);
    headers.push(req.headers);
    if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).includes('json')) {
      res.writeHead(400).end();
      return;
    }
    const body = JSON.parse(text);
    for (const rs of body.resourceSpans ?? []) {
      const resource = attributesOf(rs.resource?.attributes);
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          spans.push({
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId ?? '',
            name: s.name,
            kind: s.kind,
            startMs: nanosToMs(s.startTimeUnixNano),
            endMs: nanosToMs(s.endTimeUnixNano),
            attributes: attributesOf(s.attributes),
            status: s.status ?? {},
            events: (s.events ?? []).map((e: { name: string }) => ({ name: e.name })),
            resource,
          });
        }
      }
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('receiver is not listening on TCP');
  return {
    url: `http://127.0.0.1:${address.port}`,
    spans,
    bodies,
    headers,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
