import { SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import * as v from 'valibot';
import { describeError } from './outcome.ts';

/** How much of a server's text goes into an error message: its answer may be 8 MiB, a message is read by people. */
export const MCP_ERROR_TEXT_LIMIT_CHARS = 500;

// The SDK checks each answer against the protocol's schema with zod; what it throws lists every
// problem (20,000 bad tools: a 3.5 MB dump). Only its shape is read, not its class: zod is the SDK's
// (its mini build, whose errors are `$ZodError`).
const SchemaProblems = v.object({
  name: v.picklist(['ZodError', '$ZodError']),
  issues: v.pipe(v.array(v.looseObject({ path: v.optional(v.array(v.unknown())), message: v.string() })), v.minLength(1)),
});

// The message the SDK's SSEClientTransport.send throws for an answer with an error status.
const SSE_POST_STATUS = /^Error POSTing to endpoint \(HTTP ([45]\d\d)\): /;
// What the SDK's client throws, as plain Errors, for answers it will not use: only their text tells them.
const UNSPOKEN_VERSION = /^Server's protocol version is not supported: /;
const FOREIGN_ENDPOINT = /^Endpoint origin does not match connection origin: /;
// StreamableHTTPError's own code for an answer that is neither JSON nor an event stream.
const UNEXPECTED_CONTENT_TYPE = -1;

/** Streamable HTTP refused (404, 405) and the older HTTP+SSE transport failed too: `sse` is why. */
export class FallbackFailed extends Error {
  readonly streamableStatus: number;
  readonly sse: unknown;
  constructor(streamableStatus: number, sse: unknown) {
    super(`Streamable HTTP answered HTTP ${streamableStatus} and the SSE fallback failed: ${describeError(sse)}`);
    this.streamableStatus = streamableStatus;
    this.sse = sse;
  }
}

/** `text` cut at MCP_ERROR_TEXT_LIMIT_CHARS; `maskCut` masks a secret the cut left in part (SecretMask.maskCut). */
export function cutServerText(text: string, maskCut: (kept: string) => string = (kept) => kept): string {
  return text.length > MCP_ERROR_TEXT_LIMIT_CHARS ? `${maskCut(text.slice(0, MCP_ERROR_TEXT_LIMIT_CHARS))}…` : text;
}

/** Whether `error` is a message the server sent that is not JSON, or not the protocol's shape. */
export function isUnreadableAnswer(error: unknown): boolean {
  return error instanceof SyntaxError || v.is(SchemaProblems, error);
}

/**
 * What went wrong with an MCP request, in one bounded text (the server's part cut), and whether
 * the server answered it: with a JSON-RPC error, an HTTP error status (a session it no longer
 * knows is a 404) or something that is not an MCP answer (not JSON, or not the protocol's shape).
 * Not redacted: the caller masks the task's secrets in it.
 */
export function mcpProblem(error: unknown, maskCut?: (kept: string) => string): { answered: boolean; text: string } {
  if (error instanceof McpError) return { answered: true, text: cutServerText(error.message, maskCut) };
  // Answered over both transports (a path that serves neither) only when the fallback was answered too.
  if (error instanceof FallbackFailed) {
    const sse = mcpProblem(error.sse, maskCut);
    const text = sse.answered ? `HTTP ${error.streamableStatus} (Streamable HTTP), then over the SSE fallback ${sse.text}` : `Streamable HTTP answered HTTP ${error.streamableStatus} and the SSE fallback failed: ${sse.text}`;
    return { answered: sse.answered, text };
  }
  const problems = v.safeParse(SchemaProblems, error);
  if (problems.success) {
    const [first, ...more] = problems.output.issues;
    const path = (first.path ?? []).map(String).join('.');
    const rest = more.length ? ` (and ${more.length.toLocaleString('en-US')} more problem${more.length === 1 ? '' : 's'})` : '';
    return { answered: true, text: `something that is not an MCP answer: ${cutServerText(`${path ? `${path}: ` : ''}${first.message}`, maskCut)}${rest}` };
  }
  if (error instanceof SyntaxError) return { answered: true, text: `something that is not JSON: ${cutServerText(error.message, maskCut)}` };
  if (error instanceof StreamableHTTPError && error.code === UNEXPECTED_CONTENT_TYPE) {
    const type = error.message.replace(/^.*Unexpected content type: /, '');
    return { answered: true, text: `something that is not an MCP answer: content type ${type === 'null' ? '(none)' : cutServerText(type, maskCut)}, neither JSON nor an event stream` };
  }
  // A status the SDK read from the answer.
  if (error instanceof StreamableHTTPError && error.code !== undefined && error.code >= 400) {
    const text = error.message.replace(/^Streamable HTTP error: (Error POSTing to endpoint: )?/, '');
    return { answered: true, text: `HTTP ${error.code}: ${cutServerText(text, maskCut)}` };
  }
  // The HTTP+SSE transport's stream answered with an error status (401 for a refused token), or
  // with a success that is no event stream (another content type, a 204).
  if (error instanceof SseError && error.code !== undefined && error.code >= 200) {
    const text = cutServerText(error.message.replace(/^SSE error: /, ''), maskCut);
    return { answered: true, text: error.code >= 400 ? `HTTP ${error.code}: ${text}` : `something that is not an MCP event stream: HTTP ${error.code}, ${text}` };
  }
  const message = error instanceof Error ? error.message : '';
  if (UNSPOKEN_VERSION.test(message)) {
    const version = cutServerText(message.replace(UNSPOKEN_VERSION, ''), maskCut);
    return { answered: true, text: `protocol version ${version}, which this client does not speak (it speaks ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})` };
  }
  // An HTTP+SSE stream naming an endpoint elsewhere: the client posts nothing there.
  if (FOREIGN_ENDPOINT.test(message)) return { answered: true, text: `an endpoint on another origin, ${cutServerText(message.replace(FOREIGN_ENDPOINT, ''), maskCut)}: not posted to` };
  // That transport's POSTs throw a plain Error for an error status; only its text tells it.
  const posted = SSE_POST_STATUS.exec(message);
  if (posted) return { answered: true, text: `HTTP ${posted[1]}: ${cutServerText(message.slice(posted[0].length), maskCut)}` };
  return { answered: false, text: cutServerText(describeError(error), maskCut) };
}
