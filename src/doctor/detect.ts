import { isTerminalExecutionStatus } from '../../machines/statuses.ts';
import { setTimeout as delay } from 'node:timers/promises';
import * as v from 'valibot';
import { ServerError } from '../worker/server-client.ts';
import { CHECK_NAMES, CHECKS, checkPayload, type CheckName, type Finding, type Thresholds } from './detection-checks.ts';
import { ensureRegistered } from './detection-playbooks.ts';
import { DoctorFailure, DoctorStopped, type DoctorClient } from './doctor-client.ts';
import { outcome, worse, type Outcome, type Severity } from './outcome.ts';
import { EXECUTION_STATUSES } from '../../machines/statuses.ts';

/** How often detect asks whether its executions have finished. */
const POLL_INTERVAL_MS = 200;

export type DetectInput = Thresholds & { timeout_seconds: number };

/** A check that did not give a finding: its playbook failed, timed out or answered something else. */
type CheckError = { severity: 'error'; error: string; execution_id?: number };

const started = v.looseObject({ execution_id: v.number() });
const execution = v.looseObject({
  execution_id: v.number(),
  status: v.picklist(EXECUTION_STATUSES),
  result: v.optional(v.unknown()),
  error: v.optional(v.unknown()),
});
type Execution = v.InferOutput<typeof execution>;

/**
 * `detect`: runs each read-only detection playbook on the server (registering it first when
 * needed), waits for their results up to `timeout_seconds`, and sums them up. Severity: the
 * worst finding; `error` only when no check found anything and some could not run.
 */
export async function detect(client: DoctorClient, input: DetectInput): Promise<Outcome> {
  const thresholds: Thresholds = { stuck_minutes: input.stuck_minutes, pending_seconds: input.pending_seconds, worker_stale_seconds: input.worker_stale_seconds, limit: input.limit };
  const ids = new Map<CheckName, number>();
  client.progress?.(`starting the ${CHECK_NAMES.length} detection playbooks`);
  for (const name of CHECK_NAMES) {
    const playbook = await ensureRegistered(client, name);
    const run = await client.request('POST', '/api/run/playbook', started, { path: playbook.path, version: playbook.version, payload: checkPayload(name, thresholds) });
    ids.set(name, run.execution_id);
    if (client.stopped?.aborted) await stop(client, [...ids.values()]);
  }
  const finished = await waitAll(client, [...ids.values()], input.timeout_seconds * 1000);
  // Stopped while it waited: what did not finish is cancelled, as at the timeout.
  if (client.stopped?.aborted) await stop(client, [...ids.values()].filter((id) => !finished.has(id)));

  const checks = new Map<CheckName, Finding | CheckError>();
  const late: number[] = [];
  for (const [name, id] of ids) {
    const ex = finished.get(id);
    if (!ex) {
      late.push(id);
      checks.set(name, { severity: 'error', error: `no result within ${input.timeout_seconds} s`, execution_id: id });
    } else if (ex.status !== 'completed') {
      checks.set(name, { severity: 'error', error: `the detection playbook ${ex.status}: ${errorText(ex.error)}`, execution_id: id });
    } else {
      checks.set(
        name,
        CHECKS[name].interpret(ex.result, thresholds, client.baseUrl, id) ?? {
          severity: 'error',
          error: "its result is not the detection playbook's summary row (is the catalog entry someone else's?)",
          execution_id: id,
        },
      );
    }
  }
  // Left running, they would show up as stuck executions themselves.
  for (const id of late) await cancel(client, id, `svc doctor detect: no result within ${input.timeout_seconds} s`);
  return summarize(checks, thresholds, client.baseUrl, late);
}

async function waitAll(client: DoctorClient, ids: number[], timeoutMs: number): Promise<Map<number, Execution>> {
  const done = new Map<number, Execution>();
  const t0 = Date.now();
  const deadline = t0 + timeoutMs;
  for (;;) {
    for (const id of ids) {
      if (done.has(id)) continue;
      const ex = await client.request('GET', `/api/executions/${id}`, execution);
      if (isTerminalExecutionStatus(ex.status)) done.set(id, ex);
    }
    if (done.size === ids.length || Date.now() >= deadline || client.stopped?.aborted) return done;
    // Up to the timeout (60 s by default) when no worker slot is free: said, not silent.
    client.progress?.(`waiting for the detection playbooks: ${done.size} of ${ids.length} done, ${Math.round((Date.now() - t0) / 1000)} s of at most ${Math.round(timeoutMs / 1000)} s (executions ${ids.join(', ')})`);
    await delay(Math.min(POLL_INTERVAL_MS, Math.max(0, deadline - Date.now())), undefined, { signal: client.stopped }).catch(() => {});
  }
}

/** Cancels the detection executions a stopped doctor leaves (else they would show up as stuck), then says it stopped. */
async function stop(client: DoctorClient, ids: number[]): Promise<never> {
  for (const id of ids) await cancel(client, id, 'svc doctor detect: stopped while it waited');
  throw new DoctorStopped(`stopped: ${ids.length ? `cancelled the detection executions ${ids.join(', ')}` : 'the detection executions had finished'}`);
}

async function cancel(client: DoctorClient, id: number, reason: string): Promise<void> {
  try {
    await client.request('POST', `/api/executions/${id}/cancel`, v.unknown(), { reason });
  } catch (err) {
    if (!(err instanceof ServerError || err instanceof DoctorFailure)) throw err;
    // Best effort: the outcome already says it did not finish.
  }
}

function errorText(error: unknown): string {
  if (error && typeof error === 'object' && 'message' in error && typeof error.message === 'string') return error.message;
  return error === undefined || error === null ? 'no error recorded' : JSON.stringify(error);
}

const isFinding = (c: Finding | CheckError): c is Finding => c.severity !== 'error';

function summarize(checks: Map<CheckName, Finding | CheckError>, t: Thresholds, server: string, late: number[]): Outcome {
  const entries = [...checks];
  const anomalies = entries.filter(([, c]) => isFinding(c) && c.severity !== 'ok');
  const failed = entries.filter(([, c]) => !isFinding(c));
  let severity: Severity = anomalies.reduce<Severity>((s, [, c]) => worse(s, c.severity), 'ok');
  const next: string[] = [];
  // Repair first: a republished command may unstick the executions that wait on it.
  for (const name of ['dead_worker_claims', 'stranded_pending_commands', 'stuck_executions', 'stale_worker_pools'] as const) {
    const c = checks.get(name);
    if (c && isFinding(c)) for (const step of c.next_steps) if (!next.includes(step)) next.push(step);
  }
  let summary: string;
  if (anomalies.length) {
    summary = anomalies.map(([, c]) => (isFinding(c) ? c.summary : '')).join('; ');
  } else if (failed.length) {
    severity = 'error';
    // One line per distinct reason: a worker that cannot run them fails all four alike.
    const reasons = new Map<string, string[]>();
    for (const [name, c] of failed) if (!isFinding(c)) reasons.set(c.error, [...(reasons.get(c.error) ?? []), name]);
    summary = `detection did not complete: ${[...reasons].map(([reason, names]) => `${reason} (${names.join(', ')})`).join('; ')}`;
  } else {
    summary = 'no anomaly: no stuck execution, no command held by a dead worker, no stranded PENDING command, no silent worker pool';
  }
  if (failed.length) {
    const ids = failed.map(([, c]) => (isFinding(c) ? undefined : c.execution_id)).filter((id) => id !== undefined);
    // The token reaches curl through bash's own printf (a pipe), never its command line.
    if (late.length) next.push(`curl -s ${server}/api/worker/pools -H @<(printf 'Authorization: Bearer %s\\n' "$SVC_API_TOKEN")   # the detection playbooks need a live worker: is one running? (svc start runs one in process)`);
    if (ids.length) next.push(`svc logs ${ids[0]} --server ${server}   # what the detection playbook did`);
    next.push(`svc doctor reachability --server ${server}`);
  }
  return outcome('detect', severity, { summary, next_steps: next, server, thresholds: t, checks: Object.fromEntries(checks) });
}
