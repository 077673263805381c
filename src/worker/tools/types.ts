// The contract between the worker and its tools: a tool gets one rendered task and returns its
// outcome. Tools never throw; every failure (bad fields, target errors, timeouts) is an outcome.

import type { TaskOutcomeCode } from '../../../machines/error-codes.ts';
import type { ResolvedCredential } from '../../protocol.ts';
import type { ShellHost } from './shell-argv.ts';

/** `escaped`: the paths the worker changed to make the outcome storable (src/worker/storable.ts); `code` from the registry. */
export type TaskOutcome = { status: 'ok' | 'error'; data: unknown; error?: { message: string; code?: TaskOutcomeCode }; escaped?: string[] };

export type ToolContext = {
  signal: AbortSignal; // aborted on timeout_seconds or worker shutdown
  timeoutMs?: number; // the attempt's timeout_seconds as `signal` holds it, for a tool that also bounds it outside the worker (shell)
  credential?: ResolvedCredential; // the task's `auth`, already fetched by the worker
  serviceDatabaseUrl?: string; // set only when SVC_ALLOW_SERVICE_DB_TASKS=true
  serviceReaderUrl?: string; // the service database as its read-only reader role, for `read_only` tasks
  renewServiceReaderUrl?: () => Promise<string | undefined>; // `svc worker`: that URL with a login asked of the server again (the database refused the one kept)
  env: Readonly<Record<string, string | undefined>>; // worker environment (for mcp token fallback; never a shell task's)
  shell?: ShellHost; // how shell tasks run (sandbox, limits), probed at worker start; unset: they are refused
  // The command's secrets: a tool adds what it injects (tokens it fetched, header values) so the report masks it.
  // maskCut: masks the end of text a cap cut off when it is the beginning of one (SecretMask.maskCut);
  // holds: whether a text holds one (a header or body that must not follow a redirect elsewhere).
  secrets?: { add(...values: readonly string[]): void; maskCut?(text: string): string; holds?(text: string): boolean };
};

export type RenderedTask = { name: string; kind: string; [field: string]: unknown }; // templates already rendered

export type Tool = (task: RenderedTask, ctx: ToolContext) => Promise<TaskOutcome>;
