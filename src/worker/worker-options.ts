import type { Logger } from '../log.ts';
import type { CommandTraces } from '../telemetry/command-trace.ts';
import type { KeychainResolver } from './run-command.ts';
import type { InProcessServer } from './server-client.ts';
import type { ShellSettings } from './tools/shell-settings.ts';

/** How a worker pool (worker.ts) runs: its server, its slots, and what its tasks may reach. */
export type WorkerOptions = {
  serverUrl: string;
  /** The server of `serverUrl` when it runs in this process: reports and the like reach it without a socket (server-client.ts). */
  inProcess?: InProcessServer;
  /** The server's worker token (SVC_WORKER_TOKEN), sent with every request. */
  token: string;
  name?: string;
  concurrency: number;
  env: Readonly<Record<string, string | undefined>>;
  log: Logger;
  serviceDatabaseUrl?: string;
  /** The service database as its read-only reader role, for `read_only` postgres tasks (in-process pools of `svc start`). */
  serviceReaderUrl?: string;
  /**
   * The service database as this worker reaches it (a `svc worker` with SVC_ALLOW_SERVICE_DB_TASKS=read_only or true):
   * `read_only` postgres tasks without `auth` run on it as the reader role, whose login the pool
   * asks of the server when a task first needs it (src/worker/service-reader.ts).
   */
  serviceReaderBaseUrl?: string;
  resolveKeychain?: KeychainResolver;
  /** How shell tasks run (SVC_SHELL_*, shellSettings(config)); default: sandboxed, default limits. */
  shell?: ShellSettings;
  /** Kept of each failed task attempt's output (SVC_TASK_OUTPUT_BYTES). */
  outputBytes?: number;
  /** Traces on (workerTraces(config), as the server decides): http tasks send `traceparent`. Unset: off. */
  traces?: CommandTraces;
  claimWaitMs?: number;
  /** Longest wait for the server's answer beyond the claim wait (default WORKER_ANSWER_TIMEOUT_MS); none in-process. */
  answerTimeoutMs?: number;
  /** Pool heartbeat period while nothing runs (default POOL_HEARTBEAT_INTERVAL_MS). */
  idleHeartbeatIntervalMs?: number;
  /** Pool heartbeat period while commands run (default BUSY_HEARTBEAT_INTERVAL_MS). */
  busyHeartbeatIntervalMs?: number;
};
