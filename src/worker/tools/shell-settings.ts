import { loadConfig, type Config, type ShellNetwork } from '../../config.ts';

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
};

/** The settings of an environment that sets no SVC_SHELL_* variable: config.ts's defaults, read from there. */
export const DEFAULT_SHELL_SETTINGS: ShellSettings = Object.freeze(shellSettings(loadConfig({})));

/** The shell settings of a parsed configuration. */
export function shellSettings(config: Config): ShellSettings {
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
  };
}
