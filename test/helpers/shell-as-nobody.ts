// Runs a shell task through the worker's own code (probeShellSandbox, runShell) in a process of
// `nobody`'s, as a worker that is not root runs it: only root can start one here (CI runs as root).
import { execFile } from 'node:child_process';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const checkout = resolve(import.meta.dirname, '../..');
export const NOBODY = 65534;
/** Whether this process may start one as another user. */
export const canRunAsNobody = process.getuid?.() === 0;

const script = (command: string, network: string) => `
import { probeShellSandbox } from ${JSON.stringify(`${checkout}/src/worker/tools/probe-shell-sandbox.ts`)};
import { runShell } from ${JSON.stringify(`${checkout}/src/worker/tools/shell.ts`)};
import { DEFAULT_SHELL_SETTINGS } from ${JSON.stringify(`${checkout}/src/worker/tools/shell-settings.ts`)};
const host = await probeShellSandbox({ ...DEFAULT_SHELL_SETTINGS, network: ${JSON.stringify(network)} });
if (host.unavailable) throw new Error(host.unavailable);
const outcome = await runShell(host, { command: ${JSON.stringify(command)}, env: {} }, AbortSignal.timeout(30000));
process.stdout.write(JSON.stringify(outcome));
process.exit(0);
`;

/**
 * The task's outcome, and `inspect(temp)` of the worker's temp directory (TMPDIR, one of its own,
 * removed after) once that process exited.
 */
export async function shellAsNobody<T>(command: string, network: 'host' | 'none' | 'external', inspect: (temp: string) => Promise<T>): Promise<{ outcome: unknown; after: T }> {
  const temp = await mkdtemp(join(tmpdir(), 'svc-not-root-'));
  try {
    await chown(temp, NOBODY, NOBODY);
    const { stdout } = await run(
      'setpriv',
      [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--', process.execPath, '--input-type=module', '-e', script(command, network)],
      { cwd: '/', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: temp, TMPDIR: temp }, timeout: 60_000 },
    );
    const outcome: unknown = JSON.parse(stdout);
    return { outcome, after: await inspect(temp) };
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
}
