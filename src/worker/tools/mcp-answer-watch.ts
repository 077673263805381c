import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { isUnreadableAnswer } from './mcp-failure.ts';
import { describeError } from './outcome.ts';

type RequestId = string | number;

// What the SDK read of an ended answer reaches it within a few turns of the event loop; a request
// still waiting after this will not be answered.
const SETTLE_MS = 50;

/**
 * How many times in a row the MCP client tries to resume a stream it could not reach (its
 * reconnectionOptions.maxRetries, set on the transport from here): the watch counts them.
 */
export const MCP_RESUME_ATTEMPTS = 2;

/**
 * Notices a request an MCP server will not answer, which the SDK would wait for until the request's
 * timeout (an hour by default): over Streamable HTTP, a POST whose answer (an event stream, JSON
 * or none) ended without the answer to a request it carried (a server that closed or crashed
 * mid-call); over HTTP+SSE, the event stream that carries every answer ending while a request
 * waits (its session, and the answer, went with it). `lost` is then aborted. A Streamable HTTP
 * stream that gave an event `id` is resumed by the SDK (its GET with Last-Event-ID); lost when the
 * server refuses that (an error status: the SDK, given 405, would wait on in silence), was not
 * reached MCP_RESUME_ATTEMPTS times, or resumed a stream that ended giving no answer and no id.
 */
export class McpAnswerWatch {
  readonly lost = new AbortController();
  /** Why the answer is lost, when more is known than that its stream ended (its resumption failed). */
  why: string | undefined;
  /**
   * Aborted, with the error as its reason, when the server sent a message that is not JSON-RPC
   * while a request waits: the SDK drops it and waits on, till the request's timeout, for the
   * answer that message most likely was.
   */
  readonly unreadable = new AbortController();
  private readonly waiting = new Set<RequestId>();
  /** Requests whose answer's stream ended resumable: their answer may come on a resumption. */
  private readonly resuming = new Set<RequestId>();
  private resumeFailures = 0;

  /** Set as a transport's `onmessage` before its client connects (the SDK calls it first): an answer heard. */
  readonly heard = (message: JSONRPCMessage): void => {
    if ('id' in message && message.id !== undefined && ('result' in message || 'error' in message)) {
      this.waiting.delete(message.id);
      this.resuming.delete(message.id);
    }
  };

  /** Set as a transport's `onerror` before its client connects (the SDK wraps it, calling it first). */
  readonly failed = (error: unknown): void => {
    if (this.waiting.size > 0 && isUnreadableAnswer(error)) this.unreadable.abort(error);
  };

  /** `base` for one transport, watching the answers it carries. */
  fetch(base: FetchLike, transport: 'streamable-http' | 'sse'): FetchLike {
    return async (url, init) => {
      if (transport === 'streamable-http' && init?.method === 'GET' && new Headers(init.headers).has('last-event-id')) return this.resumption(base, url, init);
      const sent = init?.method === 'POST' ? requestIds(init.body) : [];
      for (const id of sent) this.waiting.add(id);
      const settled = () => sent.forEach((id) => this.waiting.delete(id));
      const response = await base(url, init).catch((error: unknown) => {
        settled();
        throw error;
      });
      // A refused request fails in the SDK (a 404 or 405 may send it to the other transport); a
      // POST over HTTP+SSE is only accepted, its answer comes on the stream.
      if (!response.ok) {
        settled();
        return response;
      }
      if (transport === 'streamable-http') return sent.length ? this.watched(response, () => sent, true) : response;
      return init?.method === 'POST' ? response : this.watched(response, () => [...this.waiting], false);
    };
  }

  /** The SDK's GET resuming a stream: watched as the stream it resumes, lost when the server refuses it or is not reached. */
  private async resumption(base: FetchLike, url: string | URL, init: RequestInit): Promise<Response> {
    const ids = [...this.resuming].filter((id) => this.waiting.has(id));
    // The standalone stream's: no request waits on it.
    if (!ids.length) return base(url, init);
    let response: Response;
    try {
      response = await base(url, init);
    } catch (error) {
      if (++this.resumeFailures >= MCP_RESUME_ATTEMPTS) this.lose(`and its resumption failed: ${describeError(error)}`);
      throw error;
    }
    if (!response.ok) {
      this.lose(`and answered its resumption with HTTP ${response.status}`);
      return response;
    }
    this.resumeFailures = 0;
    return this.watched(response, () => ids, true);
  }

  private lose(why?: string): void {
    if (this.lost.signal.aborted) return;
    this.why = why;
    this.lost.abort();
  }

  private watched(response: Response, ids: () => RequestId[], resumable: boolean): Response {
    const ended = () => {
      const unanswered = ids();
      const timer = setTimeout(() => {
        if (unanswered.some((id) => this.waiting.has(id))) this.lose();
      }, SETTLE_MS);
      timer.unref();
    };
    // 202 (accepted) is no answer to a request: the SDK drops its body and waits.
    if (!response.body || response.status === 202) {
      ended();
      return response;
    }
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let tail = '';
    let resumed = false;
    let cancelled = false;
    // A stream that gave an id is resumed by the SDK: its requests wait on that (resumption).
    const settle = () => (resumed ? ids().forEach((id) => this.resuming.add(id)) : ended());
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) {
            controller.close();
            if (!cancelled) settle();
            return;
          }
          if (resumable && !resumed) {
            // An event id (a line `id:` or `id`) makes the stream one the SDK resumes.
            const text = tail + decoder.decode(value, { stream: true });
            resumed = /(^|[\r\n])id(:|[\r\n])/.test(text);
            tail = text.slice(-3);
          }
          controller.enqueue(value);
        } catch (error) {
          controller.error(error);
          if (!cancelled) settle();
        }
      },
      cancel(reason) {
        cancelled = true;
        return reader.cancel(reason);
      },
    });
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  }
}

/** The ids of the JSON-RPC requests (not notifications, not answers) in a POST's body. */
function requestIds(body: unknown): RequestId[] {
  if (typeof body !== 'string') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return [];
  }
  const messages: unknown[] = Array.isArray(parsed) ? parsed : [parsed];
  return messages.flatMap((m) => (typeof m === 'object' && m !== null && 'method' in m && 'id' in m && (typeof m.id === 'string' || typeof m.id === 'number') ? [m.id] : []));
}
