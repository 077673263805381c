// A cancel answers `cancelled` only when its own `execution.cancelled` ended the execution
// (DESIGN.md "Waiting and control": POST /api/executions/{id}/cancel {reason?, cascade?}). Of ten
// cancels at once, all but one answered `cancelled`, though one event was written, with one
// caller's reason and cascade: the others were told their cancel (and their reason) took, where
// it had already finished. They are `already_finished` (execution_status cancelled) now, as a
// cancel after it is, and the one answered `cancelled` is the one whose reason the event records.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';

let s: TestApp;
beforeAll(async () => {
  s = await startTestApp();
});
afterAll(async () => {
  await s?.close();
});

const yaml = `
apiVersion: svc/v1
metadata: { name: gate, path: cancel_once/gate }
workflow:
  - step: gate
    wait: { signal: go }
`;

describe('ten cancels of one execution at once', () => {
  it('one is answered cancelled (its reason recorded), the rest already_finished', async () => {
    expect((await http(s.url, 'POST', '/api/catalog/playbook', { content: yaml })).status).toBe(201);
    const id = (await http(s.url, 'POST', '/api/run/playbook', { path: 'cancel_once/gate', payload: {} })).body.execution_id as number;
    await until('it waits', async () => ((await http(s.url, 'GET', `/api/executions/${id}`)).body.waits as Json[]).length > 0, 10_000);
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => http(s.url, 'POST', `/api/executions/${id}/cancel`, { reason: `caller ${i}` })));
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    const took = answers.flatMap((a, i) => (a.body.status === 'cancelled' ? [i] : []));
    expect(took).toHaveLength(1);
    for (const a of answers) if (a.body.status !== 'cancelled') expect(a.body).toEqual({ status: 'already_finished', execution_id: id, execution_status: 'cancelled' });
    const events = (await http(s.url, 'GET', `/api/events/${id}?limit=1000`)).body.events as Json[];
    const cancelled = events.filter((e) => e.event_type === 'execution.cancelled');
    expect(cancelled).toHaveLength(1);
    expect(cancelled[0].context).toMatchObject({ reason: `caller ${took[0]}` });
  });
});
