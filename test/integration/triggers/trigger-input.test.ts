// What the trigger API refuses, on a real server and PostgreSQL: every bad input is a 4xx whose
// detail names the field, never a 500, and changes nothing. A timezone that is no IANA name, a
// backfill range whose times are not real (year 0000, February 30) or not past, a fire by hand
// whose body is not an object.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';

let a: TestApp;

beforeAll(async () => {
  a = await startTestApp();
});
afterAll(async () => {
  await a?.close();
});

const playbook = (path: string, trigger: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: input, path: ${path} }
workload: { day: none }
triggers:
  - ${trigger}
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;

async function register(path: string, trigger: string): Promise<{ status: number; body: Json }> {
  return http(a.url, 'POST', '/api/catalog/playbook', { content: playbook(path, trigger) });
}

async function executionCount(path: string): Promise<number> {
  const { rows } = await a.deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM core.execution WHERE path = $1`, [path]);
  return rows[0].n;
}

async function fireCount(path: string): Promise<number> {
  const { rows } = await a.deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM core.trigger_fire WHERE path = $1`, [path]);
  return rows[0].n;
}

describe('a schedule\'s timezone', () => {
  it('is an IANA name: a UTC offset is a 400 problem at triggers[0].timezone and registers nothing', async () => {
    for (const timezone of ['"+05:00"', '"-0500"']) {
      const res = await register('input/offset', `{ name: n, kind: schedule, cron: "0 2 * * *", timezone: ${timezone} }`);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      const problems = (res.body.problems ?? res.body.detail?.problems) as { path: string; message: string }[];
      expect(problems).toEqual([expect.objectContaining({ path: 'triggers[0].timezone', message: expect.stringContaining('is a UTC offset, not an IANA timezone') })]);
    }
    expect((await http(a.url, 'GET', '/api/triggers')).body.triggers.some((t: Json) => t.path === 'input/offset')).toBe(false);
    // The fixed-offset IANA name is taken.
    expect((await register('input/offset', '{ name: n, kind: schedule, cron: "0 2 * * *", timezone: Etc/GMT-5 }')).status).toBe(201);
  });
});

describe('backfill', () => {
  const PATH = 'input/backfill';
  const backfill = (body: unknown) => http(a.url, 'POST', `/api/triggers/${PATH}/hourly/backfill`, body);
  const hoursFromNow = (h: number) => new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000 + h * 3_600_000).toISOString();

  beforeAll(async () => {
    const res = await register(PATH, '{ name: hourly, kind: schedule, cron: "@hourly", payload: { day: "{{ trigger.scheduled_time }}" } }');
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  });

  it('refuses a time that is not real, naming its field (never a 500, never rolled over, never blamed on the other), and starts nothing', async () => {
    const cases: [unknown, string[]][] = [
      // Year 0000 reached PostgreSQL: 500 "date/time field value out of range".
      [{ from: '0000-01-01T00:00:00Z', to: '0000-01-01T00:10:00Z' }, ['from: must be in the years 0001 to 9999', 'to: must be in the years 0001 to 9999']],
      // February 30 was March 1 and fired March's hours; the error said "to: must be after from".
      [{ from: '2020-02-30T00:00:00Z', to: '2020-03-01T02:00:00Z' }, ['from: must name a real day (2026-02-30 is none)']],
      [{ from: '2020-02-28T00:00:00Z', to: '2020-02-31T00:00:00Z' }, ['to: must name a real day (2026-02-30 is none)']],
      [{ from: '2021-02-29T00:00:00Z', to: '2021-03-01T00:00:00Z' }, ['from: must name a real day (2026-02-30 is none)']],
      // An offset of hours alone matches the pattern but is no Date: it was NaN, and "to: must be after from".
      [{ from: '2020-01-01T00:00:00+05', to: '2020-01-01T02:00:00Z' }, ['from: must be an ISO 8601 time with a timezone, e.g. 2026-01-01T00:00:00Z']],
      [{ from: '2020-01-01T00:00:00Z', to: '+010000-01-01T00:00:00Z' }, ['to: must be an ISO 8601 time with a timezone, e.g. 2026-01-01T00:00:00Z']],
      [{ from: 'yesterday', to: 42 }, ['from: must be an ISO 8601 time with a timezone, e.g. 2026-01-01T00:00:00Z', 'to: must be an ISO 8601 time with a timezone, e.g. 2026-01-01T00:00:00Z']],
      [[{ from: '2020-01-01T00:00:00Z', to: '2020-01-01T02:00:00Z' }], ['body: must be a JSON object, not an array']],
    ];
    for (const [body, errors] of cases) {
      const res = await backfill(body);
      expect(res.status, `${JSON.stringify(body)}: ${JSON.stringify(res.body)}`).toBe(422);
      expect(res.body.detail, JSON.stringify(body)).toEqual({ code: 'unprocessable', message: 'invalid body', errors });
    }
    expect(await executionCount(PATH)).toBe(0);
    expect(await fireCount(PATH)).toBe(0);
    expect(a.logs.join('')).not.toMatch(/out of range|unhandled error/);
  });

  it('refuses a range reaching past now, naming to (and from when it is later too): its fires would start early, and the schedule\'s own be swallowed', async () => {
    const later = await backfill({ from: hoursFromNow(-2), to: hoursFromNow(3) });
    expect(later.status, JSON.stringify(later.body)).toBe(422);
    expect(later.body.detail.errors).toEqual([expect.stringMatching(/^to: is after now \(.+\): backfill starts past fires only/)]);
    const future = await backfill({ from: hoursFromNow(2), to: hoursFromNow(3) });
    expect(future.status).toBe(422);
    expect(future.body.detail.errors.map((e: string) => e.slice(0, e.indexOf(':')))).toEqual(['from', 'to']);
    expect(await executionCount(PATH)).toBe(0);
    expect(await fireCount(PATH)).toBe(0);
    // Up to now is taken: the past hours start.
    const past = await backfill({ from: hoursFromNow(-2), to: new Date().toISOString() });
    expect(past.status, JSON.stringify(past.body)).toBe(200);
    expect(past.body.execution_ids).toHaveLength(3);
  });

  it('takes a real leap day, and offsets', async () => {
    const res = await backfill({ from: '2020-02-29T00:00:00Z', to: '2020-02-29T03:00:00+01:00' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.execution_ids).toHaveLength(2);
  });
});

describe('fire by hand', () => {
  it('refuses a body that is not an object {payload?, fire_key?}: 422 naming it, nothing started', async () => {
    const PATH = 'input/fire';
    expect((await register(PATH, '{ name: n, kind: schedule, cron: "@daily" }')).status).toBe(201);
    for (const body of ['[1]', '[]', '"now"', '[{"fire_key": "k"}]']) {
      const res = await http(a.url, 'POST', `/api/triggers/${PATH}/n/fire`, body);
      expect(res.status, `${body}: ${JSON.stringify(res.body)}`).toBe(422);
    }
    const array = await http(a.url, 'POST', `/api/triggers/${PATH}/n/fire`, '[1]');
    expect(array.body.detail).toEqual({ code: 'unprocessable', message: 'invalid body', errors: ['body: must be a JSON object, not an array'] });
    // A misspelt field is refused, not dropped: a retry of {"firekey": "k"} would start again each time.
    const misspelt = await http(a.url, 'POST', `/api/triggers/${PATH}/n/fire`, { firekey: 'k1' });
    expect(misspelt.status).toBe(422);
    expect(misspelt.body.detail.errors).toEqual([expect.stringMatching(/^firekey: unknown field \(did you mean 'fire_key'\?\)/)]);
    const blank = await http(a.url, 'POST', `/api/triggers/${PATH}/n/fire`, { fire_key: ' \t ' });
    expect(blank.status).toBe(422);
    expect(blank.body.detail.errors).toEqual(['fire_key: must not be blank']);
    expect(await executionCount(PATH)).toBe(0);
    expect(await fireCount(PATH)).toBe(0);
    expect((await http(a.url, 'POST', `/api/triggers/${PATH}/n/fire`, { fire_key: 'k1' })).status).toBe(202);
    expect(await executionCount(PATH)).toBe(1);
  });
});

describe('a fire by hand the inputs refuse', () => {
  it('is 422 fire_refused naming the payload, recorded as refused: the same fire_key answers the same, nothing started', async () => {
    const PATH = 'input/fire_refused';
    const yaml = `apiVersion: svc/v1
kind: Playbook
metadata: { name: n, path: ${PATH} }
inputs: { region: { type: string, enum: [eu, us] } }
workload: { region: eu }
triggers:
  - { name: n, kind: schedule, cron: "@daily" }
workflow:
  - step: start
`;
    expect((await http(a.url, 'POST', '/api/catalog/playbook', { content: yaml })).status).toBe(201);
    const refused = await http(a.url, 'POST', `/api/triggers/${PATH}/n/fire`, { fire_key: 'k1', payload: { region: 'mars' } });
    expect(refused.status, JSON.stringify(refused.body)).toBe(422);
    expect(refused.body.detail).toMatchObject({ code: 'fire_refused', fire_key: 'k1', duplicate: false, errors: [expect.stringMatching(/^payload: .*workload\.region/)] });
    const again = await http(a.url, 'POST', `/api/triggers/${PATH}/n/fire`, { fire_key: 'k1', payload: { region: 'eu' } });
    expect(again.status).toBe(422);
    expect(again.body.detail).toMatchObject({ code: 'fire_refused', fire_key: 'k1', duplicate: true });
    expect(await executionCount(PATH)).toBe(0);
    expect(await fireCount(PATH)).toBe(1);
  });
});

describe('a webhook\'s signature headers', () => {
  it('are HTTP header names: one no request can carry is a 400 problem at its place and registers nothing', async () => {
    for (const [signature, where] of [
      ['{ style: hmac, header: "x signature" }', 'triggers[0].signature.header'],
      ['{ style: hmac, header: "x-sig:", timestamp_header: x-ts }', 'triggers[0].signature.header'],
      ['{ style: hmac, timestamp_header: "x-ts\\n" }', 'triggers[0].signature.timestamp_header'],
    ] as const) {
      const res = await register('input/header', `{ name: h, kind: webhook, auth: some_credential, signature: ${signature} }`);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      const problems = (res.body.problems ?? res.body.detail?.problems) as { path: string; message: string }[];
      expect(problems).toEqual([expect.objectContaining({ path: where, message: expect.stringContaining('header name') })]);
    }
    expect((await http(a.url, 'GET', '/api/triggers')).body.triggers.some((t: Json) => t.path === 'input/header')).toBe(false);
    expect((await register('input/header', '{ name: h, kind: webhook, auth: some_credential, signature: { style: hmac, header: X-Acme_Signature.v1, timestamp_header: x-ts } }')).status).toBe(201);
  });
});

describe('a trigger route\'s path', () => {
  it('longer than a catalog path can be is a 422 naming path, for every action, and changes nothing', async () => {
    const long = `input/${'p'.repeat(600)}`;
    for (const action of ['pause', 'resume', 'fire', 'backfill']) {
      const res = await http(a.url, 'POST', `/api/triggers/${long}/t/${action}`, action === 'backfill' ? { from: '2020-01-01T00:00:00Z', to: '2020-01-02T00:00:00Z' } : {});
      expect(res.status, JSON.stringify(res.body)).toBe(422);
      expect(res.body.detail.errors).toEqual([expect.stringMatching(/^path: must be at most 512 characters/)]);
      expect(JSON.stringify(res.body).length).toBeLessThan(400);
    }
    expect(await executionCount(long)).toBe(0);
  });
});

describe("a trigger's name", () => {
  it('is at most 128 characters: a longer one is a 400 problem at triggers[0].name and registers nothing', async () => {
    const res = await register('input/long-name', `{ name: ${'n'.repeat(129)}, kind: schedule, cron: "@hourly" }`);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(JSON.stringify(res.body)).toContain('triggers[0].name');
    expect(JSON.stringify(res.body)).toContain('must be at most 128 characters');
    expect((await http(a.url, 'GET', '/api/catalog/playbook/input/long-name')).status).toBe(404);
  });

  it('longer than that in a route is a 422 naming name, not a 404 echoing it: the trigger routes and the webhook receiver', async () => {
    const long = 'n'.repeat(5000);
    for (const [route, body] of [[`/api/triggers/input/x/${long}/pause`, {}], [`/api/hooks/input/x/${long}`, { a: 1 }]] as const) {
      const res = await http(a.url, 'POST', route, body);
      expect(res.status, `${route.slice(0, 40)}: ${JSON.stringify(res.body).slice(0, 300)}`).toBe(422);
      expect(res.body.detail.errors).toEqual([expect.stringMatching(/^name: must be at most 128 characters/)]);
      expect(JSON.stringify(res.body).length).toBeLessThan(400);
    }
    const longPath = await http(a.url, 'POST', `/api/hooks/input/${'p'.repeat(600)}/hook`, { a: 1 });
    expect(longPath.status).toBe(422);
    expect(longPath.body.detail.errors).toEqual([expect.stringMatching(/^path: must be at most 512 characters/)]);
  });
});
