import { randomUUID } from 'node:crypto';
import * as v from 'valibot';
import { MAX_STEP_NAME_CHARS } from '../dsl/step-name-limit.ts';
import { MAX_CONTROL_REASON_CHARS } from '../protocol.ts';
import type { ServerClient } from '../worker/server-client.ts';
import { UsageError, type Out } from './api-command.ts';
import { EXIT } from './executions-usage.ts';
import { checked, sendKeyed } from './run-api.ts';
import { printableText } from './text-width.ts';
import { jsonSyntaxReason, optionText } from './json-option.ts';

// `svc cancel|pause|resume|retry|signal ID`: one POST each, its answer printed as a line (or as
// JSON). Answers are read with a schema; fields not shown stay in the `--json` print.

/** The commands that act on an execution (one POST each). */
export type ControlName = 'cancel' | 'pause' | 'resume' | 'retry' | 'signal';

export type ControlOptions = {
  json?: boolean;
  reason?: string;
  cascade?: boolean;
  'no-cascade'?: boolean;
  from?: string;
  data?: string;
  'idempotency-key'?: string;
};

const Cancelled = v.looseObject({ status: v.picklist(['cancelled', 'already_finished']), execution_id: v.number(), execution_status: v.optional(v.string()) });
const Moved = v.looseObject({ execution_id: v.number(), status: v.string() });
const Retried = v.looseObject({ execution_id: v.number(), retry_of: v.number(), from_step: v.string(), replayed: v.array(v.string()) });
// A name a step can wait for, as the playbook and the signal route take it (letters, digits, _ . -).
const SIGNAL_NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,127}$/;
const Signalled = v.looseObject({ status: v.string(), execution_id: v.number(), signal: v.string(), step: v.optional(v.nullable(v.string()), null), event_id: v.optional(v.nullable(v.number()), null) });
/** Sends one control request about execution `id` and prints its answer; returns the exit code (ServerError and the rest thrown). */
export async function controlExecution(name: ControlName, client: ServerClient, id: number, args: string[], values: ControlOptions, out: Out): Promise<number> {
  // With a key (a retry's, a signal's), sent again as sendKeyed says: each copy is the same request.
  const post = async <S extends v.GenericSchema>(schema: S, action: string, body: unknown, headers?: Record<string, string>): Promise<v.InferOutput<S>> => {
    const url = `/api/executions/${id}/${action}`;
    const send = async () => checked(schema, await client.request<unknown>('POST', url, body, undefined, { headers }), `POST ${url}`);
    const answer = headers ? await sendKeyed(send) : await send();
    if (values.json) out.write(`${JSON.stringify(answer, null, 2)}\n`);
    return answer;
  };
  // A step's name is anyone's text: its control characters escaped, as every table writes them.
  const say = (text: string) => {
    if (!values.json) out.write(`${printableText(text)}\n`);
  };
  // A value the server refuses whatever the execution (its 422, exit 1) is a usage error, nothing sent.
  if (values.reason !== undefined && values.reason.length > MAX_CONTROL_REASON_CHARS) throw new UsageError(`--reason is at most ${MAX_CONTROL_REASON_CHARS} characters, got ${values.reason.length}`);
  switch (name) {
    case 'cancel': {
      if (values.cascade && values['no-cascade']) throw new UsageError('--cascade and --no-cascade exclude each other');
      // Sent only when asked for: the server's default (cascade) stays the server's.
      const cascade = values['no-cascade'] ? false : values.cascade ? true : undefined;
      const answer = await post(Cancelled, 'cancel', { ...(values.reason === undefined ? {} : { reason: values.reason }), ...(cascade === undefined ? {} : { cascade }) });
      if (answer.status === 'cancelled') {
        say(`execution ${id} cancelled`);
        return 0;
      }
      say(`execution ${id} had already finished (${answer.execution_status ?? 'finished'}): nothing cancelled`);
      // As a 409 would: the execution is not in a state to be cancelled.
      return EXIT.conflict;
    }
    case 'pause':
    case 'resume': {
      const answer = await post(Moved, name, values.reason === undefined ? {} : { reason: values.reason });
      say(`execution ${id} ${answer.status}`);
      return 0;
    }
    case 'retry': {
      if (values.from === '') throw new UsageError('--from expects a step name, got ""');
      if (values.from !== undefined && values.from.length > MAX_STEP_NAME_CHARS) throw new UsageError(`--from expects a step name of at most ${MAX_STEP_NAME_CHARS} characters, got ${values.from.length}`);
      const answer = await post(Retried, 'retry', values.from === undefined ? {} : { from_step: values.from }, keyHeader(values));
      say(`execution ${answer.execution_id} started: a retry of ${id} from step ${answer.from_step}${answer.replayed.length ? ` (replayed: ${answer.replayed.join(', ')})` : ''}`);
      return 0;
    }
    case 'signal': {
      const [signal, ...extra] = args;
      if (!signal) throw new UsageError('signal needs the execution ID and the signal NAME');
      if (extra.length) throw new UsageError(`unexpected arguments: ${extra.join(' ')}`);
      if (!SIGNAL_NAME.test(signal)) throw new UsageError(`the signal NAME is letters, digits, _ . - (starting with a letter or _, at most 128), got ${JSON.stringify(signal)}`);
      const body = values.data === undefined ? {} : { payload: jsonValueOption('--data', values.data) };
      const answer = await post(Signalled, `signals/${encodeURIComponent(signal)}`, body, keyHeader(values));
      say(`signal ${answer.signal} ${answer.status}${answer.step ? ` to step ${answer.step}` : ''} of execution ${answer.execution_id}${answer.event_id === null ? '' : ` (event ${answer.event_id})`}`);
      return 0;
    }
  }
}

/** What the server takes as a key (src/api/idempotent-starts.ts), as svc events send checks it. */
const IDEMPOTENCY_KEY = /^[\x20-\x7e]{1,255}$/;

/**
 * `--idempotency-key` as the request's header, or a key of its own when none is given (as `svc
 * run` sends): the same key again is answered as the first, and acts once, so the copies this
 * command sends again itself (no answer, 502-504) are one retry or signal. One the server refuses
 * (empty, past 255 characters, not printable ASCII) is a usage error before anything is sent, as
 * a bad option value is (it was the server's 422, exit 1).
 */
function keyHeader(values: ControlOptions): Record<string, string> {
  const key = values['idempotency-key'];
  if (key !== undefined && !IDEMPOTENCY_KEY.test(key)) throw new UsageError(`--idempotency-key expects 1 to 255 printable ASCII characters, got ${key.length > 40 ? `${key.length} characters` : JSON.stringify(key)}`);
  return { 'idempotency-key': key ?? randomUUID() };
}

/**
 * `--data`: any JSON value (typed, or `@FILE`), sent as parsed (the API takes any payload: `true`, a list, an object).
 * Not read through a schema: a record schema drops keys such as `constructor`, which are data here.
 * A number no double holds (1e400, which JSON.parse reads as Infinity and JSON.stringify sends as
 * null) or an integer past 2^53 (sent rounded) is refused as the server refuses it, naming it as
 * typed: the step would have got null, or another number, or a refusal naming one never typed.
 */
function jsonValueOption(flag: string, text: string): unknown {
  const typed = optionText(flag, text);
  let unheld: string | undefined;
  let value: unknown;
  try {
    value = JSON.parse(typed, (_key: string, v: unknown, context?: { source?: string }) => {
      // As the server reads them (src/api/input-guard.ts): an integer written as one (1.5e300 is a double).
      const source = context?.source ?? String(v);
      if (typeof v === 'number' && (!Number.isFinite(v) || (/^-?\d+$/.test(source) && !Number.isSafeInteger(v)))) unheld ??= source;
      return v;
    });
  } catch (e) {
    throw new UsageError(`${flag} is not valid JSON (${jsonSyntaxReason(e, text)}); for example '{"approved": true}' or 'true'`);
  }
  if (unheld !== undefined) {
    throw new UsageError(`${flag} holds the number ${unheld}, which JSON cannot carry exactly (integers within ±${Number.MAX_SAFE_INTEGER}, doubles up to about 1.8e308): the server refuses it; send it as text ("${unheld}")`);
  }
  return value;
}
