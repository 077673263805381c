import { BODY_LIMIT_BYTES } from '../../body-limit.ts';

/**
 * The most of an answer a task reads (an http response's body, a postgres task's rows): the
 * server's request body limit (src/body-limit.ts), past which the report carrying it would be
 * refused anyway. Reading on would hold the whole answer, however large, in the worker's memory.
 */
export const ANSWER_MAX_BYTES = BODY_LIMIT_BYTES;

/** The limit in words, for messages. */
export const ANSWER_MAX_TEXT = `${ANSWER_MAX_BYTES / (1024 * 1024)} MiB`;

/** A body past ANSWER_MAX_BYTES: what read it stopped there. */
export class AnswerTooLarge extends Error {
  constructor() {
    super(`the answer's body is over ${ANSWER_MAX_TEXT}: not read further`);
  }
}

/**
 * The body's bytes, read up to ANSWER_MAX_BYTES; beyond (declared or as it streams),
 * AnswerTooLarge, and the rest is not read. No body (HEAD, 204, 304): none, whatever is declared.
 */
export async function answerBytes(response: Response): Promise<Buffer> {
  // A HEAD's answer and a 304 have no body: their Content-Length is the resource's, not one to read.
  if (!response.body) return Buffer.alloc(0);
  if (Number(response.headers.get('content-length') ?? 0) > ANSWER_MAX_BYTES) {
    await response.body.cancel();
    throw new AnswerTooLarge();
  }
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for await (const chunk of response.body) {
    bytes += chunk.byteLength;
    if (bytes > ANSWER_MAX_BYTES) throw new AnswerTooLarge(); // leaving the loop cancels the stream
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, bytes);
}

/** The body's text (UTF-8, as Response.text() reads it), read as answerBytes reads it. */
export async function answerText(response: Response): Promise<string> {
  return new TextDecoder().decode(await answerBytes(response));
}

// Statuses whose responses have no body (a Response built with one throws).
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * A fetch for clients that read answers themselves (the MCP SDK's transports), for one task: the
 * bodies of all the responses it fetched, together over ANSWER_MAX_BYTES (declared or as they
 * stream), error with AnswerTooLarge and are not read further, and `onTooLarge` hears of it (its
 * caller stops waiting for an answer that will not come whole). Together, because the task's
 * result is what they carry (a tools/list's pages, each within the limit, made one list of
 * 100 MiB). Redirects and bodiless answers pass as they are.
 */
export function boundedFetch(onTooLarge: () => void, base: typeof fetch = fetch): (url: string | URL, init?: RequestInit) => Promise<Response> {
  let bytes = 0;
  return async (url, init) => {
    const response = await base(url, init);
    if (!response.body || NULL_BODY_STATUSES.has(response.status) || (response.status >= 300 && response.status < 400)) return response;
    if (bytes + Number(response.headers.get('content-length') ?? 0) > ANSWER_MAX_BYTES) {
      await response.body.cancel();
      onTooLarge();
      throw new AnswerTooLarge();
    }
    const counted = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        bytes += chunk.byteLength;
        if (bytes <= ANSWER_MAX_BYTES) return controller.enqueue(chunk);
        onTooLarge();
        controller.error(new AnswerTooLarge()); // the pipe then cancels the body: the rest is not read
      },
    });
    return new Response(response.body.pipeThrough(counted), { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
