import * as v from 'valibot';
import { ServerClient, ServerError } from '../worker/server-client.ts';

/** One request of the doctor waits at most this long for its answer. */
const DOCTOR_REQUEST_TIMEOUT_MS = 10_000;

type FailureKind = 'unreachable' | 'refused' | 'bad_answer' | 'server_error';

/** Why a tool could not run, with what to try next; becomes a severity `error` outcome (exit 3). */
export class DoctorFailure extends Error {
  override name = 'DoctorFailure';
  readonly kind: FailureKind;
  readonly nextSteps: string[];
  constructor(kind: FailureKind, message: string, nextSteps: string[]) {
    super(message);
    this.kind = kind;
    this.nextSteps = nextSteps;
  }
}

/**
 * The doctor's requests to one server, over the project's HTTP client. Answers are validated;
 * no answer, a refusal (401/403) and a malformed answer become DoctorFailure. Other non-2xx
 * answers stay ServerError, for the caller to read (404 of an older server, 409, 503).
 */
export class DoctorClient {
  readonly baseUrl: string;
  readonly #client: ServerClient;
  /** Told what a long wait waits for, as it goes (`svc doctor detect` on a terminal draws it on stderr); unset: nothing said. */
  progress: ((text: string) => void) | undefined;
  /** Aborted when the person stops the doctor (Ctrl-C, SIGTERM): a long wait ends, undoing what it started. */
  stopped: AbortSignal | undefined;

  /** `apiToken`: SVC_API_TOKEN, sent with every request (operator for detect, admin for repair). */
  constructor(serverUrl: string, apiToken?: string) {
    this.#client = new ServerClient(serverUrl, { timeoutMs: DOCTOR_REQUEST_TIMEOUT_MS, token: apiToken });
    this.baseUrl = this.#client.baseUrl;
  }

  async request<S extends v.GenericSchema>(method: string, path: string, schema: S, body?: unknown): Promise<v.InferOutput<S>> {
    const what = `${method} ${path.split('?')[0]}`;
    let answer: unknown;
    try {
      answer = await this.#client.request<unknown>(method, path, body);
    } catch (err) {
      if (err instanceof ServerError) {
        if (err.status === 401 || err.status === 403) throw refused(err, what);
        throw err;
      }
      throw unreachable(this.baseUrl, err);
    }
    return checked(schema, answer, what);
  }

  close(): void {
    this.#client.close();
  }
}

/** Validates an answer (or a ServerError's detail) against `schema`; DoctorFailure `bad_answer` otherwise. */
export function checked<S extends v.GenericSchema>(schema: S, value: unknown, what: string): v.InferOutput<S> {
  const r = v.safeParse(schema, value);
  if (r.success) return r.output;
  const issue = r.issues[0];
  throw new DoctorFailure('bad_answer', `unexpected answer to ${what}: ${v.getDotPath(issue) ?? 'body'}: ${issue.message}`, [
    'is --server (or SVC_SERVER_URL) the address of an svc server?',
  ]);
}

/** The doctor was stopped (Ctrl-C, SIGTERM) while a tool ran; what it started was undone. */
export class DoctorStopped extends Error {
  override name = 'DoctorStopped';
}

/** A request that got no answer (connection refused, DNS, timeout). */
function unreachable(server: string, err: unknown): DoctorFailure {
  const reason = err instanceof Error && err.name === 'TimeoutError' ? `no answer within ${DOCTOR_REQUEST_TIMEOUT_MS / 1000} s` : err instanceof Error ? err.message : String(err);
  return new DoctorFailure('unreachable', `cannot reach the server at ${server}: ${reason}`, [
    'is the server running? `svc start` starts one; point the doctor elsewhere with --server URL or SVC_SERVER_URL',
  ]);
}

function refused(err: ServerError, what: string): DoctorFailure {
  return new DoctorFailure('refused', `the server refused the doctor's ${what} (HTTP ${err.status}): ${detailText(err.detail)}`, [
    'set SVC_API_TOKEN to an API token whose role may do this (operator for detect, admin for repair)',
  ]);
}

/** A ServerError's detail as one line (a string, or the `message` of an object detail). */
export function detailText(detail: unknown): string {
  if (typeof detail === 'string') return detail;
  if (detail && typeof detail === 'object' && 'message' in detail && typeof detail.message === 'string') return detail.message;
  return JSON.stringify(detail) ?? 'no detail';
}
