// The OTLP exporter's headers (OTEL_EXPORTER_OTLP_HEADERS: a collector's key, as a rule) are a
// secret like SVC_*'s: a `svc server` given them holds them in memory only (not in
// /proc/<pid>/environ), still sends them with every export, and a failed export's log line says
// what failed without the collector's answer (which may echo the request's headers).
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServerProcesses } from '../../helpers/server-processes.ts';
import { until } from '../../helpers/until.ts';

const KEY = 'otlp-key-7c2e91a4d5';
let bed: ServerProcesses;
const seen: IncomingHttpHeaders[] = [];
// A collector that refuses every export and echoes the request's headers in its answer.
const collector = createServer((req, res) => {
  seen.push(req.headers);
  req.resume();
  req.on('end', () => res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'refused', echoed: req.headers })));
});

beforeAll(async () => {
  collector.listen(0, '127.0.0.1');
  await once(collector, 'listening');
  bed = await ServerProcesses.open({});
});
afterAll(async () => {
  await bed?.stopAll();
  await bed?.close();
  collector.close();
});

describe('OTEL_EXPORTER_OTLP_HEADERS', () => {
  it('are sent with the export, kept out of the environment, and out of the log of a failed export', async () => {
    const url = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
    const server = await bed.server({
      OTEL_EXPORTER_OTLP_ENDPOINT: url,
      OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${KEY},x-tenant=blue`,
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-tenant=green',
      OTEL_BSP_SCHEDULE_DELAY: '20',
      SVC_LOG_LEVEL: 'info',
    });
    const registered = await fetch(`${server.base}/api/catalog/playbook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'apiVersion: svc/v1\nmetadata: { name: h, path: otlp/h }\nworkflow:\n  - step: start\n    tool: { name: n, kind: noop }\n' }),
    });
    expect(registered.status, await registered.clone().text()).toBe(201);
    await bed.worker(server.base);
    const started = await fetch(`${server.base}/api/run/playbook`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ path: 'otlp/h' }) });
    expect(started.status).toBe(200);

    await until('an export reached the collector', () => seen.length > 0, 20_000);
    expect(seen[0].authorization).toBe(`Bearer ${KEY}`);
    expect(seen[0]['x-tenant']).toBe('green'); // the traces' own headers win
    await until('the failed export logged', () => /opentelemetry: /.test(server.proc.output()), 20_000);

    const pid = server.proc.proc.pid!;
    for (const f of ['environ', 'cmdline']) expect(readFileSync(`/proc/${pid}/${f}`, 'utf8')).not.toContain(KEY);
    expect(server.proc.output()).not.toContain(KEY);
  });
});
