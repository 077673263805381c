// Positive conformance with the interface spec (spec/interface-spec.md), for valid input: the
// tables and columns its Resources section names, and the status codes, field names and types its
// Endpoints, Events and Errors sections give, against a real server and worker. Claims asserted
// in depth elsewhere (keychain answers: credentials/keychain; batch intake and its timings:
// batch/intake; metrics and docs pages: foundation/host) are not repeated here.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { http, type Json } from '../../helpers/http.ts';

let s: TestStack;
let db: pg.Client;
beforeAll(async () => {
  s = await startTestStack();
  db = new pg.Client({ connectionString: s.databaseUrl });
  await db.connect();
}, 120_000);
afterAll(async () => {
  await db?.end();
  await s?.close();
});

/** "Timestamps are ISO 8601 UTC." */
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
/** The execution status values (the spec's and DESIGN's). */
const EXECUTION_STATUSES = ['running', 'completed', 'failed', 'cancelled', 'queued', 'paused'];
const doc = (name: string, workflow: string, metadata = '') =>
  `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: ${name}, path: spec/${name}${metadata} }\nworkload: { greeting: hello, n: 1 }\nworkflow:\n${workflow}`;
const NOOP = '  - step: start\n    tool: { name: t, kind: noop }\n';
const WAITS = '  - step: start\n    wait: { signal: go, timeout: 1h }\n    next: end\n  - step: end\n    tool: { name: t, kind: noop }\n';

/** Every string under a key ending in `_at`, anywhere in `x`, with its path. */
function timestampsIn(x: unknown, path = '$'): [string, unknown][] {
  if (Array.isArray(x)) return x.flatMap((e, i) => timestampsIn(e, `${path}[${i}]`));
  if (x === null || typeof x !== 'object') return [];
  return Object.entries(x).flatMap(([k, v]) => (k.endsWith('_at') && v !== null && typeof v !== 'object' ? [[`${path}.${k}`, v] as [string, unknown]] : timestampsIn(v, `${path}.${k}`)));
}

describe('Resources: the tables and columns the spec names', () => {
  const columns = async (table: string) =>
    Object.fromEntries(
      (await db.query(`SELECT column_name, data_type, is_nullable, column_default FROM information_schema.columns WHERE table_schema = 'core' AND table_name = $1`, [table])).rows.map((r) => [r.column_name, r]),
    );

  it('core.credential: id bigint, name unique, type, data_encrypted, schema, meta, tags text[], description, timestamps defaulting to now', async () => {
    const c = await columns('credential');
    expect(c).toMatchObject({
      id: { data_type: 'bigint' },
      name: { data_type: 'text', is_nullable: 'NO' },
      type: { data_type: 'text', is_nullable: 'NO' },
      data_encrypted: { data_type: 'text', is_nullable: 'NO' },
      schema: { is_nullable: 'YES' },
      meta: { is_nullable: 'YES' },
      tags: { data_type: 'ARRAY' },
      description: { data_type: 'text' },
      created_at: { data_type: 'timestamp with time zone', column_default: 'now()' },
      updated_at: { data_type: 'timestamp with time zone', column_default: 'now()' },
    });
    expect(c.schema.data_type).toMatch(/^jsonb?$/);
    expect(c.meta.data_type).toMatch(/^jsonb?$/);
    const unique = await db.query(`SELECT 1 FROM pg_indexes WHERE schemaname = 'core' AND tablename = 'credential' AND indexdef ~ '^CREATE UNIQUE INDEX .* \\(name\\)$'`);
    expect(unique.rowCount).toBe(1);
  });

  it('core.keychain: every column of the spec with its type and default, scope_type local|global|shared, the three indexes', async () => {
    const k = await columns('keychain');
    expect(k).toMatchObject({
      cache_key: { data_type: 'text', is_nullable: 'NO' },
      keychain_name: { data_type: 'text', is_nullable: 'NO' },
      catalog_id: { data_type: 'bigint', is_nullable: 'NO' },
      credential_type: { data_type: 'text', is_nullable: 'NO' },
      cache_type: { data_type: 'text', is_nullable: 'NO' },
      scope_type: { data_type: 'text', is_nullable: 'NO' },
      execution_id: { data_type: 'bigint', is_nullable: 'YES' },
      parent_execution_id: { data_type: 'bigint', is_nullable: 'YES' },
      data_encrypted: { data_type: 'text', is_nullable: 'NO' },
      schema: { is_nullable: 'YES' },
      expires_at: { data_type: 'timestamp with time zone', is_nullable: 'NO' },
      created_at: { data_type: 'timestamp with time zone', column_default: 'now()' },
      accessed_at: { data_type: 'timestamp with time zone', column_default: 'now()' },
      access_count: { data_type: 'integer', column_default: '0' },
      auto_renew: { data_type: 'boolean', column_default: 'false' },
    });
    expect(k.renew_config.data_type).toMatch(/^jsonb?$/);
    const pk = await db.query(`SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) WHERE i.indrelid = 'core.keychain'::regclass AND i.indisprimary`);
    expect(pk.rows.map((r) => r.attname)).toEqual(['cache_key']);
    const checks = (await db.query(`SELECT pg_get_constraintdef(oid) AS d FROM pg_constraint WHERE conrelid = 'core.keychain'::regclass AND contype = 'c'`)).rows.map((r) => r.d).join('\n');
    for (const scope of ['local', 'global', 'shared']) expect(checks).toContain(`'${scope}'::text`);
    expect(checks).not.toContain("'catalog'::text");
    const indexes = (await db.query(`SELECT indexdef FROM pg_indexes WHERE schemaname = 'core' AND tablename = 'keychain'`)).rows.map((r) => r.indexdef.replace(/^.* USING btree /, ''));
    expect(indexes).toEqual(expect.arrayContaining(['(keychain_name, catalog_id)', '(execution_id)', '(expires_at) WHERE auto_renew']));
    // Stored scope_type 'catalog' is refused: the constraint allows only local, global, shared.
    await expect(
      db.query(`INSERT INTO core.keychain (cache_key, keychain_name, catalog_id, credential_type, cache_type, scope_type, data_encrypted, expires_at) VALUES ('x:1:catalog', 'x', 1, 'bearer', 'token', 'catalog', 'sealed', now())`),
    ).rejects.toThrow(/check constraint/);
  });

  it('core.event, core.command, core.catalog, core.execution carry the columns the spec names; resource, runtime, transient exist', async () => {
    expect(await columns('event')).toMatchObject({
      execution_id: { data_type: 'bigint' },
      catalog_id: { data_type: 'bigint' },
      event_id: { data_type: 'bigint' },
      event_type: { data_type: 'text' },
      status: { data_type: 'text' },
      context: { data_type: 'jsonb' },
      result: { data_type: 'jsonb' },
      created_at: { data_type: 'timestamp with time zone' },
    });
    expect(await columns('command')).toMatchObject({ execution_id: { data_type: 'bigint' }, status: { data_type: 'text', column_default: "'PENDING'::text" } });
    expect(await columns('catalog')).toMatchObject({ catalog_id: { data_type: 'bigint' }, path: { data_type: 'text' }, kind: { data_type: 'text' } });
    expect(Object.keys(await columns('execution'))).toEqual(expect.arrayContaining(['execution_id', 'status', 'path', 'progress', 'result', 'error']));
    for (const table of ['resource', 'runtime', 'transient']) expect(Object.keys(await columns(table)).length, table).toBeGreaterThan(0);
  });
});

describe('Executions: a run as the spec words it', () => {
  let ok: number;
  let failed: number;

  beforeAll(async () => {
    await s.register(doc('ok', '  - step: start\n    tool: { name: t, kind: noop }\n    next: last\n  - step: last\n    tool: { name: echo, kind: shell, command: "printf \'{{ workload.greeting }}\'" }\n'));
    await s.register(doc('fails', '  - step: start\n    tool: { name: t, kind: shell, command: "exit 3" }\n'));
  });

  it('POST /api/run/playbook {path, payload} answers execution_id (integer), status started, path; the payload merges into the workload', async () => {
    const r = await http(s.url, 'POST', '/api/run/playbook', { path: 'spec/ok', payload: { greeting: 'merged' } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'started', path: 'spec/ok' });
    expect(Number.isSafeInteger(r.body.execution_id) && r.body.execution_id > 0).toBe(true);
    ok = r.body.execution_id;
    const started = (await s.events(ok))[0];
    expect(started.event_type).toBe('execution.started');
    expect(started.context.input.workload).toEqual({ greeting: 'merged', n: 1 });
  });

  it('GET /api/executions/{id} and /api/execution/{id}: the same execution_id, status, path, progress, result, error', async () => {
    const done = await s.wait(ok);
    const plural = await http(s.url, 'GET', `/api/executions/${ok}`);
    const singular = await http(s.url, 'GET', `/api/execution/${ok}`);
    expect([plural.status, singular.status]).toEqual([200, 200]);
    expect(singular.body).toEqual(plural.body);
    expect(plural.body).toMatchObject({ execution_id: ok, status: 'completed', path: 'spec/ok', progress: 100, error: null });
    expect(typeof plural.body.progress).toBe('number');
    // result: the outcome result of the last step that completed (the shell task's data).
    expect(plural.body.result).toMatchObject({ exit_code: 0, stdout: 'merged' });
    expect(done.status).toBe('completed');
  });

  it('GET /api/events/{id}: each event has the columns of core.event, typed as the spec types them', async () => {
    const r = await http(s.url, 'GET', `/api/events/${ok}`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    const events: Json[] = r.body.events;
    const catalogId = (await http(s.url, 'GET', '/api/catalog/playbook/spec/ok')).body.catalog_id;
    expect(Number.isSafeInteger(catalogId)).toBe(true);
    events.forEach((e, i) => {
      const where = `${e.event_type} #${e.event_id}`;
      expect(e, where).toMatchObject({ execution_id: ok, catalog_id: catalogId, event_id: i + 1 });
      expect(typeof e.event_type, where).toBe('string');
      expect(EXECUTION_STATUSES, where).toContain(e.status);
      expect(e.context === null || (typeof e.context === 'object' && !Array.isArray(e.context)), where).toBe(true);
      expect(e.created_at, where).toMatch(ISO_UTC);
      for (const [path, value] of timestampsIn(e)) expect(value, `${where} ${path}`).toMatch(ISO_UTC);
    });
    expect(events[0]).toMatchObject({ event_type: 'execution.started', status: 'running' });
    // workflow.completed, then playbook.completed (terminal), in one insert: adjacent ids, one timestamp.
    const [workflow, playbook] = events.slice(-2);
    expect(workflow).toMatchObject({ event_type: 'workflow.completed', status: 'completed' });
    expect(playbook).toMatchObject({ event_type: 'playbook.completed', status: 'completed', event_id: workflow.event_id + 1, created_at: workflow.created_at });
    expect(events.filter((e) => ['playbook.completed', 'playbook.failed', 'execution.cancelled'].includes(e.event_type))).toHaveLength(1);
  });

  it('events page by since_event_id and limit, next_since_event_id continuing the log', async () => {
    const all: Json[] = (await http(s.url, 'GET', `/api/events/${ok}`)).body.events;
    const first = await http(s.url, 'GET', `/api/events/${ok}?limit=2`);
    expect(first.body).toMatchObject({ execution_id: ok, next_since_event_id: 2 });
    expect(first.body.events.map((e: Json) => e.event_id)).toEqual([1, 2]);
    const rest = await http(s.url, 'GET', `/api/events/${ok}?since_event_id=${first.body.next_since_event_id}&limit=1000`);
    expect(rest.body.events.map((e: Json) => e.event_id)).toEqual(all.slice(2).map((e) => e.event_id));
    expect(rest.body.next_since_event_id).toBe(all.at(-1).event_id);
  });

  it('a failure ends with workflow.failed then playbook.failed (status failed), and the status names the error', async () => {
    failed = await s.run('spec/fails');
    const done = await s.wait(failed);
    // progress: the step whose error failed the execution is not done (machines/execution-progress.ts).
    expect(done).toMatchObject({ execution_id: failed, status: 'failed', path: 'spec/fails', progress: 0, result: null });
    expect(done.error).toMatchObject({ message: expect.any(String) });
    const events = await s.events(failed);
    const [workflow, playbook] = events.slice(-2);
    expect(workflow).toMatchObject({ event_type: 'workflow.failed', status: 'failed' });
    expect(playbook).toMatchObject({ event_type: 'playbook.failed', status: 'failed', event_id: workflow.event_id + 1, created_at: workflow.created_at });
  });
});

describe('POST /api/executions/cleanup', () => {
  it('older_than_minutes defaults to 5; dry_run lists and cancels nothing; a run cancels with execution.cancelled (status cancelled, reason, cancelled_at)', async () => {
    await s.register(doc('waits', WAITS));
    const stuck = await s.run('spec/waits');
    await db.query(`UPDATE core.execution SET started_at = now() - interval '3 minutes' WHERE execution_id = $1`, [stuck]);

    const byDefault = await http(s.url, 'POST', '/api/executions/cleanup', { dry_run: true });
    expect(byDefault.status).toBe(200);
    expect(byDefault.body.execution_ids).not.toContain(stuck);

    const dry = await http(s.url, 'POST', '/api/executions/cleanup', { older_than_minutes: 1, dry_run: true });
    expect(dry.body).toMatchObject({ cancelled_count: 1, execution_ids: [stuck], message: expect.any(String) });
    expect((await http(s.url, 'GET', `/api/executions/${stuck}`)).body.status).toBe('running');

    const real = await http(s.url, 'POST', '/api/executions/cleanup', { older_than_minutes: 1 });
    expect(real.status).toBe(200);
    expect(real.body).toMatchObject({ cancelled_count: 1, execution_ids: [stuck] });
    expect(Number.isInteger(real.body.cancelled_count)).toBe(true);
    expect(typeof real.body.message).toBe('string');
    const cancelled = (await s.events(stuck)).filter((e) => e.event_type === 'execution.cancelled');
    expect(cancelled).toHaveLength(1);
    expect(cancelled[0]).toMatchObject({ status: 'cancelled', context: { reason: expect.any(String) } });
    expect(cancelled[0].context.cancelled_at).toMatch(ISO_UTC);
    expect((await http(s.url, 'GET', `/api/executions/${stuck}`)).body.status).toBe('cancelled');
  });
});

describe('Catalog and agents', () => {
  const AGENT = doc('agent', NOOP, ', agent: true');

  it('POST /api/catalog/register {content, resource_type: agent} answers status success, path, kind agent; GET finds it with a numeric catalog_id', async () => {
    const r = await http(s.url, 'POST', '/api/catalog/register', { content: AGENT, resource_type: 'agent' });
    expect(r.status).toBeLessThan(300);
    expect(r.body).toMatchObject({ status: 'success', path: 'spec/agent', kind: 'agent' });
    const got = await http(s.url, 'GET', '/api/catalog/playbook/spec/agent');
    expect(got.body).toMatchObject({ path: 'spec/agent', kind: 'agent', catalog_id: r.body.catalog_id });
    expect(Number.isSafeInteger(got.body.catalog_id)).toBe(true);
    const list = await http(s.url, 'GET', '/api/catalog/playbooks');
    expect(list.status).toBe(200);
    expect(JSON.stringify(list.body)).toContain('"spec/agent"');
  });

  it('POST /api/execute {path, resource_kind: agent, workload} answers an object with execution_id; without resource_kind 422; a playbook not registered as an agent: Executable catalog entry not found', async () => {
    const workload = { server: 'tools', endpoint: 'http://127.0.0.1:9/mcp', method: 'tools/call', tool: 'echo', arguments: { text: 'hi' } };
    const r = await http(s.url, 'POST', '/api/execute', { path: 'spec/agent', resource_kind: 'agent', workload });
    expect(r.status).toBe(200);
    expect(Number.isSafeInteger(r.body.execution_id)).toBe(true);
    expect((await s.events(r.body.execution_id))[0].context.input.workload).toMatchObject(workload);
    expect((await http(s.url, 'POST', '/api/execute', { path: 'spec/agent', workload })).status).toBe(422);
    await s.register(doc('plain', NOOP));
    const notAgent = await http(s.url, 'POST', '/api/execute', { path: 'spec/plain', resource_kind: 'agent', workload: {} });
    expect(JSON.stringify(notAgent.body.detail)).toContain('Executable catalog entry not found');
  });
});

describe('Credentials', () => {
  it('create with the spec request shape; GET by id or name is metadata only, the id a string; include_data=true adds the decrypted data', async () => {
    const created = await http(s.url, 'POST', '/api/credentials', { name: 'spec_auth', type: 'basic', description: 'for the spec', tags: ['spec'], data: { username: 'u', password: 'p' } });
    expect(created.status).toBeLessThan(300);
    const id = created.body.id;
    expect(typeof id).toBe('string');
    expect(id).toMatch(/^\d+$/);
    for (const identifier of [id, 'spec_auth']) {
      const meta = await http(s.url, 'GET', `/api/credentials/${identifier}`);
      expect(meta.status).toBe(200);
      expect(meta.body).toMatchObject({ id, name: 'spec_auth', type: 'basic', description: 'for the spec', tags: ['spec'] });
      expect(meta.body).not.toHaveProperty('data');
      expect(JSON.stringify(meta.body)).not.toContain('"p"');
    }
    const full = await http(s.url, 'GET', '/api/credentials/spec_auth?include_data=true');
    expect(full.body).toMatchObject({ id, name: 'spec_auth', type: 'basic', data: { username: 'u', password: 'p' } });
    expect(full.body.created_at).toMatch(ISO_UTC);
    expect(full.body.updated_at).toMatch(ISO_UTC);
    expect((await http(s.url, 'GET', '/api/credentials/spec_auth?include_data=false')).body).not.toHaveProperty('data');
    const list = await http(s.url, 'GET', '/api/credentials');
    expect(list.status).toBe(200);
    expect(JSON.stringify(list.body)).toContain('"spec_auth"');
    expect(JSON.stringify(list.body)).not.toContain('"p"');
  });

  it('a schema on create: 400, detail.message Credential validation failed, detail.errors in the spec wording; number takes integers and floats; no schema: stored as given', async () => {
    const schema = { fields: ['host', 'port', 'ratio'], required: ['host', 'user'], types: { port: 'integer', ratio: 'number' } };
    const bad = await http(s.url, 'POST', '/api/credentials', { name: 'spec_bad', type: 'custom', data: { host: 'h', port: '5432', ratio: 1, extra: true }, schema });
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatchObject({ message: 'Credential validation failed' });
    expect(bad.body.detail.errors).toEqual(['Missing required field: user', "Field 'port' must be integer, got string", 'Unexpected fields: extra']);
    for (const ratio of [1, 0.5]) {
      const good = await http(s.url, 'POST', '/api/credentials', { name: `spec_good_${ratio === 1 ? 'int' : 'float'}`, type: 'custom', data: { host: 'h', user: 'u', port: 5432, ratio }, schema: { ...schema, fields: [...schema.fields, 'user'] } });
      expect(good.status, String(ratio)).toBeLessThan(300);
    }
    const free = await http(s.url, 'POST', '/api/credentials', { name: 'spec_free', type: 'custom', data: { anything: [1, { x: null }] } });
    expect(free.status).toBeLessThan(300);
    expect((await http(s.url, 'GET', '/api/credentials/spec_free?include_data=true')).body.data).toEqual({ anything: [1, { x: null }] });
  });

  it('DELETE /api/credentials/{name} removes it', async () => {
    expect((await http(s.url, 'DELETE', '/api/credentials/spec_free')).status).toBe(200);
    expect((await http(s.url, 'GET', '/api/credentials/spec_free')).status).toBe(404);
  });
});

describe('SQL execution and health', () => {
  it('POST /api/postgres/execute {query} answers status ok and result, an array of row objects', async () => {
    const r = await http(s.url, 'POST', '/api/postgres/execute', { query: "SELECT 1 AS one, 'two' AS two UNION ALL SELECT 3, 'four'" });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: 'ok', result: [{ one: 1, two: 'two' }, { one: 3, two: 'four' }] });
  });

  it('GET /api/health is an object whose status is the string ok; GET /health answers too', async () => {
    const api = await http(s.url, 'GET', '/api/health');
    expect(api.status).toBe(200);
    expect(api.body.status).toBe('ok');
    expect((await http(s.url, 'GET', '/health')).status).toBe(200);
  });
});
