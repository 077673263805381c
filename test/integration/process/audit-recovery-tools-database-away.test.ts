// The recovery tools while the server's database is away (a real `svc server` on a PostgreSQL of
// this test's own, stopped): each says so plainly and exits as "try again later" (3), the doctor's
// reachability as the anomaly it is (critical, 2); no tool prints the database's password.
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type EmbeddedDatabase } from '../../../src/db/embedded.ts';
import { freePort } from '../../helpers/ports.ts';
import { runSvc, spawnSvc, waitForHealth, withTimeout, type SvcProcess } from '../../helpers/process.ts';
import { until } from '../../helpers/until.ts';
import { http } from '../../helpers/http.ts';

let dir: string;
let pg: EmbeddedDatabase | undefined;
let server: SvcProcess;
let base: string;
let dbPassword: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-away-pg-'));
  await chmod(dir, 0o755);
  pg = await startEmbedded(dir, () => {}, { port: await freePort() });
  dbPassword = decodeURIComponent(new URL(pg.url).password);
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  server = spawnSvc(['server'], { SVC_DATABASE_URL: pg.url, SVC_ENCRYPTION_KEY: randomBytes(32).toString('base64'), SVC_PORT: String(port), SVC_HOST: '127.0.0.1' });
  await waitForHealth(`${base}/api/health`, 30_000);
  await pg.stop();
  pg = undefined;
  await until('the server to see its database away', async () => ((await http(base, 'GET', '/api/health')).status === 503 ? true : undefined), 30_000, 100);
}, 90_000);

afterAll(async () => {
  if (server) {
    server.kill('SIGTERM');
    await withTimeout(server.exited, 20_000, 'server stop').catch(() => server.kill('SIGKILL'));
  }
  await pg?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const env = () => ({ SVC_SERVER_URL: base, SVC_LOG_LEVEL: 'warn' });

describe('the database away', () => {
  it('svc doctor reachability: critical, exit 2, the database named', async () => {
    const r = await runSvc(['doctor', 'reachability', '--json'], env());
    expect(r.code, r.stderr).toBe(2);
    const o = JSON.parse(r.stdout);
    expect(o.severity).toBe('critical');
    expect(o.data.summary).toMatch(/database/);
    expect(r.stdout + r.stderr).not.toContain(dbPassword);
  });

  it('svc doctor repair and detect: could not run, exit 3, 503 and the database named', async () => {
    for (const tool of ['repair', 'detect']) {
      const r = await runSvc(['doctor', tool, '--json'], env());
      expect(r.code, `${tool}: ${r.stdout}${r.stderr}`).toBe(3);
      const o = JSON.parse(r.stdout);
      expect(o.severity).toBe('error');
      expect(o.data).toMatchObject({ failure: 'server_error', http_status: 503 });
      expect(o.data.summary, tool).toMatch(/database/);
      expect(r.stdout + r.stderr).not.toContain(dbPassword);
      const text = await runSvc(['doctor', tool, '--text'], env());
      expect(text.code).toBe(3);
      expect(text.stdout, tool).toMatch(/database/);
    }
  });

  it('svc cleanup, dry or not: exit 3, the 503 told', async () => {
    for (const args of [['--dry-run'], [], ['--json']]) {
      const r = await runSvc(['cleanup', ...args], env());
      expect(r.code, `${args}: ${r.stdout}${r.stderr}`).toBe(3);
      expect(r.stderr).toMatch(/database/);
      expect(r.stdout + r.stderr).not.toContain(dbPassword);
      if (args[0] === '--json') expect(JSON.parse(r.stdout)).toMatchObject({ status: 503 });
    }
  });
});
