// `svc events send` read its batch file leniently: a Latin-1 `é` (byte 0xE9) in an event's context
// was sent as U+FFFD and stored so (202, the context's `"caf\ufffd"`), where the server refuses a
// body that is not UTF-8 and the playbook commands refuse such a file. The file is read as UTF-8
// text: one that is not is refused before anything is sent, naming its first bad byte.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { batchApi, noopPlaybook } from '../../helpers/batch.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { runSvc } from '../../helpers/process.ts';

let t: TestApp;
let dir: string;
let db: pg.Client;
beforeAll(async () => {
  t = await startTestApp();
  await executionApi(t.url).register(noopPlaybook('cli/utf8', 1));
  dir = await mkdtemp(join(tmpdir(), 'svc-events-utf8-'));
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db?.end();
  await t?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

it('refuses a batch file that is not UTF-8, naming its first bad byte, and sends nothing', async () => {
  const id = await executionApi(t.url).run('cli/utf8');
  const row = await db.query(`SELECT command_id FROM core.command WHERE execution_id = $1`, [id]);
  const cmd = await batchApi(t.url).claim(Number(row.rows[0].command_id), 'w1');
  const head = `{"execution_id": ${id}, "worker_id": "w1",\n "events": [{"event_type": "call.done", "command_id": ${cmd.command_id}, "attempt": ${cmd.attempt}, "context": {"note": "caf`;
  const file = join(dir, 'latin1.json');
  await writeFile(file, Buffer.concat([Buffer.from(head), Buffer.from([0xe9]), Buffer.from('"}}]}\n')]));
  const r = await runSvc(['events', 'send', file], { SVC_SERVER_URL: t.url });
  expect(r.code, r.stdout + r.stderr).toBe(2);
  expect(r.stderr).toContain(`${file}:2:${head.split('\n')[1].length + 1}: not UTF-8 text (save the file as UTF-8)`);
  expect((await db.query(`SELECT count(*)::int AS n FROM core.batch_request WHERE execution_id = $1`, [id])).rows[0].n).toBe(0);
  // Saved as UTF-8, the same batch is sent and its text kept.
  await writeFile(file, `${head}é"}}]}\n`);
  const ok = await runSvc(['events', 'send', file, '--json'], { SVC_SERVER_URL: t.url });
  expect(ok.code, ok.stderr).toBe(0);
  const settled = await batchApi(t.url).settled(JSON.parse(ok.stdout).request_id);
  expect(settled.state).toBe('completed');
  const stored = await db.query(`SELECT context->>'note' AS note FROM core.event WHERE execution_id = $1 AND event_type = 'call.done'`, [id]);
  expect(stored.rows).toEqual([{ note: 'café' }]);
});
