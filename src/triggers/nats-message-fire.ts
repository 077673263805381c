import type { Fire } from './fire-trigger.ts';
import { renderTriggerPayload } from './fire-trigger.ts';

/** What a fire reads of a JetStream message (a JsMsg has these). */
export type NatsMessage = {
  subject: string;
  data: Uint8Array;
  headers?: { keys(): string[]; values(key: string): string[] };
  info: { stream: string; streamSequence: number };
};

const utf8 = new TextDecoder('utf-8');

/**
 * A message's fire key: its stream, its stream sequence and the stream's creation time
 * (`ORDERS:42@2025-06-01T12:00:00.123456789Z`), so a stream deleted and made again, whose
 * sequences start over, never has its new messages taken for fires made already.
 */
export function natsFireKey(stream: string, seq: number, streamCreated: string): string {
  return `${stream}:${seq}@${streamCreated}`;
}

/**
 * The fire of one message: the trigger's `payload` rendered over `trigger` and `message`
 * (`subject`, `seq`, `text`, `json`: the text parsed or null, `headers`: each name's values
 * joined by ", "); the message itself is data, never rendered as a template.
 */
export function natsMessageFire(trigger: { name: string; payload: Record<string, unknown> }, msg: NatsMessage, streamCreated: string, firedAt: Date): Fire {
  const text = utf8.decode(msg.data);
  let json: unknown = null;
  try {
    json = text === '' ? null : JSON.parse(text);
  } catch {
    json = null;
  }
  const headers: Record<string, string> = {};
  const h = msg.headers;
  if (h) for (const key of h.keys()) headers[key] = h.values(key).join(', ');
  const seq = msg.info.streamSequence;
  const roots = {
    trigger: { name: trigger.name, kind: 'nats', scheduled_time: null, fired_at: firedAt.toISOString() },
    message: { subject: msg.subject, seq, json, text, headers },
  };
  return { fireKey: natsFireKey(msg.info.stream, seq, streamCreated), scheduledTime: null, ...renderTriggerPayload(trigger.payload, roots) };
}
