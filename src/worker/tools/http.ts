import { STATUS_CODES } from 'node:http';
import * as v from 'valibot';
import { AnswerTooLarge, ANSWER_MAX_TEXT, answerBytes } from './answer-limit.ts';
import { parseJsonExact } from '../../exact-json.ts';
import { credentialAuth } from './credential-auth.ts';
import { fetchFollowing } from './fetch-following.ts';
import { formBody, isFormType } from './form-body.ts';
import { forgetOAuth2Token } from './oauth2-token.ts';
import { HttpUrl } from './http-url.ts';
import { aborted, describeError, fail, invalidTask, ok } from './outcome.ts';
import { nextAttemptTraceparent } from '../../telemetry/command-trace.ts';
import type { RenderedTask, TaskOutcome, ToolContext } from './types.ts';
import { ownKeysRecord } from '../../own-keys-record.ts';
import { holdsUserinfo, RENDERED_USERINFO_PROBLEM } from '../../url-userinfo.ts';
import { HEADER_NAME_TEXT, HEADER_VALUE_TEXT, isHeaderName, isHeaderValue } from '../../credential/http-header.ts';

const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

// Rendered templates yield native values, so a header or query value may be a number or boolean.
const Scalar = v.pipe(v.union([v.string(), v.number(), v.boolean()]), v.transform(String));
// fetch throws on a header it cannot send (quoting the value): refused here, naming the header.
const HeaderName = v.pipe(v.string(), v.check(isHeaderName, HEADER_NAME_TEXT));
const HeaderValue = v.pipe(Scalar, v.check(isHeaderValue, HEADER_VALUE_TEXT));
const StatusCode = v.pipe(
  v.union([v.number(), v.pipe(v.string(), v.regex(/^\d{3}$/), v.transform(Number))]),
  v.integer(),
  v.minValue(100),
  v.maxValue(599),
);

const HttpTaskSchema = v.looseObject({
  method: v.optional(v.pipe(v.string(), v.toUpperCase(), v.picklist(HTTP_METHODS)), 'GET'),
  url: HttpUrl,
  headers: v.optional(v.nullable(ownKeysRecord(HeaderName, v.nullable(HeaderValue)))),
  params: v.optional(v.nullable(ownKeysRecord(v.string(), v.nullable(v.union([Scalar, v.array(Scalar)]))))),
  body: v.optional(v.unknown()),
  accept_status: v.optional(v.nullable(v.array(StatusCode))),
});

/** `body_encoding: 'base64'` when `body` is the answer's bytes in base64 (binaryBody). */
export type HttpResponseData = { status: number; headers: Record<string, string>; body: unknown; body_encoding?: 'base64' };

/**
 * Sends one HTTP request (method, url, headers, params, body) authenticated by the task's
 * credential; data `{status, headers, body}`. A status >= 400 outside `accept_status` is an
 * `http_status` error that still carries the data.
 */
export async function http(task: RenderedTask, ctx: ToolContext): Promise<TaskOutcome> {
  // Traces on: this attempt's span, for the called service to join the execution's trace (first: every call is an attempt).
  const traceparent = nextAttemptTraceparent(task.name);
  const parsed = v.safeParse(HttpTaskSchema, task);
  if (!parsed.success) return invalidTask('http', parsed.issues);
  const { method, headers: taskHeaders, params, body, accept_status: acceptStatus } = parsed.output;

  const url = new URL(parsed.output.url);
  // fetch refuses such a URL, quoting it (password and all) in its error.
  if (holdsUserinfo(url.href)) return fail('invalid_task', `invalid http task: url: ${RENDERED_USERINFO_PROBLEM}`);
  for (const [name, value] of Object.entries(params ?? {})) {
    if (value === null) continue;
    for (const item of Array.isArray(value) ? value : [value]) url.searchParams.append(name, item);
  }

  const headers = new Headers();
  // The credential's headers go to the URL's origin only, never on to the host a redirect names.
  const credentialHeaders: string[] = [];
  for (const [name, value] of Object.entries(taskHeaders ?? {})) if (value !== null) headers.set(name, value);
  // A `traceparent` the task writes itself is kept.
  if (traceparent && !headers.has('traceparent')) headers.set('traceparent', traceparent);
  if (ctx.credential) {
    const auth = await credentialAuth(ctx.credential, ctx.signal, headers.has('authorization'));
    if (ctx.signal.aborted) return aborted(ctx.signal);
    if (!auth.ok) return fail(auth.code, auth.message);
    ctx.secrets?.add(...auth.secrets);
    const unsendable = Object.entries(auth.headers).find(([name, value]) => !isHeaderName(name) || !isHeaderValue(value));
    if (unsendable) {
      const [name] = unsendable;
      const what = isHeaderName(name) ? `a header ${name} whose value is not ${HEADER_VALUE_TEXT}` : `a header name that is not ${HEADER_NAME_TEXT}`;
      return fail('invalid_credential', `credential '${ctx.credential.name}' (${ctx.credential.type}) gives ${what}`);
    }
    // Headers written in the task win over the credential's.
    for (const [name, value] of Object.entries(auth.headers)) if (!headers.has(name)) headers.set(name, value);
    credentialHeaders.push(...Object.keys(auth.headers));
    for (const [name, value] of Object.entries(auth.query)) url.searchParams.set(name, value);
  }

  let requestBody: string | undefined;
  if (body !== undefined && body !== null) {
    if (method === 'GET' || method === 'HEAD') return fail('invalid_task', `invalid http task: body: a ${method} request cannot have a body`);
    if (typeof body === 'string') {
      requestBody = body;
    } else if (isFormType(headers.get('content-type'))) {
      // The task said the body is a form: its JSON text under that type would be one nonsense field.
      requestBody = formBody(body);
      if (requestBody === undefined) return fail('invalid_task', 'invalid http task: body: expected a mapping (or text) under content-type application/x-www-form-urlencoded');
    } else {
      requestBody = JSON.stringify(body);
      if (!headers.has('content-type')) headers.set('content-type', 'application/json');
    }
  }

  const written = clientHeaderProblem(taskHeaders ?? {}, requestBody);
  if (written) return fail('invalid_task', `invalid http task: headers.${written}`);

  // The query string and userinfo may hold a credential (api_key in query), so messages use this.
  const shownUrl = `${url.origin}${url.pathname}`;
  // The task's own headers and body that hold a secret (`X-Token: "{{ keychain.tok.access_token }}"`)
  // are the URL's origin's alone too: fetch sent them on to whatever host a redirect named.
  const holdsSecret = (text: string) => ctx.secrets?.holds?.(text) === true;
  const secretHeaders = Object.entries(taskHeaders ?? {}).flatMap(([name, value]) => (value !== null && holdsSecret(value) ? [name] : []));
  const bodyOriginOnly = requestBody !== undefined && holdsSecret(requestBody);
  let response: Response;
  let responseBody: Pick<HttpResponseData, 'body' | 'body_encoding'>;
  try {
    response = await fetchFollowing(url, { method, headers, body: requestBody, signal: ctx.signal }, [...credentialHeaders, ...secretHeaders], { bodyOriginOnly });
    responseBody = await readBody(response);
  } catch (error) {
    if (ctx.signal.aborted) return aborted(ctx.signal);
    if (error instanceof AnswerTooLarge) {
      return fail('response_too_large', `${method} ${shownUrl} answered a body over ${ANSWER_MAX_TEXT}, the most a task's report carries: not read further`);
    }
    return fail('connection', `${method} ${shownUrl} failed: ${describeError(error)}`);
  }

  const data: HttpResponseData = { status: response.status, headers: headerRecord(response.headers), ...responseBody };
  if (response.status === 401 && ctx.credential) forgetOAuth2Token(ctx.credential.name);
  if (response.status >= 400 && !acceptStatus?.includes(response.status)) {
    const reason = response.statusText || STATUS_CODES[response.status] || '';
    return fail('http_status', `HTTP ${response.status} ${reason}`.trim(), data);
  }
  return ok(data);
}

// Headers the HTTP client writes from the request itself, which it refuses from a task (as if
// the target could not be reached: `connection`, which a retry.when on it retried).
const CLIENT_HEADERS = new Set(['transfer-encoding', 'keep-alive', 'upgrade', 'expect']);

/**
 * `name: why` of the first header the task writes that the HTTP client writes itself, or a
 * Content-Length that is not the length of the body sent: shorter, the client waited for ever
 * (a task without timeout_seconds held its worker slot and its execution running for good).
 * Without a body the client leaves Content-Length out, as before.
 */
function clientHeaderProblem(headers: Record<string, string | null>, body: string | undefined): string | undefined {
  for (const [name, value] of Object.entries(headers)) {
    if (value === null) continue;
    const lower = name.toLowerCase();
    if (CLIENT_HEADERS.has(lower)) return `${name}: written by the HTTP client itself, not by a task`;
    if (lower !== 'content-length' || body === undefined) continue;
    const bytes = Buffer.byteLength(body);
    if (value.trim() !== String(bytes)) return `${name}: is not the length of the body sent (${bytes} bytes): leave it out, the request gives the body's own`;
  }
  return undefined;
}

/**
 * The answer's headers by name, a repeated one's values joined with ", " as Headers.get joins
 * them: Headers yields each Set-Cookie apart, and a record built from its entries kept only the last.
 */
function headerRecord(headers: Headers): Record<string, string> {
  const joined = new Map<string, string>();
  for (const [name, value] of headers) {
    const before = joined.get(name);
    joined.set(name, before === undefined ? value : `${before}, ${value}`);
  }
  return Object.fromEntries(joined);
}

// Types whose bodies are bytes, not text, whatever they hold (an `image/svg+xml` is text).
const BINARY_TYPE = /^(?:(?:image|audio|video|font)\/(?![^;]*\+xml)|application\/(?:octet-stream|pdf|zip|gzip|x-gzip|wasm|x-protobuf|protobuf)\b)/i;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The answer's body as the outcome holds it. Text is kept as text (UTF-8), and JSON content types
 * (application/json, application/problem+json, ...) are parsed, each number exact (parseJsonExact:
 * JSON.parse rounds an id past 2^53); a body that claims JSON but is not
 * stays text rather than failing the task. A body of a binary type, or one that is not UTF-8,
 * is its bytes in base64 with `body_encoding: 'base64'`: read as text, each invalid sequence
 * became U+FFFD and the bytes were lost.
 */
async function readBody(response: Response): Promise<Pick<HttpResponseData, 'body' | 'body_encoding'>> {
  const bytes = await answerBytes(response);
  const type = response.headers.get('content-type') ?? '';
  const text = BINARY_TYPE.test(type.trim()) ? undefined : utf8Text(bytes);
  if (text === undefined) return { body: bytes.toString('base64'), body_encoding: 'base64' };
  if (!/[/+]json\b/i.test(type)) return { body: text };
  if (text.trim() === '') return { body: null };
  try {
    return { body: parseJsonExact(text) };
  } catch {
    return { body: text };
  }
}

// The bytes as UTF-8 text (a leading BOM dropped, as Response.text() does), or undefined when they are not UTF-8.
function utf8Text(bytes: Buffer): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}
