import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExecutions } from '../../../actors/start-execution.ts';
import { isIdempotencyKeyTaken } from '../../../src/db/idempotency.repo.ts';
import { expireIdempotencyKeys } from '../../../src/periodic/idempotency-key-expiry.ts';
import { startSecondServer, startTestApp, type TestApp } from '../../helpers/app.ts';
import { bearer, createApiToken } from '../../helpers/auth.ts';
import { http } from '../../helpers/http.ts';

// No workers: executions stay running, which is all these tests look at.
let a: TestApp;
let b: Awaited<ReturnType<typeof startSecondServer>>;
let bUrl: string;

beforeAll(async () => {
  a = await startTestApp();
  b = await startSecondServer(a);
  bUrl = b.url;
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

async function register(path: string, extra = ''): Promise<void> {
  const content = `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: p, path: ${path}${extra} }\nworkflow:\n  - step: start\n    tool: { name: n, kind: noop }\n`;
  expect((await http(a.url, 'POST', '/api/catalog/playbook', { content })).status).toBe(201);
}

async function executionsOf(path: string): Promise<number[]> {
  const { rows } = await a.deps.db.query<{ execution_id: number }>('SELECT execution_id FROM core.execution WHERE path = $1 ORDER BY 1', [path]);
  return rows.map((r) => r.execution_id);
}

/** POST with the raw answer text, so that answers can be compared byte for byte. */
async function post(base: string, path: string, body: unknown, key?: string) {
  const res = await fetch(base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { 'idempotency-key': key }) },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, text, body: JSON.parse(text), replayed: res.headers.get('idempotent-replayed') === 'true' };
}

describe('Idempotency-Key on POST /api/run/playbook and /api/execute', () => {
  it('20 identical requests at once with one key make ONE execution and 20 identical answers', async () => {
    await register('idem/burst');
    // Requests on one server wait for the first with their key: no write of theirs fails on it
    // (a failed write would also fail the unrelated starts batched with it).
    const db = a.deps.db;
    const query = db.query.bind(db);
    let conflicts = 0;
    db.query = ((...args: Parameters<typeof query>) =>
      query(...args).catch((err: unknown) => {
        if (isIdempotencyKeyTaken(err)) conflicts++;
        throw err;
      })) as typeof db.query;
    let answers;
    try {
      answers = await Promise.all(Array.from({ length: 20 }, () => post(a.url, '/api/run/playbook', { path: 'idem/burst', payload: { n: 1 } }, 'burst-key-1')));
    } finally {
      db.query = query;
    }
    expect(conflicts).toBe(0);
    const ids = await executionsOf('idem/burst');
    expect(ids).toHaveLength(1);
    for (const r of answers) {
      expect(r.status).toBe(200);
      expect(r.text).toBe(answers[0].text);
    }
    expect(answers[0].body).toEqual({ execution_id: ids[0], status: 'started', path: 'idem/burst', catalog_id: expect.any(Number) });
    expect(answers.filter((r) => !r.replayed)).toHaveLength(1);
  });

  it('on two servers at once: one execution per key, every answer the same', async () => {
    await register('idem/two');
    for (let k = 0; k < 5; k++) {
      const key = `two-servers-${k}`;
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => post(i % 2 ? bUrl : a.url, '/api/run/playbook', { path: 'idem/two', payload: { k } }, key)),
      );
      expect(new Set(answers.map((r) => `${r.status} ${r.text}`)).size).toBe(1);
    }
    expect(await executionsOf('idem/two')).toHaveLength(5);
  });

  it('a start that loses the race to another server answers with the winner\'s answer', async () => {
    await register('idem/race');
    const body = { path: 'idem/race', payload: { n: 1 } };
    const winner = await post(bUrl, '/api/run/playbook', body, 'race-1');
    // Server A looked before B's start committed: its lookup found nothing, so its own write fails on the key.
    const db = a.deps.db;
    const query = db.query.bind(db);
    let missed = false;
    db.query = ((...args: Parameters<typeof query>) => {
      const text = typeof args[0] === 'string' ? args[0] : args[0].text;
      if (!missed && text.includes('FROM core.idempotency_key WHERE')) {
        missed = true;
        return Promise.resolve({ rows: [], rowCount: 0 });
      }
      return query(...args);
    }) as typeof db.query;
    let loser;
    try {
      loser = await post(a.url, '/api/run/playbook', body, 'race-1');
    } finally {
      db.query = query;
    }
    expect(missed).toBe(true);
    expect(loser).toMatchObject({ status: 200, text: winner.text, replayed: true });
    expect(await executionsOf('idem/race')).toEqual([winner.body.execution_id]);
  });

  it('a retry after the answer was lost gets the first answer: same execution_id, status and body', async () => {
    await register('idem/lost');
    const body = { path: 'idem/lost', payload: { order: 'A-17' } };
    // The client gives up before the answer arrives: the start may have happened or not.
    const lost = new AbortController();
    const first = fetch(`${a.url}/api/run/playbook`, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': 'lost-1' }, body: JSON.stringify(body), signal: lost.signal });
    setTimeout(() => lost.abort(), 1);
    await first.catch(() => undefined);
    const retry = await post(a.url, '/api/run/playbook', body, 'lost-1');
    expect(retry.status).toBe(200);
    await new Promise((r) => setTimeout(r, 200)); // a start still on its way would show now
    const ids = await executionsOf('idem/lost');
    expect(ids).toEqual([retry.body.execution_id]);
    const later = await post(a.url, '/api/run/playbook', { payload: { order: 'A-17' }, path: 'idem/lost' }, 'lost-1'); // keys in another order: the same body
    expect(later).toMatchObject({ status: 200, text: retry.text, replayed: true });
    expect(await executionsOf('idem/lost')).toEqual(ids);
  });

  it('the same key with another body is a 422 naming the header (idempotency_key_reused), and starts nothing', async () => {
    await register('idem/reuse');
    const first = await post(a.url, '/api/run/playbook', { path: 'idem/reuse', payload: { n: 1 } }, 'reuse-1');
    expect(first.status).toBe(200);
    const other = await post(a.url, '/api/run/playbook', { path: 'idem/reuse', payload: { n: 2 } }, 'reuse-1');
    expect(other.status).toBe(422);
    expect(other.body.detail).toMatchObject({ code: 'idempotency_key_reused', message: expect.stringContaining('Idempotency-Key') });
    expect(other.body.detail.errors).toEqual([expect.stringMatching(/^Idempotency-Key: /)]);
    // Two at once with different bodies: one starts, the other is refused.
    const pair = await Promise.all([1, 2].map((n) => post(a.url, '/api/run/playbook', { path: 'idem/reuse', payload: { n } }, 'reuse-2')));
    expect(pair.map((r) => r.status).sort()).toEqual([200, 422]);
    expect(await executionsOf('idem/reuse')).toHaveLength(2);
  });

  it('without a key every start is a new execution', async () => {
    await register('idem/none');
    const answers = await Promise.all(Array.from({ length: 3 }, () => post(a.url, '/api/run/playbook', { path: 'idem/none', payload: { n: 1 } })));
    expect(new Set(answers.map((r) => r.body.execution_id)).size).toBe(3);
    expect(answers.every((r) => !r.replayed)).toBe(true);
    expect(await executionsOf('idem/none')).toHaveLength(3);
  });

  it('many keys at once are written in batches, each with its own execution', async () => {
    await register('idem/many');
    const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => post(a.url, '/api/run/playbook', { path: 'idem/many' }, `many-${i}`)));
    expect(answers.every((r) => r.status === 200 && !r.replayed)).toBe(true);
    const ids = await executionsOf('idem/many');
    expect(ids).toHaveLength(60);
    expect(answers.map((r) => r.body.execution_id).sort((x, y) => x - y)).toEqual(ids);
  });

  it('refuses a key that is empty, too long or not printable ASCII with a 422 naming the header', async () => {
    await register('idem/bad');
    for (const key of ['', 'x'.repeat(256), 'caf\u00e9', 'tab\there']) {
      const r = await post(a.url, '/api/run/playbook', { path: 'idem/bad' }, key);
      expect(r.status, JSON.stringify(key)).toBe(422);
      expect(r.body.detail.errors).toEqual([expect.stringMatching(/^Idempotency-Key: /)]);
    }
    expect(await executionsOf('idem/bad')).toEqual([]);
    expect((await post(a.url, '/api/run/playbook', { path: 'idem/bad' }, ` ${'~'.repeat(253)}!`)).status).toBe(200);
  });

  it('stores no failed start: a key whose first start failed starts when tried again', async () => {
    const first = await post(a.url, '/api/run/playbook', { path: 'idem/later' }, 'later-1');
    expect(first.status).toBe(404);
    await register('idem/later');
    const again = await post(a.url, '/api/run/playbook', { path: 'idem/later' }, 'later-1');
    expect(again).toMatchObject({ status: 200, replayed: false });
  });

  it('scopes keys per route, and replays /api/execute answers whole', async () => {
    await register('idem/routes');
    const run = await post(a.url, '/api/run/playbook', { path: 'idem/routes' }, 'route-key');
    const exec = await post(a.url, '/api/execute', { path: 'idem/routes' }, 'route-key');
    expect(exec.status).toBe(200);
    expect(exec.body.execution_id).not.toBe(run.body.execution_id);
    const again = await post(a.url, '/api/execute', { path: 'idem/routes' }, 'route-key');
    expect(again).toMatchObject({ status: 200, text: exec.text, replayed: true });
    expect(again.body).toMatchObject({ resource_kind: 'playbook' });
    expect(await executionsOf('idem/routes')).toHaveLength(2);
  });

  it('a start whose key is stored already writes nothing: the key and the execution go in one statement', async () => {
    await register('idem/stmt');
    const claim = { scope: 'test', key: 'stmt-1', requestHash: 'h', statusCode: 200, answer: (s: { executionId: number }) => ({ id: s.executionId }) };
    const [ok] = await startExecutions(a.deps, [{ path: 'idem/stmt', payload: {}, idempotency: claim }]);
    expect(ok).toMatchObject({ executionId: expect.any(Number) });
    const err = await startExecutions(a.deps, [{ path: 'idem/stmt', payload: {} }, { path: 'idem/stmt', payload: {}, idempotency: claim }]).catch((e: unknown) => e);
    expect(isIdempotencyKeyTaken(err)).toBe(true);
    expect(await executionsOf('idem/stmt')).toHaveLength(1); // the keyless start of that batch was not written either
  });
});

describe('keys per caller', () => {
  it('with API tokens, one key is one start per caller: another caller\'s same key is its own start', async () => {
    const t = await startTestApp({ SVC_AUTH: 'token' });
    try {
      const content = 'apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: p, path: idem/callers }\nworkflow:\n  - step: start\n    tool: { name: n, kind: noop }\n';
      const ann = await createApiToken(t.deps.db, 'ann', 'operator');
      const bob = await createApiToken(t.deps.db, 'bob', 'operator');
      expect((await http(t.url, 'POST', '/api/catalog/playbook', { content }, bearer(ann))).status).toBe(201);
      const start = (token: string) => http(t.url, 'POST', '/api/run/playbook', { path: 'idem/callers' }, { ...bearer(token), 'idempotency-key': 'shared-key' });
      const [annFirst, bobFirst] = [await start(ann), await start(bob)];
      const [annAgain, bobAgain] = [await start(ann), await start(bob)];
      expect([annFirst.status, bobFirst.status, annAgain.status, bobAgain.status]).toEqual([200, 200, 200, 200]);
      expect(bobFirst.body.execution_id).not.toBe(annFirst.body.execution_id);
      expect(annAgain.body).toEqual(annFirst.body);
      expect(bobAgain.body).toEqual(bobFirst.body);
      const { rows } = await t.deps.db.query('SELECT count(*)::int AS n FROM core.execution');
      expect(rows[0].n).toBe(2);
    } finally {
      await t.close();
    }
  });
});

describe('key expiry', () => {
  it('the sweep deletes keys older than 24 h and keeps younger ones; an expired key starts anew', async () => {
    await register('idem/expiry');
    const old = await post(a.url, '/api/run/playbook', { path: 'idem/expiry', payload: { n: 1 } }, 'expiry-old');
    const young = await post(a.url, '/api/run/playbook', { path: 'idem/expiry', payload: { n: 1 } }, 'expiry-young');
    const setAge = (key: string, hours: number) =>
      a.deps.db.query(`UPDATE core.idempotency_key SET created_at = now() - $2::int * interval '1 hour' WHERE key = $1`, [key, hours]);
    await setAge('expiry-old', 25);
    await setAge('expiry-young', 23);
    expect(await expireIdempotencyKeys(a.deps)).toBe(1);
    const { rows } = await a.deps.db.query<{ key: string }>(`SELECT key FROM core.idempotency_key WHERE key LIKE 'expiry-%'`);
    expect(rows.map((r) => r.key)).toEqual(['expiry-young']);
    const youngAgain = await post(a.url, '/api/run/playbook', { path: 'idem/expiry', payload: { n: 1 } }, 'expiry-young');
    expect(youngAgain).toMatchObject({ status: 200, text: young.text, replayed: true });
    // Expired: the key is free again, for this body or another.
    const oldAgain = await post(a.url, '/api/run/playbook', { path: 'idem/expiry', payload: { n: 2 } }, 'expiry-old');
    expect(oldAgain).toMatchObject({ status: 200, replayed: false });
    expect(oldAgain.body.execution_id).not.toBe(old.body.execution_id);
  });
});
