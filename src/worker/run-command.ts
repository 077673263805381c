import { EVENT } from '../../machines/event-types.ts';
import { referencedKeychainNames, type NormalizedTask } from '../dsl/parse-playbook.ts';
import { evaluateCondition, renderShellCommand, renderSqlCommand, renderValue } from '../dsl/render.ts';
import { refuseTemplatedCodeVariables } from '../dsl/shell-env-code.ts';
import type { Logger } from '../log.ts';
import type { PresentedCommand, ResolvedCredential, RoutedEvent } from '../protocol.ts';
import { secretHandleId } from '../secret-handle.ts';
import { claimHeaders } from './claim-headers.ts';
import { resolveMcpServer } from './resolve-mcp-server.ts';
import { ServerClient, ServerError, unopenableCredential } from './server-client.ts';
import { storable, storableOutcome } from './storable.ts';
import { boundReport, reportEventsRoom, type CommandReport, type FailedAttempt } from './bound-report.ts';
import { tools } from './tools/index.ts';
import { SecretMask } from '../credential/redact-secrets.ts';
import type { TaskOutcome } from './tools/types.ts';
import { aborted } from './tools/outcome.ts';
import { unlessAborted } from './unless-aborted.ts';
import type { ShellHost } from './tools/shell-argv.ts';
import { withRetry, type Attempt } from './with-retry.ts';
import { Moments } from './elapsed.ts';
import { capOutput, capText } from '../cap-output.ts';
import { isObject } from '../objects.ts';
import { MAX_TIMER_MS } from '../config.ts';

export type KeychainResolver = (command: PresentedCommand, names: string[]) => Promise<Record<string, unknown>>;

export type RunDeps = {
  client: ServerClient;
  workerId: string;
  env: Readonly<Record<string, string | undefined>>;
  log: Logger;
  signal: AbortSignal;
  serviceDatabaseUrl?: string;
  serviceReaderUrl?: string;
  renewServiceReaderUrl?: () => Promise<string | undefined>;
  resolveKeychain: KeychainResolver;
  shell?: ShellHost; // the pool's probed shell sandbox
  /** Kept of each failed attempt's output in its `call.attempt` event, and of every error message (SVC_TASK_OUTPUT_BYTES; default 64 KiB). */
  outputBytes?: number;
};

const DEFAULT_OUTPUT_BYTES = 64 * 1024;
/** Failed attempts of one task a report records at most (see keepAttempt); even. */
const MAX_RECORDED_ATTEMPTS = 20;

type TaskRun = TaskOutcome & { attempts: number; tried: Attempt[] };

async function fetchCredential(client: ServerClient, name: string, claim: Record<string, string>): Promise<ResolvedCredential | TaskOutcome> {
  try {
    const c = await client.request<{ name: string; type: string; data: unknown }>('GET', `/api/credentials/${encodeURIComponent(name)}?include_data=true`, undefined, undefined, { headers: claim });
    return { name: c.name, type: c.type, data: isObject(c.data) ? c.data : {} };
  } catch (err) {
    const status = err instanceof ServerError ? err.status : undefined;
    const error: TaskOutcome['error'] =
      status === 404
        ? { message: `credential '${name}' not found`, code: 'credential_not_found' }
        : status === 403
          ? { message: `credential '${name}' is not given to this command (its tasks must name it)`, code: 'credential_not_granted' }
          : { message: unopenableCredential(err) ?? `credential '${name}' could not be fetched`, code: 'credential_unavailable' };
    return { status: 'error', data: null, error };
  }
}

async function fetchExecutionSecret(client: ServerClient, handle: string, claim: Record<string, string>): Promise<string | TaskOutcome> {
  try {
    const answer = await client.request<{ value?: unknown }>('GET', `/api/secrets/${handle}`, undefined, undefined, { headers: claim });
    if (typeof answer.value === 'string') return answer.value;
  } catch {
    // reported below without the server's text
  }
  return { status: 'error', data: null, error: { message: 'access_token: the workload access token has expired or cannot be fetched', code: 'auth' } };
}

/**
 * The outcome with its error message in at most `maxBytes` (the output's limit): a message may
 * quote what the target sent (a database's RAISE, a value it refused), and is stored in each
 * attempt's event, the command's report and the execution's error. Cut after masking.
 */
function boundedError(outcome: TaskOutcome, maxBytes: number): TaskOutcome {
  const message = outcome.error?.message;
  if (typeof message !== 'string') return outcome;
  const cut = capText(message, maxBytes);
  return cut === message ? outcome : { ...outcome, error: { ...outcome.error, message: cut } };
}

const isOutcome = (v: ResolvedCredential | TaskOutcome): v is TaskOutcome => 'status' in v;

/** A plain record made storable with the secrets masked (a task's name may hold one). */
function masked(record: Record<string, unknown>, secrets: SecretMask): Record<string, unknown> {
  const out = storable(record, secrets).value;
  return isObject(out) ? out : {};
}

/**
 * Renders and runs one task with its retry policy and timeout; never throws. The secrets it
 * injects (its credential's, tokens its tool fetched) are added to `secrets`.
 */
async function runTask(task: NormalizedTask, ctx: Record<string, unknown>, step: string, deps: RunDeps, secrets: SecretMask, claim: Record<string, string>): Promise<TaskRun> {
  const tried: Attempt[] = [];
  const outcome = await attemptTask(task, ctx, step, deps, secrets, claim, tried);
  return { ...outcome, tried };
}

/**
 * A task's fields rendered. A shell or postgres `command` is code, whatever its templates output
 * is data: a shell command's outputs reach it in variables it expands, a SQL command's as
 * literals (src/dsl/render.ts).
 */
function renderFields(kind: string, fields: Record<string, unknown>, ctx: Record<string, unknown>, path: string): Record<string, unknown> {
  const { command, ...rest } = fields;
  const code = typeof command === 'string' && (kind === 'shell' || kind === 'postgres');
  const out = renderValue(code ? rest : fields, ctx, path);
  const rendered = isObject(out) ? out : {};
  if (kind === 'shell') refuseTemplatedCodeVariables(fields.env, rendered.env);
  if (!code) return rendered;
  if (kind === 'postgres') return { ...rendered, command: renderSqlCommand(command, ctx, `${path}.command`) };
  const shell = renderShellCommand(command, ctx, `${path}.command`);
  if (!Object.keys(shell.env).length) return { ...rendered, command: shell.command };
  // The outputs' variables go last: a declared SVC_TEMPLATE_<n> cannot stand in for one. An env
  // that is no mapping is left as it is, for the tool to refuse.
  const declared = rendered.env ?? {};
  return { ...rendered, command: shell.command, env: isObject(declared) ? { ...declared, ...shell.env } : declared };
}

/** runTask's work; each attempt the tool made is pushed to `tried`. */
async function attemptTask(task: NormalizedTask, ctx: Record<string, unknown>, step: string, deps: RunDeps, secrets: SecretMask, claim: Record<string, string>, tried: Attempt[]): Promise<TaskOutcome & { attempts: number }> {
  const { retry, name, kind, ...fields } = task;
  let rendered: Record<string, unknown>;
  try {
    rendered = renderFields(kind, fields, ctx, `${step}.${name}`);
  } catch (err) {
    return { status: 'error', data: null, error: { message: err instanceof Error ? err.message : String(err), code: 'template_error' }, attempts: 0 };
  }
  const tool = tools[kind];
  if (!tool) return { status: 'error', data: null, error: { message: `task kind '${kind}' is not run by workers`, code: 'invalid_task' }, attempts: 0 };
  // `server: <name>` without an endpoint: the registered server's endpoint, transport and, when the
  // task names no credential, the server's own. An endpoint rendered "" (a field left blank) is
  // none, as the mcp tool's "server or endpoint" check takes it: the server is not passed over.
  if (kind === 'mcp' && typeof rendered.server === 'string' && rendered.server && (rendered.endpoint === undefined || rendered.endpoint === null || rendered.endpoint === '')) {
    const server = await resolveMcpServer(deps.client, rendered.server);
    if ('status' in server) return { ...server, attempts: 0 };
    rendered.endpoint = server.endpoint;
    if (rendered.transport === undefined && server.transport) rendered.transport = server.transport;
    if ((rendered.auth === undefined || rendered.auth === null) && server.auth) rendered.auth = server.auth;
  }
  let credential: ResolvedCredential | undefined;
  if (typeof rendered.auth === 'string' && rendered.auth) {
    const c = await fetchCredential(deps.client, rendered.auth, claim);
    if (isOutcome(c)) return { ...c, attempts: 0 };
    credential = c;
    secrets.addCredential(credential);
  }
  const workload = isObject(ctx.workload) ? ctx.workload : {};
  if (kind === 'mcp' && rendered.access_token === undefined && typeof workload.access_token === 'string') rendered.access_token = workload.access_token;
  // The server keeps a request's workload.access_token out of the log and passes a handle for it.
  const handle = kind === 'mcp' ? secretHandleId(rendered.access_token) : undefined;
  if (handle) {
    const token = await fetchExecutionSecret(deps.client, handle, claim);
    if (typeof token !== 'string') return { ...token, attempts: 0 };
    secrets.add(token);
    rendered.access_token = token;
  }
  // A templated timeout is checked as rendered, like every other field.
  if (rendered.timeout_seconds !== undefined && rendered.timeout_seconds !== null && !(typeof rendered.timeout_seconds === 'number' && rendered.timeout_seconds > 0)) {
    return { status: 'error', data: null, error: { message: `invalid ${kind} task: timeout_seconds: expected a number > 0`, code: 'invalid_task' }, attempts: 0 };
  }
  // Held at a timer's longest wait: a longer one would fire at once (or throw, past 2^32 ms).
  const timeoutMs = typeof rendered.timeout_seconds === 'number' && rendered.timeout_seconds > 0 ? Math.min(rendered.timeout_seconds * 1000, MAX_TIMER_MS) : undefined;
  const when = retry?.when;
  // A `retry.when` that cannot be evaluated is a playbook bug: it fails the task with a template
  // error naming the field rather than passing for "do not retry" (which hid the bug).
  let whenError: TaskOutcome['error'];
  const outcome = await withRetry(
    () => {
      const signal = timeoutMs ? AbortSignal.any([deps.signal, AbortSignal.timeout(timeoutMs)]) : deps.signal;
      return tool({ ...rendered, name, kind }, {
        signal,
        timeoutMs,
        credential,
        serviceDatabaseUrl: deps.serviceDatabaseUrl,
        serviceReaderUrl: deps.serviceReaderUrl,
        renewServiceReaderUrl: deps.renewServiceReaderUrl,
        env: deps.env,
        shell: deps.shell,
        secrets,
      });
    },
    retry ?? { attempts: 1, delay_seconds: 0, backoff: 1 },
    (failed) => {
      if (!when) return true;
      try {
        return evaluateCondition(when, { ...ctx, outcome: failed }, `${step}.${name}.retry.when`);
      } catch (err) {
        whenError = { message: err instanceof Error ? err.message : String(err), code: 'template_error' };
        return false;
      }
    },
    deps.signal,
    undefined,
    (a) => keepAttempt(tried, a),
  );
  return whenError ? { ...outcome, status: 'error', error: whenError } : outcome;
}

/**
 * Keeps `a` among a task's attempts: all of them, or of a task retried more often the first and the
 * last MAX_RECORDED_ATTEMPTS / 2 failed ones and the final one. Each failed one is reported with up
 * to SVC_TASK_OUTPUT_BYTES of output and as much of error: hundreds of them made a report the server
 * refuses (over its body limit), failing the command report_rejected, its task's own error lost.
 */
function keepAttempt(tried: Attempt[], a: Attempt): void {
  tried.push(a);
  if (tried.length > MAX_RECORDED_ATTEMPTS + 1) tried.splice(MAX_RECORDED_ATTEMPTS / 2, 1);
}

/**
 * Runs a claimed command's tasks in order (stopping at the first failure) and returns the
 * events to report: command.started, call.done/call.error per task, then command.completed, or
 * command.failed when a task failed. What they
 * carry is storable (src/worker/storable.ts) and holds no secret the command was given: every
 * credential and keychain value it used, and every token a tool fetched for it, is masked.
 */
export async function runCommand(cmd: PresentedCommand, deps: RunDeps): Promise<CommandReport> {
  // Every moment of the report on one grid from the command's start (Moments says why).
  const t0 = performance.now();
  const moments = new Moments(t0);
  const startedAt = moments.ago(t0);
  const base = { execution_id: cmd.execution_id, command_id: cmd.command_id, attempt: cmd.attempt, worker_id: deps.workerId, step: cmd.step };
  const tasks = cmd.tasks as NormalizedTask[];
  const context = isObject(cmd.context) ? cmd.context : {};
  const earlier = isObject(context.tasks) ? { ...(context.tasks as Record<string, TaskOutcome>) } : {};
  // Later tasks of the command see earlier outcomes as they were; only the report is masked.
  const outcomes: Record<string, TaskOutcome> = {};
  const calls: { task: NormalizedTask; attempts: number; taskStart: number; taskEnd: number; tried: Attempt[] }[] = [];
  const secrets = new SecretMask();
  const claim = claimHeaders(cmd, deps.workerId);
  let keychain: Record<string, unknown> = {};
  const names = [...new Set(tasks.flatMap((t) => referencedKeychainNames(t)))];
  if (names.length) {
    // A command cancelled (or taken over) while its entries resolve stops waiting for them: a token
    // request may take 30 s, a renewal lease another worker holds longer, and the slot was held all along.
    keychain = await unlessAborted(deps.resolveKeychain(cmd, names), deps.signal, {});
    secrets.addKeychain(keychain);
  }
  for (const task of tasks) {
    const taskStart = performance.now();
    // Stopped before it began (during the keychain's resolution): not run, so not failed on an entry it never got.
    const outcome: TaskRun = deps.signal.aborted
      ? { ...aborted(deps.signal), attempts: 0, tried: [] }
      : await runTask(task, { ...context, keychain, tasks: { ...earlier, ...outcomes } }, cmd.step, deps, secrets, claim);
    const { attempts, tried, ...plain } = outcome;
    outcomes[task.name] = plain;
    calls.push({ task, attempts, taskStart, taskEnd: performance.now(), tried });
    if (outcome.status === 'error' || deps.signal.aborted) break;
  }
  const endedAt = moments.ago(performance.now());
  const outputBytes = deps.outputBytes ?? DEFAULT_OUTPUT_BYTES;
  // Masked once every secret is known: a later task's credential may have been echoed earlier.
  const stored: Record<string, TaskOutcome> = {};
  for (const { task } of calls) stored[task.name] = boundedError(storableOutcome(outcomes[task.name], secrets), outputBytes);
  // Every attempt before the last one failed and was retried: each is recorded with its error and
  // output (of a long run of retries, the first and the last ones: keepAttempt; call.error counts them all).
  const failedAttempts = calls.map(({ tried }) =>
    tried.slice(0, -1).map((a): FailedAttempt => {
      const failed = boundedError(storableOutcome(a.outcome, secrets), outputBytes);
      return { output: capOutput(failed.data, outputBytes), error: failed.error };
    }),
  );
  // `ago_ms`: how long before the report each moment was (the server makes it a time, `at`).
  const build = (): RoutedEvent[] => {
    const events: RoutedEvent[] = [{ ...base, event_type: EVENT.commandStarted, context: { loop_index: cmd.loop_index, ago_ms: startedAt } }];
    calls.forEach(({ task, attempts, taskStart, taskEnd, tried }, i) => {
      const durationMs = moments.between(taskStart, taskEnd);
      const last = tried.at(-1);
      failedAttempts[i].forEach(({ output, error }, j) => {
        const a = tried[j];
        events.push({
          ...base,
          event_type: EVENT.callAttempt,
          context: { ...masked({ task: task.name, kind: task.kind, attempt: a.attempt, duration_ms: moments.between(a.startedAt, a.endedAt) }, secrets), ago_ms: moments.ago(a.startedAt) },
          result: { output },
          error,
        });
      });
      const outcome = stored[task.name];
      events.push({
        ...base,
        event_type: outcome.status === 'ok' ? EVENT.callDone : EVENT.callError,
        // `at` (from ago_ms): the task's start; `attempt_ms`: its last attempt, which ended with it.
        context: { ...masked({ task: task.name, kind: task.kind, attempts, duration_ms: durationMs, attempt_ms: last ? moments.between(last.startedAt, taskEnd) : durationMs }, secrets), ago_ms: moments.ago(taskStart) },
        error: outcome.error,
      });
    });
    // A task failed (after its retries): the command failed, and says which task with its error.
    const failed = calls.find(({ task }) => stored[task.name].status === 'error');
    if (failed) events.push({ ...base, event_type: EVENT.commandFailed, context: { ago_ms: endedAt }, result: { tasks: stored }, error: { ...stored[failed.task.name].error, task: failed.task.name } });
    else events.push({ ...base, event_type: EVENT.commandCompleted, context: { ago_ms: endedAt }, result: { tasks: stored } });
    return events;
  };
  // Every part is capped, but their JSON together may not fit in what the server takes.
  return boundReport(stored, failedAttempts.flat(), build, reportEventsRoom(deps.workerId));
}
