import { resolve } from 'node:path';
import { loadConfig, type Config, type ShellNetwork } from '../../config.ts';
import { processEnvironment, SECRET_VARIABLES } from '../../secret-environment.ts';

/** How a worker runs shell tasks (SVC_SHELL_*): the sandbox switch and each task's limits. */
export type ShellSettings = {
  /** Run in a bubblewrap sandbox; false only on the operator's explicit SVC_SHELL_SANDBOX=off. */
  sandbox: boolean;
  cpuSeconds: number;
  memoryMb: number; // RLIMIT_DATA of each process
  maxProcesses: number; // RLIMIT_NPROC
  outputBytes: number; // kept of each of stdout and stderr
  fileMb: number; // RLIMIT_FSIZE: the largest file a task may write
  /** `host`: the host's network, loopback included; `none`; `external`: other machines only, through pasta. */
  network: ShellNetwork;
  /** Host paths a sandboxed task may read, bound read-only at the same place. */
  binds: readonly string[];
  /**
   * The worker's own files (its data directory, SVC_ARCHIVE_DIR, each secret's _FILE), absolute:
   * covered in the sandbox where a system directory or a bind would show them.
   */
  hidden: readonly string[];
};

/** The settings of an environment that sets no SVC_SHELL_* variable: config.ts's defaults, read from there. */
export const DEFAULT_SHELL_SETTINGS: ShellSettings = Object.freeze(shellSettings(loadConfig({}), {}));

/** The shell settings of a parsed configuration; `env` names the secrets' files (X_FILE). */
export function shellSettings(config: Config, env: Readonly<Record<string, string | undefined>> = processEnvironment()): ShellSettings {
  const files = SECRET_VARIABLES.map((name) => env[`${name}_FILE`]).filter((path): path is string => Boolean(path));
  return {
    sandbox: config.SVC_SHELL_SANDBOX === 'on',
    cpuSeconds: config.SVC_SHELL_CPU_SECONDS,
    memoryMb: config.SVC_SHELL_MEMORY_MB,
    maxProcesses: config.SVC_SHELL_MAX_PROCESSES,
    outputBytes: config.SVC_SHELL_OUTPUT_BYTES,
    fileMb: config.SVC_SHELL_FILE_MB,
    network: config.SVC_SHELL_NETWORK,
    binds: config.SVC_SHELL_SANDBOX_BINDS.split(',')
      .map((path) => path.trim())
      .filter(Boolean),
    hidden: [config.SVC_DATA_DIR, ...(config.SVC_ARCHIVE_DIR ? [config.SVC_ARCHIVE_DIR] : []), ...files].map((path) => resolve(path)),
  };
}
