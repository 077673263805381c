// Why a NATS trigger is not consuming (subscription_problem) belongs to NATS triggers alone
// (docs/nats-triggers.md; the listing's field is "null ... for other kinds"): a NATS trigger made
// a webhook or a schedule by a new version must not be listed as "not consuming" for ever after.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noteSubscriptionProblem } from '../../../src/db/trigger.repo.ts';
import { startNatsSubscriptions } from '../../../src/triggers/nats-subscriptions.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { executionApi, type ExecutionApi } from '../../helpers/execution-api.ts';
import { http } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';

let t: TestApp;
let api: ExecutionApi;
const run = randomBytes(4).toString('hex');

beforeAll(async () => {
  t = await startTestApp();
  api = executionApi(t.url);
  expect((await http(t.url, 'POST', '/api/credentials', { name: 'hook_auth', type: 'custom', data: { secret: 'a hook secret' } })).status).toBe(201);
});
afterAll(async () => {
  await t?.close();
});

const playbook = (path: string, trigger: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: kind_change, path: ${path} }
triggers:
  - { name: orders, ${trigger} }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;
type Listed = { path: string; name: string; kind: string; subscription_problem: { message: string } | null };
const listed = async (path: string): Promise<Listed | undefined> => {
  const triggers: Listed[] = (await http(t.url, 'GET', '/api/triggers')).body.triggers;
  return triggers.find((x) => x.path === path && x.name === 'orders');
};

describe('a NATS trigger that could not consume, made another kind by a new version', () => {
  for (const other of ['kind: webhook, auth: hook_auth', 'kind: schedule, cron: "0 3 * * *"']) {
    it(`(${other.split(',')[0]}) is no longer listed as not consuming`, async () => {
      const path = `nats/kind_${other.slice(6, 13)}_${run}`;
      // No such credential: every server notes why the trigger cannot consume, no NATS server needed.
      await api.register(playbook(path, `kind: nats, auth: no_such_nats_auth, stream: ORDERS_${run}, subject: orders.created`));
      const subs = startNatsSubscriptions(t.deps);
      try {
        await until('the problem noted', async () => ((await listed(path))?.subscription_problem ? true : undefined));
        await api.register(playbook(path, other));
        await subs.reload();
        const now = await listed(path);
        expect(now?.kind).toBe(other.slice(6, other.indexOf(',')));
        expect(now?.subscription_problem).toBeNull();
        // A server that still held the NATS trigger notes a problem late: it is not written on the new kind.
        await noteSubscriptionProblem(t.deps.db, { path, name: 'orders' }, 'stream not found');
        expect((await listed(path))?.subscription_problem).toBeNull();
      } finally {
        await subs.stop();
      }
    });
  }
});
