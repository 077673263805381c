import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../log.ts';
import { sandboxMounts } from './sandbox-mounts.ts';
import { TASK_PATH, type ShellHost } from './shell-argv.ts';
import type { ShellSettings } from './shell-settings.ts';
import { runShell } from './shell.ts';

const PROBE_TIMEOUT_MS = 10_000;
const HOW_TO_FIX =
  'install bubblewrap (apt-get install bubblewrap, or scripts/ensure-package.sh bubblewrap bwrap sandbox) and util-linux, allow unprivileged user namespaces ' +
  '(sysctl user.max_user_namespaces > 0; kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu), or set SVC_SHELL_SANDBOX=off to run shell tasks unsandboxed';

// One probe per process and settings: in-process pools (tests, `svc start`) share its answer.
const probes = new Map<string, Promise<ShellHost>>();

/**
 * Finds prlimit and bwrap and runs `true` in the sandbox exactly as tasks will run. When the
 * sandbox is on but cannot run, the host says why (`unavailable`) and shell tasks are refused.
 */
export function probeShellSandbox(settings: ShellSettings): Promise<ShellHost> {
  const key = JSON.stringify(settings);
  let probe = probes.get(key);
  if (!probe) probes.set(key, (probe = runProbe(settings)));
  return probe;
}

async function runProbe(settings: ShellSettings): Promise<ShellHost> {
  const prlimit = findProgram('prlimit');
  if (!settings.sandbox) return { settings, prlimit, mounts: [] };
  const bwrap = findProgram('bwrap');
  const refuse = (why: string): ShellHost => ({ settings, prlimit, mounts: [], unavailable: `shell tasks are refused: the sandbox cannot run (${why}); to fix it, ${HOW_TO_FIX}` });
  if (!bwrap) return refuse('bwrap, of the bubblewrap package, is not installed');
  if (!prlimit) return refuse('prlimit, of util-linux, is not installed');
  const host: ShellHost = { settings, prlimit, bwrap, mounts: sandboxMounts(settings.binds).args };
  // With the network, tasks get it from a namespace of their own (pasta) where it runs; else the
  // host's, loopback included, which the worker's start says loudly (logShellHost).
  const pasta = settings.network ? findProgram('pasta') : undefined;
  if (pasta) {
    const failed = await probeFails({ ...host, pasta });
    if (!failed) return { ...host, pasta };
    host.hostNetwork = `pasta (passt) cannot run here: ${failed}`;
  } else if (settings.network) {
    host.hostNetwork = 'pasta, of the passt package, is not installed';
  }
  const failed = await probeFails(host);
  return failed ? refuse(`\`bwrap … true\` failed: ${failed}`) : host;
}

/** Runs `true` as tasks will run under `host`; why it failed, or undefined when it ran. */
async function probeFails(host: ShellHost): Promise<string | undefined> {
  const outcome = await runShell(host, { command: 'true', env: {} }, AbortSignal.timeout(PROBE_TIMEOUT_MS)).catch((error: unknown) => ({
    status: 'error' as const,
    data: null,
    error: { message: String(error) },
  }));
  if (outcome.status === 'ok') return undefined;
  const stderr = typeof outcome.data === 'object' && outcome.data !== null && 'stderr' in outcome.data ? String(outcome.data.stderr).trim() : '';
  return stderr || outcome.error?.message || 'unknown error';
}

/** One line at worker start saying how shell tasks run; loud when they run unsandboxed or not at all. */
export function logShellHost(host: ShellHost, log: Logger): void {
  const { settings } = host;
  const limits = { cpu_seconds: settings.cpuSeconds, memory_mb: settings.memoryMb, max_processes: settings.maxProcesses, file_mb: settings.fileMb, output_bytes: settings.outputBytes };
  if (host.unavailable) return log.error(host.unavailable);
  if (!host.prlimit) log.warn('prlimit (util-linux) not found: shell tasks run without CPU, memory, process and file size limits');
  if (!host.bwrap) {
    return log.warn(
      limits,
      'SVC_SHELL_SANDBOX=off: shell tasks run UNSANDBOXED as the worker user, and can read its files (data directory, keys, token), see and signal its processes; their environment is still only what they declare',
    );
  }
  if (host.hostNetwork) {
    log.warn(
      { reason: host.hostNetwork },
      "shell tasks share this machine's network, loopback included: they can reach local services (the API, the service database) as any local process can; install passt (apt-get install passt) so they reach the network from a namespace of their own, or set SVC_SHELL_NETWORK=false",
    );
  }
  const missing = sandboxMounts(settings.binds).missing;
  if (missing.length) log.warn({ missing }, 'SVC_SHELL_SANDBOX_BINDS: these paths do not exist and are not bound');
  const uid = process.getuid?.() === 0 ? 'each task as its own unprivileged user' : 'as the worker user in a user namespace (the process limit counts all of its processes)';
  const network = !settings.network ? 'none' : host.pasta ? 'own namespace (pasta)' : 'host';
  log.info({ ...limits, network, binds: settings.binds }, `shell tasks run in a bubblewrap sandbox, ${uid}`);
}

function findProgram(name: string): string | undefined {
  for (const dir of TASK_PATH.split(':')) {
    const path = join(dir, name);
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not here
    }
  }
  return undefined;
}
