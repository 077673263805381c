// A command's output reaches a reader slower than the command. svc exited with process.exit as
// soon as its command returned, which drops what a pipe has not taken yet: `svc logs 8 --json |
// jq` of an execution with 9,000 events got its first 64 KiB (invalid JSON), and any answer over
// a pipe's capacity was cut the same way when the reader was busy.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { NODE24, ROOT } from '../../helpers/process.ts';

let a: TestApp;
let dir: string;
beforeAll(async () => {
  a = await startTestApp();
  dir = await mkdtemp(join(tmpdir(), 'svc-piped-'));
}, 60_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await a?.close();
});

/** Runs svc with stdout on a pipe nobody reads for `holdMs`, then reads it all. */
function runWithSlowReader(args: string[], holdMs: number): Promise<{ code: number | null; stdout: string }> {
  const proc = spawn(NODE24, [`${ROOT}src/cli.ts`, ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', SVC_SERVER_URL: a.url }, stdio: ['ignore', 'pipe', 'ignore'] });
  let stdout = '';
  proc.stdout.pause();
  setTimeout(() => {
    proc.stdout.on('data', (c) => (stdout += String(c)));
    proc.stdout.resume();
  }, holdMs);
  return new Promise((ok) => proc.on('close', (code) => ok({ code, stdout })));
}

describe('output to a pipe', () => {
  it('is written whole before svc exits, though the reader takes it late', async () => {
    // A playbook of 300 KB (a long comment): `catalog register --json` prints its content back.
    const file = join(dir, 'long.yaml');
    const comment = `# ${'x'.repeat(98)}\n`.repeat(3000);
    await writeFile(file, `${comment}apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: long, path: audit/long }\nworkflow:\n  - step: a\n    tool: { name: t, kind: noop }\n`);
    const r = await runWithSlowReader(['catalog', 'register', file, '--json'], 1500);
    expect(r.code).toBe(0);
    expect(r.stdout.length).toBeGreaterThan(300_000);
    const answer = JSON.parse(r.stdout) as { path: string; content: string };
    expect(answer.path).toBe('audit/long');
    expect(answer.content.length).toBeGreaterThan(300_000);
  }, 60_000);
});
