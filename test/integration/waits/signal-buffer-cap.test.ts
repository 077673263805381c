// Signals kept for a step that waits later (`buffer: true`) are bounded per execution, in number
// (MAX_KEPT_SIGNALS) and in their payloads' bytes together (MAX_KEPT_SIGNAL_BYTES; docs/operations.md
// "Signals"): each is an event and a part of the state (written and read whole) until a step takes
// it, so without a bound one client could grow both without end. One more is 409
// signal_buffer_full naming the limit, and nothing is stored; an Idempotency-Key repeat of a kept
// one answers as before; signals racing for the last places on two servers never take more.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_KEPT_SIGNAL_BYTES, MAX_KEPT_SIGNALS } from '../../../actors/route-report.ts';
import { startSecondServer, startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';

let s: TestApp;
let other: Awaited<ReturnType<typeof startSecondServer>>;
beforeAll(async () => {
  s = await startTestApp();
  other = await startSecondServer(s);
  // `hold` keeps the execution from reaching the steps that keep `go` and `more`; the arc from
  // `last` back to `gate` (never taken) keeps them ahead once passed, so signals are still kept.
  const r = await post('/api/catalog/playbook', {
    content: `
apiVersion: svc/v1
metadata: { name: kept, path: cap/kept }
workflow:
  - step: hold
    wait: { signal: hold }
    next: gate
  - step: gate
    wait: { signal: go, buffer: true }
    next: more
  - step: more
    wait: { signal: more, buffer: true }
    next: last
  - step: last
    wait: { signal: last }
    next:
      - { step: gate, when: "{{ workload.again | default(false) }}" }
`,
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
});
afterAll(async () => {
  await other?.close();
  await s?.close();
});

function post(path: string, body: unknown = {}, headers: Record<string, string> = {}, base = s.url) {
  return http(base, 'POST', path, body, headers);
}
const signal = (id: number, name: string, n: number, headers: Record<string, string> = {}, base = s.url) => post(`/api/executions/${id}/signals/${name}`, { payload: { n } }, headers, base);
/** A signal whose payload is text of `chars` characters: its JSON, what the bound counts, is `chars + 2` bytes. */
const sized = (id: number, name: string, chars: number, headers: Record<string, string> = {}, base = s.url) =>
  post(`/api/executions/${id}/signals/${name}`, { payload: 'x'.repeat(chars) }, headers, base);

async function started(): Promise<number> {
  const r = await post('/api/run/playbook', { path: 'cap/kept' });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const id = r.body.execution_id as number;
  await until(`execution ${id} waits`, async () => ((await http(s.url, 'GET', `/api/executions/${id}`)).body.waits ?? []).length > 0, 10_000);
  return id;
}
async function received(id: number): Promise<Json[]> {
  const events = (await http(s.url, 'GET', `/api/events/${id}?limit=1000`)).body.events as Json[];
  return events.filter((e) => e.event_type === 'signal.received');
}
/** Sends `count` signals `go` one after another, each kept. */
async function fill(id: number, count: number, from = 0): Promise<void> {
  for (let i = from; i < from + count; i++) {
    const r = await signal(id, 'go', i);
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    expect(r.body.status).toBe('buffered');
  }
}

describe('signals kept for a step that waits later', () => {
  it(`keeps at most ${MAX_KEPT_SIGNALS} of every name together; one more is 409 signal_buffer_full naming the limit and stores nothing`, async () => {
    const id = await started();
    const first = await signal(id, 'go', -1, { 'idempotency-key': 'first' });
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    // One of another name: the bound is the execution's, not a name's.
    expect((await signal(id, 'more', 0)).status).toBe(202);
    await fill(id, MAX_KEPT_SIGNALS - 2);
    expect(await received(id)).toHaveLength(MAX_KEPT_SIGNALS);

    for (const name of ['go', 'more']) {
      const over = await signal(id, name, 1_000);
      expect(over.status, JSON.stringify(over.body)).toBe(409);
      expect(over.body.detail).toMatchObject({ code: 'signal_buffer_full', limit: MAX_KEPT_SIGNALS });
      expect(over.body.detail.message).toContain(String(MAX_KEPT_SIGNALS));
    }
    // Nothing stored: the log holds the kept ones only.
    expect(await received(id)).toHaveLength(MAX_KEPT_SIGNALS);

    // A repeat of a kept one (its Idempotency-Key) answers as the first did, at the bound.
    const again = await signal(id, 'go', -1, { 'idempotency-key': 'first' });
    expect(again.status).toBe(202);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');

    // A signal a waiting step takes is not kept: delivered at the bound. Its step moves on and
    // takes a kept `go` and a kept `more`: room for two again.
    const held = await signal(id, 'hold', 0);
    expect(held.status, JSON.stringify(held.body)).toBe(202);
    expect(held.body.status).toBe('delivered');
    await until('the kept signals taken', async () => ((await http(s.url, 'GET', `/api/executions/${id}`)).body.waits ?? []).some((w: Json) => w.step === 'last'), 10_000);
    expect((await signal(id, 'go', 2_000)).status).toBe(202);
    expect((await signal(id, 'more', 2_000)).status).toBe(202);
    expect((await signal(id, 'go', 2_001)).status).toBe(409);
  }, 60_000);

  it('twenty racing for the last three places, on two servers: three kept, the rest 409, none 5xx', async () => {
    const id = await started();
    await fill(id, MAX_KEPT_SIGNALS - 3);
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => signal(id, 'go', 100 + i, {}, i % 2 ? other.url : s.url)));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((x) => x === 202), JSON.stringify(statuses)).toHaveLength(3);
    expect(statuses.filter((x) => x === 409), JSON.stringify(statuses)).toHaveLength(17);
    for (const r of answers.filter((x) => x.status === 409)) expect(r.body.detail).toMatchObject({ code: 'signal_buffer_full' });
    expect(await received(id)).toHaveLength(MAX_KEPT_SIGNALS);
  }, 60_000);

  it('one signal sent ten times at once with one Idempotency-Key for the last place: all answered as the one that took it', async () => {
    const id = await started();
    await fill(id, MAX_KEPT_SIGNALS - 1);
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => signal(id, 'go', 7, { 'idempotency-key': 'last-place' }, i % 2 ? other.url : s.url)));
    expect(answers.map((a) => a.status), JSON.stringify(answers.map((a) => a.body))).toEqual(Array(10).fill(202));
    for (const a of answers) expect(a.body).toEqual(answers[0].body);
    expect(await received(id)).toHaveLength(MAX_KEPT_SIGNALS);
  }, 60_000);

  it(`keeps payloads of at most ${MAX_KEPT_SIGNAL_BYTES} bytes together; one more is 409 signal_buffer_full naming the limit and stores nothing`, async () => {
    const id = await started();
    const half = MAX_KEPT_SIGNAL_BYTES / 2 - 100;
    const first = await sized(id, 'go', half, { 'idempotency-key': 'big-first' });
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    expect(first.body.status).toBe('buffered');
    // Another name counts toward the same bound (the execution's).
    expect((await sized(id, 'more', half)).status).toBe(202);
    // 2 * (half + 2) = the limit - 196 bytes kept: a small one fits, 200 bytes more do not.
    expect((await signal(id, 'go', 1)).status).toBe(202);
    for (const name of ['go', 'more']) {
      const over = await sized(id, name, 200);
      expect(over.status, JSON.stringify(over.body)).toBe(409);
      expect(over.body.detail).toMatchObject({ code: 'signal_buffer_full', limit: MAX_KEPT_SIGNALS, limit_bytes: MAX_KEPT_SIGNAL_BYTES });
      expect(over.body.detail.message).toContain(String(MAX_KEPT_SIGNAL_BYTES));
    }
    // One over the whole bound alone: never kept, whatever the execution keeps.
    const alone = await sized(id, 'go', MAX_KEPT_SIGNAL_BYTES);
    expect(alone.status, JSON.stringify(alone.body)).toBe(409);
    expect(alone.body.detail).toMatchObject({ code: 'signal_buffer_full', limit_bytes: MAX_KEPT_SIGNAL_BYTES });
    expect(await received(id)).toHaveLength(3);

    // A repeat of a kept one (its Idempotency-Key) answers as the first did, at the bound.
    const again = await sized(id, 'go', half, { 'idempotency-key': 'big-first' });
    expect(again.status).toBe(202);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');

    // A signal a waiting step takes is not kept, so not bounded by it (its body's limit bounds it).
    const held = await sized(id, 'hold', MAX_KEPT_SIGNAL_BYTES);
    expect(held.status, JSON.stringify(held.body)).toBe(202);
    expect(held.body.status).toBe('delivered');
    // `gate` takes the first kept `go` and `more` takes the kept `more`: room for one as big again.
    await until('the kept signals taken', async () => ((await http(s.url, 'GET', `/api/executions/${id}`)).body.waits ?? []).some((w: Json) => w.step === 'last'), 10_000);
    expect((await sized(id, 'go', 2 * half)).status).toBe(202);
    expect((await sized(id, 'go', 200)).status).toBe(409);
    expect(await received(id)).toHaveLength(5);
  }, 60_000);

  it('twelve racing for the last bytes, on two servers: as many kept as fit, the rest 409, none 5xx', async () => {
    const id = await started();
    // Each signal here is `unit + 2` bytes; after seven, three more fit and a fourth does not.
    const unit = Math.floor(MAX_KEPT_SIGNAL_BYTES / 10.5);
    for (let i = 0; i < 7; i++) expect((await sized(id, 'go', unit)).status).toBe(202);
    const fit = Math.floor((MAX_KEPT_SIGNAL_BYTES - 7 * (unit + 2)) / (unit + 2));
    expect(fit).toBe(3);
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => sized(id, 'go', unit, {}, i % 2 ? other.url : s.url)));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((x) => x === 202), JSON.stringify(statuses)).toHaveLength(fit);
    expect(statuses.filter((x) => x === 409), JSON.stringify(statuses)).toHaveLength(12 - fit);
    for (const r of answers.filter((x) => x.status === 409)) expect(r.body.detail).toMatchObject({ code: 'signal_buffer_full', limit_bytes: MAX_KEPT_SIGNAL_BYTES });
    expect(await received(id)).toHaveLength(7 + fit);
  }, 60_000);
});
