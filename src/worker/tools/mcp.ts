import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import * as v from 'valibot';
import { mcpAuth } from './mcp-auth.ts';
import { HttpUrl } from './http-url.ts';
import { ANSWER_MAX_TEXT, boundedFetch } from './answer-limit.ts';
import { guardedFetch } from './metadata-guard.ts';
import { MCP_RESUME_ATTEMPTS, McpAnswerWatch } from './mcp-answer-watch.ts';
import { cutServerText, FallbackFailed, mcpProblem } from './mcp-failure.ts';
import { aborted, fail, invalidTask, ok } from './outcome.ts';
import { redactSecrets } from '../../credential/redact-secrets.ts';
import { rejectsOnAbort } from '../rejects-on-abort.ts';
import type { RenderedTask, TaskOutcome, ToolContext } from './types.ts';
import { ownKeysRecord } from '../../own-keys-record.ts';
import { holdsUserinfo, RENDERED_USERINFO_PROBLEM } from '../../url-userinfo.ts';
import { MAX_TIMER_MS } from '../../config.ts';

const MCP_CLIENT_INFO = { name: 'svc-worker', version: '0.1.0' };
// The task's signal bounds a call; this only replaces the SDK's 60 s default for tasks without
// timeout_seconds, so long tool calls are not cut short (an hour here failed a longer one mcp_error).
const MCP_DEFAULT_REQUEST_TIMEOUT_MS = MAX_TIMER_MS;
// tools/list pages followed before giving up on a server that never stops paging.
const MCP_LIST_MAX_PAGES = 100;
// Ending a session must not hold the task once its answer is in.
const MCP_CLOSE_TIMEOUT_MS = 2_000;

const McpTaskSchema = v.looseObject({
  server: v.optional(v.nullable(v.string())),
  endpoint: HttpUrl,
  method: v.picklist(['tools/list', 'tools/call']),
  tool: v.optional(v.nullable(v.pipe(v.string(), v.nonEmpty()))),
  arguments: v.optional(v.nullable(ownKeysRecord(v.string(), v.unknown()))),
  access_token: v.optional(v.nullable(v.string())),
  transport: v.optional(v.nullable(v.picklist(['streamable-http', 'sse', 'auto']))),
  timeout_seconds: v.optional(v.unknown()),
});
const ContentSchema = v.array(v.looseObject({ type: v.string(), text: v.optional(v.string()) }));

/**
 * Calls an MCP server over Streamable HTTP (SSE when that answers 404/405): `tools/list` or
 * `tools/call` of `tool` with `arguments`; data is the protocol result. A call result with
 * `isError: true` is a `tool_error` outcome that keeps the result. One client per task.
 */
export async function mcp(task: RenderedTask, ctx: ToolContext): Promise<TaskOutcome> {
  const problem = fieldProblem(task);
  if (problem) return fail('invalid_task', `invalid mcp task: ${problem}`);
  const parsed = v.safeParse(McpTaskSchema, task);
  if (!parsed.success) return invalidTask('mcp', parsed.issues);
  const { endpoint, method, tool, arguments: args, access_token: accessToken, timeout_seconds: timeoutSeconds, transport } = parsed.output;
  if (method === 'tools/call' && !tool) return fail('invalid_task', 'invalid mcp task: tool: required for tools/call');
  const serverName = parsed.output.server ? `MCP server '${parsed.output.server}'` : 'MCP server';

  const url = new URL(endpoint);
  const auth = await mcpAuth(url, accessToken ?? undefined, ctx.credential, ctx.env, ctx.signal);
  if (ctx.signal.aborted) return aborted(ctx.signal);
  if (!auth.ok) return fail(auth.code, auth.message);
  ctx.secrets?.add(...auth.secrets);
  const safe = (text: string) => redactSecrets(text, auth.secrets);
  const maskCut = ctx.secrets?.maskCut?.bind(ctx.secrets);

  for (const [name, value] of Object.entries(auth.query)) url.searchParams.set(name, value);
  // An answer past the report's limit ends the call at once: the SDK would wait for the rest.
  const tooLarge = new AbortController();
  // Through the metadata guard: an endpoint (or a redirect) at a cloud metadata service is not reached.
  const fetch = boundedFetch(() => tooLarge.abort(), guardedFetch);
  const tooLargeOutcome = () => fail('response_too_large', `${serverName} answered over ${ANSWER_MAX_TEXT}, the most a task's report carries: not read further`);
  // A server that ends its answer without answering (closed mid-call) ends the call at once too.
  const watch = new McpAnswerWatch();
  const lostOutcome = (doing: string) => fail('connection', safe(`${doing} without answering it${watch.why ? `, ${watch.why}` : ''}`));
  const options: RequestOptions = {
    signal: AbortSignal.any([ctx.signal, tooLarge.signal, watch.lost.signal, watch.unreadable.signal]),
    timeout: typeof timeoutSeconds === 'number' && timeoutSeconds > 0 ? Math.min(timeoutSeconds * 1000 + 1000, MAX_TIMER_MS) : MCP_DEFAULT_REQUEST_TIMEOUT_MS,
  };

  let connection: Connection;
  try {
    connection = await connect(url, { headers: auth.headers, fetch, watch }, options, transport ?? 'auto');
  } catch (error) {
    if (ctx.signal.aborted) return aborted(ctx.signal);
    if (tooLarge.signal.aborted) return tooLargeOutcome();
    if (watch.lost.signal.aborted) return lostOutcome(`cannot connect to ${serverName} at ${url.origin}${url.pathname}: it ended its answer to initialize`);
    const cause: unknown = watch.unreadable.signal.aborted ? watch.unreadable.signal.reason : error;
    const problem = mcpProblem(cause, maskCut);
    // Reached and answered (a 401 for a refused token, a JSON-RPC error, not MCP): no `connection`
    // failure, which says the server was not reached and which a `retry.when` may retry.
    if (problem.answered) return fail('mcp_error', safe(`${serverName} at ${url.origin}${url.pathname} answered initialize with ${problem.text}`));
    return fail('connection', safe(`cannot connect to ${serverName} at ${url.origin}${url.pathname}: ${problem.text}`));
  }

  try {
    if (method === 'tools/list') {
      const tools: unknown[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await connection.client.listTools(cursor ? { cursor } : undefined, options);
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor && ++pages < MCP_LIST_MAX_PAGES);
      // A list cut short is not the server's list: it fails, keeping what came.
      if (cursor) return fail('mcp_error', `${serverName} was still paging tools/list after ${MCP_LIST_MAX_PAGES} pages: not followed further`, { tools });
      return ok({ tools });
    }
    const result = await connection.client.callTool({ name: tool ?? '', arguments: args ?? {} }, undefined, options);
    if ('isError' in result && result.isError === true) {
      return fail('tool_error', safe(`MCP tool '${tool}' returned an error: ${errorText(result.content, maskCut)}`), result);
    }
    return ok(result);
  } catch (error) {
    if (ctx.signal.aborted) return aborted(ctx.signal);
    if (tooLarge.signal.aborted) return tooLargeOutcome();
    if (watch.lost.signal.aborted) return lostOutcome(`${serverName} ended its answer to ${method}`);
    const cause: unknown = watch.unreadable.signal.aborted ? watch.unreadable.signal.reason : error;
    const problem = mcpProblem(cause, maskCut);
    if (cause instanceof McpError) return fail('mcp_error', safe(`${serverName}: ${problem.text}`));
    return problem.answered ? fail('mcp_error', safe(`${serverName} answered ${method} with ${problem.text}`)) : fail('connection', safe(`${serverName}: ${problem.text}`));
  } finally {
    const closing = close(connection);
    if (!ctx.signal.aborted) await closing;
  }
}

/**
 * What the schema would say badly of a rendered task: its record reads an array as an object of
 * indexes (the tool got {"0": …}) and a scalar as expecting "unknown"; with neither `server` nor
 * `endpoint` it would blame the endpoint alone; an endpoint with a user name or password it would
 * pass, for fetch to refuse. Undefined when none applies.
 */
function fieldProblem(task: RenderedTask): string | undefined {
  const args = task.arguments;
  if (args !== undefined && args !== null && (typeof args !== 'object' || Array.isArray(args))) return 'arguments: expected an object';
  const absent = (value: unknown) => value === undefined || value === null || value === '';
  if (absent(task.server) && absent(task.endpoint)) return 'server or endpoint: one is required';
  // fetch refuses such a URL, quoting it (password and all) in its error.
  if (typeof task.endpoint === 'string' && holdsUserinfo(task.endpoint)) return `endpoint: ${RENDERED_USERINFO_PROBLEM}`;
  return undefined;
}

type Connection = { client: Client; transport: StreamableHTTPClientTransport | SSEClientTransport };
/** How a task's transport reaches its server: the headers of its auth, the fetch that bounds answers, and the watch for answers that will not come. */
type Reach = { headers: Record<string, string>; fetch: FetchLike; watch: McpAnswerWatch };

// Streamable HTTP first; a server that answers 404 or 405 to it speaks only the older SSE transport.
// A server registered with `transport: sse` (or `streamable-http`) gets only that one.
async function connect(url: URL, reach: Reach, options: RequestOptions, transport: 'streamable-http' | 'sse' | 'auto'): Promise<Connection> {
  if (transport === 'sse') return connectSse(url, reach, options);
  const streamable = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: reach.headers },
    fetch: reach.watch.fetch(reach.fetch, 'streamable-http'),
    // The SDK's defaults, its attempts named here: the watch counts them (McpAnswerWatch).
    reconnectionOptions: { initialReconnectionDelay: 1000, maxReconnectionDelay: 30_000, reconnectionDelayGrowFactor: 1.5, maxRetries: MCP_RESUME_ATTEMPTS },
  });
  streamable.onmessage = reach.watch.heard;
  streamable.onerror = reach.watch.failed;
  const client = new Client(MCP_CLIENT_INFO);
  let streamableStatus: number;
  try {
    await client.connect(streamable, options);
    return { client, transport: streamable };
  } catch (error) {
    await client.close().catch(() => {});
    if (transport === 'streamable-http' || !(error instanceof StreamableHTTPError && (error.code === 404 || error.code === 405))) throw error;
    streamableStatus = error.code;
  }
  try {
    return await connectSse(url, reach, options);
  } catch (error) {
    throw new FallbackFailed(streamableStatus, error);
  }
}

async function connectSse(url: URL, reach: Reach, options: RequestOptions): Promise<Connection> {
  const sse = new SSEClientTransport(url, { requestInit: { headers: reach.headers }, fetch: reach.watch.fetch(reach.fetch, 'sse') });
  sse.onmessage = reach.watch.heard;
  sse.onerror = reach.watch.failed;
  const sseClient = new Client(MCP_CLIENT_INFO);
  try {
    // The SDK waits for the stream's endpoint event without a bound, and the signal does not
    // reach that wait: a stream that never names one held the task past its timeout for good.
    await Promise.race([sseClient.connect(sse, options), ...(options.signal ? [rejectsOnAbort(options.signal)] : [])]);
  } catch (error) {
    await sseClient.close().catch(() => {});
    throw error;
  }
  return { client: sseClient, transport: sse };
}

// A stateful server keeps a session until told otherwise, so the session is ended, then closed.
async function close({ client, transport }: Connection): Promise<void> {
  const work = (async () => {
    if (transport instanceof StreamableHTTPClientTransport && transport.sessionId) await transport.terminateSession().catch(() => {});
    await client.close().catch(() => {});
  })();
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work, new Promise<void>((resolve) => (timer = setTimeout(resolve, MCP_CLOSE_TIMEOUT_MS)))]);
  clearTimeout(timer);
}

/** The tool's error text, cut as a server's text in a message is (all of it stays in data). */
function errorText(content: unknown, maskCut?: (kept: string) => string): string {
  const parsed = v.safeParse(ContentSchema, content);
  const text = parsed.success ? parsed.output.map((item) => item.text ?? '').filter(Boolean).join(' ') : '';
  return text ? cutServerText(text, maskCut) : '(no text)';
}
