import { load } from 'js-yaml';
import * as v from 'valibot';
import { ServerClient, ServerError } from '../worker/server-client.ts';
import { EXECUTION_STATUSES } from '../../machines/statuses.ts';
import { ownKeysRecord } from '../own-keys-record.ts';

/** The server did not answer (connection refused, DNS, timeout): the CLI exits 3 on this. */
export class ServerUnreachableError extends Error {
  override name = 'ServerUnreachableError';
}

/** The server answered with something this client does not understand. */
export class UnexpectedAnswerError extends Error {
  override name = 'UnexpectedAnswerError';
}

const registered = v.looseObject({ path: v.string(), version: v.number(), catalog_id: v.number(), unchanged: v.optional(v.boolean()), warnings: v.optional(v.array(v.string())) });
const started = v.looseObject({ execution_id: v.number(), path: v.string(), debounced: v.optional(v.boolean()) });
const execution = v.looseObject({
  execution_id: v.number(),
  status: v.picklist(EXECUTION_STATUSES),
  path: v.string(),
  result: v.optional(v.unknown()),
  error: v.optional(v.unknown()),
  started_at: v.optional(v.nullable(v.string())),
  finished_at: v.optional(v.nullable(v.string())),
});
const event = v.looseObject({
  event_id: v.number(),
  event_type: v.string(),
  step: v.optional(v.nullable(v.string())),
  context: v.optional(v.unknown()),
  result: v.optional(v.unknown()),
  error: v.optional(v.unknown()),
  created_at: v.string(),
});
const eventPage = v.looseObject({ events: v.array(event), next_since_event_id: v.number() });
// GET /api/executions/{id}/state: each step's status; a running loop's items (done of length).
const executionSteps = v.looseObject({
  steps: ownKeysRecord(v.string(), v.looseObject({ status: v.string(), loop: v.optional(v.nullable(v.looseObject({ length: v.number(), done: v.number(), in_flight: v.number() }))) })),
});
export type ExecutionSteps = v.InferOutput<typeof executionSteps>['steps'];
const catalogEntry = v.looseObject({ content: v.string() });
const playbookShape = v.looseObject({ workflow: v.array(v.unknown()) });

export type ExecutionStatus = v.InferOutput<typeof execution>;

/** How a document is registered: the catalog's resource types. */
export type ResourceType = 'playbook' | 'agent' | 'mcp';
const documentKind = v.looseObject({ kind: v.optional(v.unknown()), metadata: v.optional(v.looseObject({ agent: v.optional(v.unknown()) })) });

/**
 * The way a YAML document asks to be registered: `kind: Mcp` an MCP server, a playbook marked
 * `metadata.agent: true` an agent (stored as a plain playbook it would run neither way), else a
 * playbook; text that does not parse is a playbook, for the server to name its problems.
 */
export function resourceTypeOf(content: string): ResourceType {
  let doc: unknown;
  try {
    doc = load(content);
  } catch {
    return 'playbook';
  }
  const r = v.safeParse(documentKind, doc);
  if (!r.success) return 'playbook';
  if (r.output.kind === 'Mcp') return 'mcp';
  return r.output.metadata?.agent === true ? 'agent' : 'playbook';
}
export type ExecutionEvent = v.InferOutput<typeof event>;

/** Events are read in pages of this many; a full page means there may be more. */
const EVENT_PAGE = 1000;
/** One request waits at most this long for an answer. */
const REQUEST_TIMEOUT_MS = 30_000;
/** A keyed request (a start, a signal, a retry) is sent at most this often, the retries after KEYED_RETRY_DELAY_MS, then twice that. */
const KEYED_ATTEMPTS = 3;
const KEYED_RETRY_DELAY_MS = 500;
// Answers after which the same request may succeed: a gateway or the database briefly away.
const RETRIED_STATUSES = new Set([502, 503, 504]);

/**
 * Sends a request that carries an Idempotency-Key (every copy is then the same request: a lost
 * answer never makes a second start or signal) up to KEYED_ATTEMPTS times: again when no answer
 * came (ServerUnreachableError, or ServerClient's network TypeError, which has the socket error
 * as its cause) or the server was briefly unavailable (502-504). Other failures are thrown at once.
 */
export async function sendKeyed<T>(send: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await send();
    } catch (err) {
      const noAnswer = err instanceof ServerUnreachableError || (err instanceof TypeError && err.cause !== undefined);
      const again = noAnswer || (err instanceof ServerError && RETRIED_STATUSES.has(err.status));
      if (!again || attempt >= KEYED_ATTEMPTS) throw err;
      await new Promise((r) => setTimeout(r, KEYED_RETRY_DELAY_MS * 2 ** (attempt - 1)));
    }
  }
}

/** `value` as `schema` reads it, or UnexpectedAnswerError naming `what` (the request) and the first field that is not so. */
export function checked<S extends v.GenericSchema>(schema: S, value: unknown, what: string): v.InferOutput<S> {
  const r = v.safeParse(schema, value);
  if (!r.success) {
    const issue = r.issues[0];
    throw new UnexpectedAnswerError(`unexpected answer to ${what}: ${v.getDotPath(issue) ?? 'body'}: ${issue.message}`);
  }
  return r.output;
}

/** Why a request got no answer, in one line (the socket error is its `cause`). */
export function networkReason(err: unknown): string {
  if (err instanceof Error && err.name === 'TimeoutError') return `no answer within ${REQUEST_TIMEOUT_MS / 1000}s`;
  const cause = err instanceof Error ? err.cause : undefined;
  if (cause instanceof Error) {
    const inner = cause instanceof AggregateError && cause.errors[0] instanceof Error ? cause.errors[0] : cause;
    return inner.message || ('code' in inner ? String(inner.code) : 'connection failed');
  }
  return err instanceof Error ? err.message : String(err);
}

const encodePath = (path: string) => path.split('/').map(encodeURIComponent).join('/');

/** The HTTP calls `svc run` makes, each answer validated; network failures become ServerUnreachableError. */
export class RunApi {
  readonly client: ServerClient;

  /** `token`: an API token, sent with every request (SVC_API_TOKEN). A client given instead of a URL is used as it is (its token, its address). */
  constructor(baseUrl: string | ServerClient, token?: string) {
    this.client = typeof baseUrl === 'string' ? new ServerClient(baseUrl, { token }) : baseUrl;
  }

  get baseUrl(): string {
    return this.client.baseUrl;
  }

  private async call(method: string, path: string, body: unknown, signal: AbortSignal | undefined, headers?: Record<string, string>): Promise<unknown> {
    const timeout = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
    try {
      return await this.client.request<unknown>(method, path, body, signal ? AbortSignal.any([signal, timeout]) : timeout, { headers });
    } catch (err) {
      if (err instanceof ServerError) throw err;
      if (signal?.aborted) throw err;
      throw new ServerUnreachableError(`cannot reach the server at ${this.baseUrl}: ${networkReason(err)}`);
    }
  }

  /**
   * Registers YAML text at its metadata.path: a playbook by POST /api/catalog/playbook, an agent
   * or an MCP server document by POST /api/catalog/register; ServerError 400 lists the problems.
   */
  async register(content: string, resourceType: ResourceType = 'playbook') {
    if (resourceType === 'playbook') return checked(registered, await this.call('POST', '/api/catalog/playbook', { content }, undefined), 'POST /api/catalog/playbook');
    return checked(registered, await this.call('POST', '/api/catalog/register', { content, resource_type: resourceType }, undefined), 'POST /api/catalog/register');
  }

  /**
   * POST /api/run/playbook: starts the newest version at `path`, sent again as sendKeyed says:
   * `idempotencyKey` makes every copy the same start, so a lost answer never makes a second execution.
   */
  async start(path: string, payload: Record<string, unknown>, idempotencyKey: string, labels: Record<string, string> = {}, priority?: number) {
    const body = { path, payload, ...(Object.keys(labels).length ? { labels } : {}), ...(priority === undefined ? {} : { priority }) };
    return sendKeyed(async () => checked(started, await this.call('POST', '/api/run/playbook', body, undefined, { 'idempotency-key': idempotencyKey }), 'POST /api/run/playbook'));
  }

  /** GET /api/executions/{id}: the status object, validated but with every field kept. */
  async execution(id: number, signal?: AbortSignal): Promise<ExecutionStatus> {
    return checked(execution, await this.call('GET', `/api/executions/${id}`, undefined, signal), 'GET /api/executions');
  }

  /** Every event after `since` (following pages), in order. */
  async eventsAfter(id: number, since: number, signal?: AbortSignal): Promise<ExecutionEvent[]> {
    const out: ExecutionEvent[] = [];
    for (let cursor = since; ; ) {
      const page = checked(
        eventPage,
        await this.call('GET', `/api/events/${id}?since_event_id=${cursor}&limit=${EVENT_PAGE}`, undefined, signal),
        'GET /api/events',
      );
      out.push(...page.events);
      if (page.events.length < EVENT_PAGE || page.next_since_event_id <= cursor) return out;
      cursor = page.next_since_event_id;
    }
  }

  /**
   * GET /api/executions/{id}/state's steps, in the playbook's order (every step of the version
   * the execution runs, entered or not): each one's status and, while a loop runs, its items.
   */
  async steps(id: number, signal?: AbortSignal): Promise<ExecutionSteps> {
    return checked(executionSteps, await this.call('GET', `/api/executions/${id}/state`, undefined, signal), 'GET /api/executions/{id}/state').steps;
  }

  /** YAML text of the newest catalog version at `path`, or null when there is none (404). */
  async catalogContent(path: string): Promise<string | null> {
    try {
      return checked(catalogEntry, await this.call('GET', `/api/catalog/playbook/${encodePath(path)}`, undefined, undefined), 'GET /api/catalog/playbook').content;
    } catch (err) {
      if (err instanceof ServerError && err.status === 404) return null;
      throw err;
    }
  }

  /** Number of steps in the newest catalog version at `path`, or undefined when it cannot be told. */
  async stepCount(path: string, signal?: AbortSignal): Promise<number | undefined> {
    try {
      const entry = checked(catalogEntry, await this.call('GET', `/api/catalog/playbook/${encodePath(path)}`, undefined, signal), 'GET /api/catalog/playbook');
      const doc = v.safeParse(playbookShape, load(entry.content));
      return doc.success ? doc.output.workflow.length : undefined;
    } catch (err) {
      if (err instanceof ServerUnreachableError || signal?.aborted) throw err;
      return undefined; // progress then shows steps done without a total
    }
  }
}
