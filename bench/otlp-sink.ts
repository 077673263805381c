// An OTLP/HTTP receiver for `npm run bench -- --only traces`, run as its own process so that what
// it spends decoding spans is not counted as the service's CPU: it takes POST /v1/traces (JSON),
// counts the spans, and answers GET /count with {spans, requests}. Prints its URL, then serves
// until its parent ends it.
import { createServer } from 'node:http';

let spans = 0;
let requests = 0;
const server = createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  if (req.method === 'GET' && req.url === '/count') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ spans, requests }));
    return;
  }
  requests++;
  try {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { resourceSpans?: { scopeSpans?: { spans?: unknown[] }[] }[] };
    for (const rs of body.resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) spans += ss.spans?.length ?? 0;
  } catch {
    // counted as a request, not as spans
  }
  res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
});
server.listen(0, '127.0.0.1', () => {
  const a = server.address();
  if (a && typeof a === 'object') process.stdout.write(`http://127.0.0.1:${a.port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
