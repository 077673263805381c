// The CLI read playbook files as UTF-8 leniently: a Latin-1 file's `café` was sent as `caf\uFFFD`
// and registered so (`svc catalog register`, `svc run FILE`; `svc simulate` read it so), where the API refuses such bytes. A
// file that is not UTF-8 is now refused before anything is sent, naming FILE:LINE:COL of the byte.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';
import { runSvc } from '../../helpers/process.ts';

let a: TestApp;
let dir: string;
const latin1 = (path: string) =>
  Buffer.concat([Buffer.from(`apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: l1, path: ${path} }\nworkflow:\n  - step: start\n    tool: { kind: shell, command: "echo caf`), Buffer.from([0xe9]), Buffer.from('" }\n')]);

beforeAll(async () => {
  a = await startTestApp();
  dir = await mkdtemp(join(tmpdir(), 'svc-audit-utf8-'));
  await writeFile(join(dir, 'latin1.yaml'), latin1('cli/latin1'));
  await writeFile(join(dir, 'run-latin1.yaml'), latin1('cli/run-latin1'));
  // UTF-8 with a BOM and a literal U+FFFD is text: it registers as it is.
  await writeFile(join(dir, 'bom.yaml'), `\uFEFFapiVersion: svc/v1\nkind: Playbook\nmetadata: { name: bom, path: cli/bom }\nworkflow:\n  - step: start\n    tool: { kind: shell, command: "echo \uFFFD caf\u00e9" }\n`);
}, 60_000);
afterAll(async () => {
  await a?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const stored = async (path: string) => (await http(a.url, 'GET', `/api/catalog/playbook/${path}`)).status;

describe('a playbook file that is not UTF-8', () => {
  it('svc catalog register refuses it at its line and column and registers nothing', async () => {
    const file = join(dir, 'latin1.yaml');
    const r = await runSvc(['catalog', 'register', file], { SVC_SERVER_URL: a.url });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${file}:6:44: not UTF-8 text`);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(await stored('cli/latin1')).toBe(404);
  });

  it('svc catalog register --json says so on stdout', async () => {
    const file = join(dir, 'latin1.yaml');
    const r = await runSvc(['catalog', 'register', file, '--json'], { SVC_SERVER_URL: a.url });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ file, error: expect.stringContaining('not UTF-8 text') });
  });

  it('svc run FILE refuses it the same way, starting nothing', async () => {
    const file = join(dir, 'run-latin1.yaml');
    const r = await runSvc(['run', file], { SVC_SERVER_URL: a.url });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`${file}:6:44: not UTF-8 text`);
    expect(await stored('cli/run-latin1')).toBe(404);
  });

  it('svc simulate refuses it the same way', async () => {
    const file = join(dir, 'latin1.yaml');
    const r = await runSvc(['simulate', file], { SVC_SERVER_URL: a.url });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${file}:6:44: not UTF-8 text`);
  });

  it('a UTF-8 file with a BOM and a literal U+FFFD still registers as written', async () => {
    const r = await runSvc(['catalog', 'register', join(dir, 'bom.yaml')], { SVC_SERVER_URL: a.url });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect((await http(a.url, 'GET', '/api/catalog/playbook/cli/bom')).body.content).toContain('echo \uFFFD caf\u00e9');
  });
});
