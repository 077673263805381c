// SVC_AUTH=token: a Prometheus scrape of /metrics (which needs no database) with an API token
// answered 503 once the database was away and the token's 5 s cache entry lapsed: the scrapes
// failed through the outage they should show. A token found live within the grace
// (API_TOKEN_OUTAGE_GRACE_MS) now keeps its caller while the database is away; a token never
// seen, or last found revoked, still gets 503; routes that need the database answer 503 anyway.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { setTimeout as delay } from 'node:timers/promises';
import { API_TOKEN_CACHE_TTL_MS } from '../../../src/api/api-token-cache.ts';
import { revokeApiToken } from '../../../src/db/api-token.repo.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { bearer, createApiToken } from '../../helpers/auth.ts';

let t: TestApp;
let admin: pg.Client;
let name: string;

beforeAll(async () => {
  t = await startTestApp({ SVC_AUTH: 'token' });
  name = new URL(t.databaseUrl).pathname.slice(1);
  admin = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
  await admin.connect();
});
afterAll(async () => {
  await admin?.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`).catch(() => {});
  await admin?.end();
  await t?.close();
});

const scrape = (token: string) => t.app.inject({ method: 'GET', url: '/metrics', headers: bearer(token) });

describe('a scrape of /metrics with an API token while the database is away', () => {
  it('answers for a token found live lately, 503 for one never seen or found revoked', async () => {
    const scraper = await createApiToken(t.deps.db, 'scraper', 'viewer');
    const revoked = await createApiToken(t.deps.db, 'revoked', 'viewer');
    const unseen = await createApiToken(t.deps.db, 'unseen', 'viewer');
    expect((await scrape(scraper)).statusCode).toBe(200);
    await revokeApiToken(t.deps.db, 'revoked');
    expect((await scrape(revoked)).statusCode).toBe(401);

    // The database away: it takes no new session, and the service's are ended.
    await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
    await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [name]);
    await delay(API_TOKEN_CACHE_TTL_MS + 200);

    const during = await scrape(scraper);
    expect(during.statusCode, during.body).toBe(200);
    expect(during.body).toContain('svc_');
    for (const token of [unseen, revoked]) {
      const refused = await scrape(token);
      expect(refused.statusCode, refused.body).toBe(503);
      expect(refused.headers['retry-after']).toBeDefined();
    }
    // What needs the database answers 503 to the live token too.
    expect((await t.app.inject({ method: 'GET', url: '/api/executions', headers: bearer(scraper) })).statusCode).toBe(503);

    await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
    await delay(API_TOKEN_CACHE_TTL_MS + 200);
    expect((await scrape(scraper)).statusCode).toBe(200);
    expect((await scrape(revoked)).statusCode).toBe(401);
  }, 40_000);
});
