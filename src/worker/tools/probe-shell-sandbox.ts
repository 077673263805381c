import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import type { ShellNetwork } from '../../config.ts';
import type { Logger } from '../../log.ts';
import { sandboxMounts } from './sandbox-mounts.ts';
import { TASK_PATH, type ShellHost } from './shell-argv.ts';
import type { ShellSettings } from './shell-settings.ts';
import { runShell } from './shell.ts';

const PROBE_TIMEOUT_MS = 10_000;
const SANDBOX_NEEDS =
  'install bubblewrap (apt-get install bubblewrap, or scripts/ensure-package.sh bubblewrap bwrap sandbox) and util-linux, allow unprivileged user namespaces ' +
  '(sysctl user.max_user_namespaces > 0; kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu)';
const HOW_TO_FIX = `${SANDBOX_NEEDS}, or set SVC_SHELL_SANDBOX=off to run shell tasks unsandboxed`;

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
  // Only the sandbox's namespaces keep a task off the network: unsandboxed it has the host's
  // (loopback, a cloud metadata service), so a network setting other than that refuses the tasks.
  if (!settings.sandbox) return settings.network === 'host' ? { settings, prlimit, mounts: [] } : { settings, prlimit, mounts: [], unavailable: unsandboxedNetwork(settings.network) };
  const bwrap = findProgram('bwrap');
  const refuse = (why: string): ShellHost => ({ settings, prlimit, mounts: [], unavailable: `shell tasks are refused: the sandbox cannot run (${why}); to fix it, ${HOW_TO_FIX}` });
  if (!bwrap) return refuse('bwrap, of the bubblewrap package, is not installed');
  if (!prlimit) return refuse('prlimit, of util-linux, is not installed');
  const { args: mounts, replacing } = sandboxMounts(settings.binds, undefined, settings.hidden);
  if (replacing.length) return { settings, prlimit, mounts: [], unavailable: replacedOwnMounts(replacing) };
  const host: ShellHost = { settings, prlimit, bwrap, mounts };
  // The `external` network is pasta's namespace: without pasta, or where it cannot run (no
  // /dev/net/tun), shell tasks are refused rather than given the host's network instead.
  if (settings.network === 'external') {
    const pasta = findProgram('pasta');
    if (!pasta) return refuse(`SVC_SHELL_NETWORK=external needs pasta, of the passt package, which is not installed (apt-get install passt, or scripts/ensure-package.sh passt pasta network), or SVC_SHELL_NETWORK=true (the host's network) or false`);
    // Tasks enter namespaces made ahead (network-namespaces.ts) with util-linux's nsenter, found
    // beside prlimit; without it each task starts pasta of its own (~50 ms more).
    // iproute2's ip keeps the namespace off this machine's own addresses (shell-argv.ts, FENCE):
    // without it a task would reach the services listening on them.
    const ip = findProgram('ip');
    if (!ip) return refuse(`SVC_SHELL_NETWORK=external needs ip, of the iproute2 package, which is not installed (apt-get install iproute2): it keeps tasks off this machine's own addresses; or set SVC_SHELL_NETWORK=true (the host's network) or false`);
    const withPasta: ShellHost = { ...host, pasta, nsenter: findProgram('nsenter'), ip };
    const failed = await probeFails(withPasta);
    return failed ? refuse(`SVC_SHELL_NETWORK=external: \`pasta … bwrap … true\` failed: ${failed}; pasta needs /dev/net/tun, or set SVC_SHELL_NETWORK=true (the host's network) or false`) : withPasta;
  }
  const failed = await probeFails(host);
  return failed ? refuse(`\`bwrap … true\` failed: ${failed}`) : host;
}

/** Why a worker with SVC_SHELL_SANDBOX=off refuses shell tasks: its SVC_SHELL_NETWORK keeps them off the host's network. */
function unsandboxedNetwork(network: Exclude<ShellNetwork, 'host'>): string {
  const setting = network === 'none' ? 'false (no network)' : 'external (other machines only)';
  return `shell tasks are refused: SVC_SHELL_NETWORK=${setting} holds only inside the sandbox, and SVC_SHELL_SANDBOX=off runs tasks unsandboxed, with the host's network (its loopback, a cloud metadata service); to fix it, set SVC_SHELL_SANDBOX=on (${SANDBOX_NEEDS}), or SVC_SHELL_NETWORK=true to give tasks the host's network`;
}

/** Why a worker refuses shell tasks whose SVC_SHELL_SANDBOX_BINDS would replace the sandbox's own mounts with the host's. */
function replacedOwnMounts(binds: readonly string[]): string {
  return `shell tasks are refused: SVC_SHELL_SANDBOX_BINDS names ${binds.join(', ')}, which would show the host's in place of the sandbox's own /proc (the task's processes alone), /dev, /tmp and /dev/shm (private, SVC_SHELL_FILE_MB each) or home; to fix it, bind a directory inside instead (/tmp/shared), or leave it out`;
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
  const missing = sandboxMounts(settings.binds).missing;
  if (missing.length) log.warn({ missing }, 'SVC_SHELL_SANDBOX_BINDS: these paths do not exist and are not bound');
  const uid = process.getuid?.() === 0 ? 'each task as its own unprivileged user' : 'as the worker user in a user namespace (the process limit counts all of its processes)';
  const network = { host: "the host's, loopback included", none: 'none', external: 'other machines only, from a namespace of its own (pasta)' }[settings.network];
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
