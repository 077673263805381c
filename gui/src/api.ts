// The one way the console talks to the service: JSON over fetch to the API base of the runtime
// settings, with the API token (SVC_AUTH=token) held in this module's memory only.
import type { ExecutionStatus } from '../../machines/statuses.ts';

export type RuntimeConfig = {
  auth: 'none' | 'token' | 'gateway';
  api_base: string;
  login_url: string | null;
  logout_url: string | null;
  me_url: string | null;
  allow_skip_auth: boolean;
};

/** A refusal or failure answered by the API: its status and `detail` as sent. */
export class ApiError extends Error {
  readonly status: number;
  readonly detail: unknown;
  constructor(status: number, detail: unknown) {
    super(describeDetail(detail) || `HTTP ${status}`);
    this.status = status;
    this.detail = detail;
  }
}

/** One line for a `detail` (a string, or `{message, errors}`). */
export function describeDetail(detail: unknown): string {
  if (typeof detail === 'string') return detail;
  if (detail && typeof detail === 'object') {
    const d = detail as { message?: unknown; errors?: unknown };
    // A message that already says its errors (invalid_inputs': `…: workload.x: must be …`) is not followed by them again.
    const listed = Array.isArray(d.errors) ? d.errors.map(String) : [];
    const said = typeof d.message === 'string' ? d.message : undefined;
    const errors = listed.length && !(said !== undefined && listed.every((e) => said.includes(e))) ? `: ${listed.join('; ')}` : '';
    if (said !== undefined) return said + errors;
    return JSON.stringify(detail);
  }
  return '';
}

/**
 * The `detail` of a refused answer from its status and body text: the API's `detail` when the body
 * is its JSON; else (an HTML error page of a proxy, a crash's text) no markup nor trace, only the status.
 */
export function detailOfAnswer(status: number, statusText: string, text: string): unknown {
  try {
    const body: unknown = text ? JSON.parse(text) : null;
    if (body && typeof body === 'object' && 'detail' in body) return body.detail;
    if (body !== null) return body;
  } catch {
    // Not JSON: not the API's own answer, shown by its status alone.
  }
  return `the server answered ${statusText ? `“${statusText}”` : `HTTP ${status}`} without details`;
}

/** One line for the user of any error a call threw: an API refusal, or a server that cannot be reached. */
export function errorText(error: unknown): string {
  if (error instanceof ApiError) return `${error.status}: ${error.message}`;
  // fetch rejects with a TypeError ("Failed to fetch") when no answer came at all.
  if (error instanceof TypeError) return `The server cannot be reached (stopped, or the network is down) (${error.message})`;
  return error instanceof Error ? error.message : describeDetail(error);
}

let apiBase = '/api';
let token: string | null = null;
let onUnauthorized: (() => void) | null = null;

/** Set once at start from the runtime settings. */
export function configureApi(base: string, unauthorized: () => void): void {
  apiBase = base.replace(/\/$/, '');
  onUnauthorized = unauthorized;
}

/**
 * The WebSocket URL of an API path seen from the page at `pageUrl`, or null when the API needs a token: a browser WebSocket cannot
 * send the Authorization header, so token users read by polling instead.
 */
export function apiSocketUrl(path: string, pageUrl: string): string | null {
  if (token) return null;
  const url = new URL(apiBase + path, pageUrl);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.toString();
}

/** The API token for SVC_AUTH=token; kept in memory, never in storage. */
export function setToken(value: string | null): void {
  token = value;
}

// A dot segment as URLs resolve it (".", "..", their %2e spellings): the browser removes it with
// the segment before, so route data (a catalog path from a crafted link) could aim a call at
// another API route. No API path has one (src/api/catalog-path.ts).
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;

/** Calls the API at `path` (below the API base); throws ApiError for any answer but 2xx, and a 404 unsent for a path with a dot segment. */
export async function api<T>(path: string, init: { method?: string; body?: unknown; signal?: AbortSignal; headers?: Record<string, string> } = {}): Promise<T> {
  if (path.split('?', 1)[0].split('/').some((s) => DOT_SEGMENT.test(s))) throw new ApiError(404, 'no such path: a segment of it is . or ..');
  const headers: Record<string, string> = { ...init.headers, accept: 'application/json' };
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(apiBase + path, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    signal: init.signal,
    credentials: 'same-origin',
  });
  const text = await res.text();
  if (!res.ok) {
    if (res.status === 401) onUnauthorized?.();
    throw new ApiError(res.status, detailOfAnswer(res.status, res.statusText, text));
  }
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = text;
  }
  return body as T;
}

/** Like `api`, but a 404 (a route this server does not have yet, or nothing there) answers null. */
export async function apiOrNull<T>(path: string, init?: { signal?: AbortSignal }): Promise<T | null> {
  try {
    return await api<T>(path, init);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return null;
    throw error;
  }
}

/** A catalog path as a URL path (each segment encoded, slashes kept). */
export const encodePath = (path: string): string => path.split('/').map(encodeURIComponent).join('/');

export type Execution = {
  execution_id: number;
  status: ExecutionStatus;
  path: string;
  progress: number;
  result: unknown;
  error: unknown;
  catalog_id: number;
  parent_execution_id: number | null;
  root_execution_id: number | null;
  started_at: string;
  updated_at: string;
  finished_at: string | null;
};

/**
 * What a waiting step waits for: its timer (`wait: {for|until}`) or a signal (with its timeout, if
 * any, as `wake_at`); a `playbook` task's own timer says what it is for (`for`: its child's timeout,
 * or the delay before `attempt`) and names the task.
 */
export type ExecutionWait = { step: string; seq: number; kind: 'timer' | 'signal'; signal: string | null; wake_at: string | null; approval_roles: string[] | null; since?: string } & Partial<TaskTimer>;

/** A `playbook` task's own timer, as GET /api/executions/{id} `waits` names it. */
export type TaskTimer = { for: 'timeout' | 'retry'; task: string; attempt: number };

/**
 * An execution's admission (flow control) while it has one: the limit and key it is queued on, or
 * holds a slot of once admitted (`limit` null: a debounce window alone); `not_before` is when its
 * debounce window closes (null when it has none).
 */
/** `defined` false: its limit is named but not defined, and it stays queued until one is (absent from older servers). */
export type ExecutionFlow = { limit: string | null; key: string | null; priority: number; defined?: boolean; not_before: string | null; queued_at: string; admitted_at: string | null };

/** A command of the execution that waits for room on its task's limit (PENDING until the key has room and tokens). */
export type ExecutionLimitWait = { step: string; seq: number; limit: string; key: string; defined?: boolean; since: string };

/** GET /api/executions/{id}: a list item plus its waits, retry links and admission (read for one execution only; `retried_as` oldest first). */
export type ExecutionDetail = Execution & {
  waits?: ExecutionWait[];
  /** How many in all: the server lists the first 100 of `waits` and of `limit_waits`, by seq. */
  waits_count?: number;
  limit_waits_count?: number;
  retry_of?: number | null;
  /** The execution auto-resume restarted as this one (its replayed steps ran there); absent from servers before it was answered. */
  resumed_from?: number | null;
  resumed_as?: number | null;
  retried_as?: number[];
  flow?: ExecutionFlow | null;
  limit_waits?: ExecutionLimitWait[];
  /** The labels it was started with, who started it (a caller's subject), and the trigger that did (by name). */
  labels?: Record<string, string>;
  requested_by?: string | null;
  trigger?: string | null;
};

/** A token bucket: `limit` tokens per `period_seconds`, holding at most `burst`. */
export type LimitRate = { limit: number; period_seconds: number; burst: number };

/**
 * A limit as GET /api/limits lists it: a named one (`defined`), or a name playbooks use without
 * one (`defined` false: its work waits) or a playbook's inline `concurrency: {limit: N}` (`@<path>`);
 * with what its keys hold in all.
 */
export type Limit = {
  name: string;
  defined: boolean;
  concurrency: number | null;
  rate: LimitRate | null;
  created_at: string | null;
  updated_at: string | null;
  keys: number;
  running: number;
  queued: number;
  waiting: number;
};

/** What one key of a limit holds: slots taken, executions queued, commands waiting, tokens in its bucket (null: no rate). */
export type LimitKey = { key: string; running: number; queued: number; waiting: number; tokens: number | null; served_at: string | null };

/** GET /api/limits/{name}?keys=N: the limit and its busiest keys. */
export type LimitDetail = Limit & { key_list: LimitKey[] };

/** POST /api/executions/{id}/signals/{name}'s answer (202). */
export type SignalSent = { status: 'delivered' | 'buffered'; execution_id: number; signal: string; step: string | null; event_id: number };

/** POST /api/executions/{id}/retry's answer (201). */
export type RetryStarted = { execution_id: number; retry_of: number; from_step: string | null; replayed: unknown };

export type ExecutionEvent = {
  event_id: number;
  event_type: string;
  status: string | null;
  step: string | null;
  command_id: number | null;
  worker_id: string | null;
  context: unknown;
  result: unknown;
  error: unknown;
  created_at: string;
};

export type CatalogEntry = { catalog_id: number; path: string; version: number; kind: string; created_at: string; content?: string };

/** A live trigger as GET /api/triggers lists it (and pause/resume answer it). */
export type Trigger = {
  path: string;
  name: string;
  kind: 'schedule' | 'webhook' | 'nats';
  state: 'active' | 'paused';
  catalog_id: number;
  description: string | null;
  next_fires: string[];
  last_fire: { fire_key: string; execution_id: number | null; at: string; outcome: 'started' | 'skipped' | 'refused' } | null;
  fires: number;
  skipped: number;
  errors: number;
  last_error: string | null;
  /** A NATS trigger that is not consuming: why, as a server last found it, and since when (null while it consumes). */
  subscription_problem: { message: string; since: string } | null;
  spec: Record<string, unknown>;
};

/** POST /api/triggers/{path}/{name}/fire's answer. */
export type TriggerFired = { execution_id: number | null; duplicate: boolean; fire_key: string; outcome: string };

/** The URL (below the API base) of an action on a trigger: pause, resume, fire, backfill. */
export const triggerUrl = (t: { path: string; name: string }, action: 'pause' | 'resume' | 'fire' | 'backfill'): string => `/triggers/${encodePath(t.path)}/${encodeURIComponent(t.name)}/${action}`;
