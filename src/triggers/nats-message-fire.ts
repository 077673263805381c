import { readJsonText } from '../api/input-guard.ts';
import { invalidUtf8At } from '../body-text.ts';
import type { Fire } from './fire-trigger.ts';
import { renderTriggerPayload } from './fire-trigger.ts';
import { placedProblem } from './payload-problem.ts';

/** What a fire reads of a JetStream message (a JsMsg has these). */
export type NatsMessage = {
  subject: string;
  data: Uint8Array;
  headers?: { keys(): string[]; values(key: string): string[] };
  info: { stream: string; streamSequence: number };
};

const utf8 = new TextDecoder('utf-8');
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** A message's text, and where its bytes stop being UTF-8 (undefined: they are); each bad sequence is U+FFFD in the text. */
function messageText(data: Uint8Array): { text: string; badByte?: number } {
  try {
    return { text: strictUtf8.decode(data) };
  } catch {
    return { text: utf8.decode(data), badByte: invalidUtf8At(Buffer.from(data.buffer, data.byteOffset, data.byteLength)) ?? 0 };
  }
}

/**
 * A message's fire key: its stream, its stream sequence and the stream's creation time
 * (`ORDERS:42@2025-06-01T12:00:00.123456789Z`), so a stream deleted and made again, whose
 * sequences start over, never has its new messages taken for fires made already.
 */
export function natsFireKey(stream: string, seq: number, streamCreated: string): string {
  return `${stream}:${seq}@${streamCreated}`;
}

/**
 * A message's `json`: its text parsed, or null when it is not JSON; `refused` (the place and the
 * reason) when it is JSON that a webhook body would be refused for (readJsonText: an integer
 * beyond 2^53, which JSON.parse would round, NUL, nesting past 64 levels, a prototype key; bytes
 * that are not UTF-8, from `badByte` on).
 */
export function messageJson(text: string, badByte?: number): { json: unknown } | { refused: string } {
  if (text === '') return { json: null };
  const read = readJsonText(text);
  // JSON is UTF-8 text (RFC 8259; a webhook body so sent is 400): taken, each bad byte would be U+FFFD in the workload.
  if (badByte !== undefined && !('syntax' in read) && isJson(text)) return { refused: `message.json: the message's bytes are not UTF-8 (at byte ${badByte}): JSON is UTF-8 text` };
  if ('value' in read) return { json: read.value };
  if ('syntax' in read) return { json: null };
  // The scan reads numbers in any text: one that is not JSON at all is text, not a refusal.
  if (read.status === 422 && !isJson(text)) return { json: null };
  return { refused: placedProblem('message.json', read.refused.path, read.refused.message) };
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * The fire of one message: the trigger's `payload` rendered over `trigger` and `message`
 * (`subject`, `seq`, `text`, `json`: messageJson, `headers`: each name's values joined by ", ");
 * the message itself is data, never rendered as a template. A message whose JSON is refused
 * (messageJson) is a refused fire: recorded and acked, never delivered again.
 */
export function natsMessageFire(trigger: { name: string; payload: Record<string, unknown> }, msg: NatsMessage, streamCreated: string, firedAt: Date): Fire {
  const { text, badByte } = messageText(msg.data);
  const seq = msg.info.streamSequence;
  const fireKey = natsFireKey(msg.info.stream, seq, streamCreated);
  const read = messageJson(text, badByte);
  if ('refused' in read) return { fireKey, scheduledTime: null, refused: read.refused };
  const headers: Record<string, string> = {};
  const h = msg.headers;
  if (h) for (const key of h.keys()) headers[key] = h.values(key).join(', ');
  const roots = {
    trigger: { name: trigger.name, kind: 'nats', scheduled_time: null, fired_at: firedAt.toISOString() },
    message: { subject: msg.subject, seq, json: read.json, text, headers },
  };
  return { fireKey, scheduledTime: null, ...renderTriggerPayload(trigger.payload, roots) };
}
