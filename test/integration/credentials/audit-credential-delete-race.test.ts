// A credential deleted while an update of it waits: the update holds the name's lock and has read
// the row, the delete commits before the update writes. The update must answer 404 (the
// credential is gone), never a 500, and nothing may be written back.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

/** Backends (but `self`) waiting on a lock whose statement matches `like`. */
const waitingOnLock = async (self: number, like: string): Promise<number> =>
  (
    await t.deps.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> $1 AND wait_event_type = 'Lock' AND query LIKE $2`,
      [self, like],
    )
  ).rows[0].n;

describe('a credential deleted while it is being updated', () => {
  for (const method of ['PUT', 'PATCH', 'POST'] as const) {
    it(`${method} answers 404, not 500, and the credential stays deleted`, async () => {
      const name = `race_${method.toLowerCase()}_auth`;
      expect((await http(t.url, 'POST', '/api/credentials', { name, type: 'bearer', data: { token: 'tok-before' } })).status).toBe(201);

      // Another session holds the row, so the update's write and the delete queue behind it.
      const holder = new pg.Client({ connectionString: t.databaseUrl });
      await holder.connect();
      try {
        const self = (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
        await holder.query('BEGIN');
        await holder.query('SELECT 1 FROM core.credential WHERE name = $1 FOR UPDATE', [name]);

        // The delete is first in the row's queue; the update then reads the row (still there) and waits to write it.
        const deleted = http(t.url, 'DELETE', `/api/credentials/${name}`);
        await until('the delete waits on the row', async () => (await waitingOnLock(self, 'DELETE FROM core.credential%')) === 1);
        const update =
          method === 'POST'
            ? http(t.url, 'POST', '/api/credentials', { name, type: 'bearer', data: { token: 'tok-after' } })
            : http(t.url, method, `/api/credentials/${name}`, { data: { token: 'tok-after' } });
        // Either the update waits behind the row (before the fix) or behind the delete's lock of the name (after).
        await until('the update waits', async () => (await waitingOnLock(self, '%')) === 2);
        await holder.query('COMMIT');

        expect((await deleted).status).toBe(200);
        const answer = await update;
        if (method === 'POST') {
          // POST creates a credential that does not exist: the name is free again once deleted.
          expect(answer.status).toBe(201);
        } else {
          expect(answer.status).toBe(404);
          expect(answer.body.detail).toBe(`credential '${name}' not found`);
          const rows = await t.deps.db.query('SELECT 1 FROM core.credential WHERE name = $1', [name]);
          expect(rows.rowCount).toBe(0);
        }
      } finally {
        await holder.end();
      }
    });
  }
});
