// SVC_SHELL_SANDBOX_BINDS shows a task host paths read-only, after the sandbox's own mounts: a
// bind of /proc or /tmp put the host's in their place. With SVC_SHELL_SANDBOX_BINDS=/proc a task's
// `ps ax` listed every process of the machine (docs/operations.md: "a fresh /proc shows the task's
// own processes only"), and with /tmp it read the host's /tmp (the worker's own directories there
// among it) instead of a private one. Such binds now refuse shell tasks, saying which and why; a
// directory inside /tmp is bound as before.
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeShellSandbox } from '../../../src/worker/tools/probe-shell-sandbox.ts';
import { runShell } from '../../../src/worker/tools/shell.ts';
import { DEFAULT_SHELL_SETTINGS } from '../../../src/worker/tools/shell-settings.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp('/tmp/svc-audit-binds-');
  // A root worker's task is a user of its own: the directory lets it through, as a bind must.
  await chmod(dir, 0o755);
  await writeFile(join(dir, 'marker'), 'host-tmp\n', { mode: 0o644 });
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

async function stdout(binds: string[], command: string): Promise<string> {
  const host = await probeShellSandbox({ ...DEFAULT_SHELL_SETTINGS, binds });
  expect(host.unavailable).toBeUndefined();
  const outcome = await runShell(host, { command, env: {} }, AbortSignal.timeout(30_000));
  const data = outcome.data;
  return typeof data === 'object' && data !== null && 'stdout' in data ? String(data.stdout) : JSON.stringify(outcome);
}

describe('SVC_SHELL_SANDBOX_BINDS and the sandbox\'s own /proc and /tmp', () => {
  it('refuses shell tasks for a bind that would show the host\'s processes or /tmp, naming it', async () => {
    // What each shows of the host's when bound: its processes, its /tmp, its devices.
    const shows: [string, string, RegExp][] = [
      ['/tmp', `cat ${join(dir, 'marker')} 2>/dev/null`, /host-tmp/],
      ['/proc', 'ps ax | wc -l', /^([2-9]\d|\d{3,})\n$/],
      ['/dev', 'ls /dev | wc -l', /^([3-9]\d|\d{3,})\n$/],
    ];
    for (const [bind, command, host] of shows) {
      const probed = await probeShellSandbox({ ...DEFAULT_SHELL_SETTINGS, binds: [bind] });
      const seen = probed.unavailable ? '' : await stdout([bind], command);
      expect(seen, `${bind}: the host's shown`).not.toMatch(host);
      expect(probed.unavailable, bind).toMatch(new RegExp(`SVC_SHELL_SANDBOX_BINDS names ${bind}, which would show the host's in place of the sandbox's own /proc`));
    }
  });

  it('binds a directory inside /tmp as before, in a /tmp of the task\'s own', async () => {
    expect(await stdout([dir], `cat ${join(dir, 'marker')}; ls /tmp | wc -l`)).toBe('host-tmp\n1\n');
  });
});
