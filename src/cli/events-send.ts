import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import * as v from 'valibot';
import { ConfigError, loadClientConfig } from '../config.ts';
import { ServerClient, ServerError, serverNotUp } from '../worker/server-client.ts';
import { EVENTS_USAGE } from './events-usage.ts';
import { NotUtf8Error, readTextFile } from './read-text-file.ts';
import { CLEAR_LINE, SPINNER, formatElapsed } from './progress-view.ts';
import { networkReason } from './run-api.ts';
import { BATCH_STATES, isTerminalBatchState } from '../../machines/batch-request.machine.ts';
import { ownKeysRecord } from '../own-keys-record.ts';
import { noAnswerJson, refusalJson, serverErrorExit } from './api-command.ts';
import { optionErrorMessage, serverFlagProblem, writeUsageError } from './usage-error.ts';
import { terminalLine } from './text-width.ts';

type Out = { write(text: string): unknown; isTTY?: boolean; columns?: number };

const accepted = v.looseObject({
  request_id: v.string(),
  event_ids: v.array(v.number()),
  queue_depth: v.number(),
  duplicate: v.boolean(),
  idempotency_key: v.string(),
});
const status = v.looseObject({
  request_id: v.string(),
  state: v.picklist(BATCH_STATES),
  error_code: v.nullable(v.string()),
  message: v.nullable(v.string()),
  commands_generated: v.number(),
});
type Status = v.InferOutput<typeof status>;
const problems = v.object({ message: v.optional(v.string()), errors: v.optional(v.array(v.string())) });

/** One request waits at most this long for its answer. */
const REQUEST_TIMEOUT_MS = 30_000;
/** How long the server may stay unreachable while following before giving up (a restart fits in it). */
const UNREACHABLE_GRACE_MS = 30_000;
const RECONNECT_DELAY_MS = 1_000;
const TICK_MS = 100;

type Options = { file: string; key: string | undefined; follow: boolean; json: boolean; serverUrl: string; apiToken: string | undefined };

/** Parses `svc events send` arguments; a usage problem is a message (exit code 2, 78 for a bad SVC_SERVER_URL). */
function parseOptions(argv: string[]): Options | { message: string; code: number } {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: { 'idempotency-key': { type: 'string' }, follow: { type: 'boolean' }, json: { type: 'boolean' }, server: { type: 'string' } },
      strict: true,
      allowPositionals: true,
    });
  } catch (err) {
    return { message: optionErrorMessage(err, argv), code: 2 };
  }
  const [sub, file, ...rest] = parsed.positionals;
  if (sub !== 'send') return { message: sub ? `unknown subcommand '${sub}'; expects send` : 'expects a subcommand: send', code: 2 };
  if (!file || rest.length) return { message: 'expects one batch file: svc events send <FILE.json>', code: 2 };
  const key = parsed.values['idempotency-key'];
  if (key !== undefined && !/^[\x20-\x7e]{1,255}$/.test(key)) return { message: '--idempotency-key expects 1 to 255 printable ASCII characters', code: 2 };
  const server = parsed.values.server;
  const problem = server === undefined ? undefined : serverFlagProblem(server);
  if (problem) return { message: problem, code: 2 };
  let client;
  try {
    // Only the variables the client needs: a bad server-side setting must not stop it.
    client = loadClientConfig(server);
  } catch (err) {
    if (err instanceof ConfigError) return { message: err.message, code: 78 };
    throw err;
  }
  return { file, key, follow: parsed.values.follow ?? false, json: parsed.values.json ?? false, serverUrl: server ?? client.SVC_SERVER_URL, apiToken: client.SVC_API_TOKEN };
}

/** The batch in the file: a JSON object (its fields are the server's to check). */
async function readBatch(file: string): Promise<Record<string, unknown> | string> {
  let text: string;
  try {
    // As UTF-8, strictly: read leniently, a Latin-1 `é` was sent as U+FFFD and stored so.
    text = await readTextFile(file);
  } catch (err) {
    if (err instanceof NotUtf8Error) return err.message;
    return `cannot read ${file}: ${err instanceof Error && 'code' in err ? String(err.code) : String(err)}`;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return `${file} is not JSON: ${err instanceof Error ? err.message : String(err)}`;
  }
  const r = v.safeParse(ownKeysRecord(v.string(), v.unknown()), value);
  if (!r.success || Array.isArray(value)) return `${file} must hold a JSON object {"execution_id": ..., "events": [...]}`;
  return r.output;
}

/**
 * `svc events send`: posts a batch of worker events and, with --follow, reads its status stream to
 * the end with a live status line. Returns the exit code (see EVENTS_USAGE).
 */
export async function eventsCommand(argv: string[]): Promise<number> {
  const out: Out = process.stdout;
  const err = process.stderr;
  const options = parseOptions(argv);
  if ('message' in options) {
    writeUsageError({ out, err }, 'events', options.message, EVENTS_USAGE.split('\n')[0], argv, options.code);
    return options.code;
  }
  const batch = await readBatch(options.file);
  if (typeof batch === 'string') {
    writeUsageError({ out, err }, 'events', batch, EVENTS_USAGE.split('\n')[0], argv);
    return 2;
  }
  const client = new ServerClient(options.serverUrl, { token: options.apiToken });
  const t0 = performance.now();
  try {
    const headers = options.key ? { 'idempotency-key': options.key } : undefined;
    const answer = checked(accepted, await call(client, () => client.request('POST', '/api/events/batch', batch, AbortSignal.timeout(REQUEST_TIMEOUT_MS), { headers })));
    if (!options.json) {
      const ids = answer.event_ids.length ? ` (ids ${answer.event_ids[0]}-${answer.event_ids.at(-1)})` : '';
      const again = answer.duplicate ? `; already accepted under Idempotency-Key ${answer.idempotency_key}, not stored again` : '';
      out.write(`batch ${answer.request_id} accepted: ${answer.event_ids.length} events${ids}, queue depth ${answer.queue_depth}${again}\n`);
    }
    if (!options.follow) {
      if (options.json) out.write(`${JSON.stringify(answer, null, 2)}\n`);
      return 0;
    }
    const stop = new AbortController();
    const onSigint = () => stop.abort();
    process.on('SIGINT', onSigint);
    const view = options.json ? undefined : out.isTTY ? liveLine(out, t0) : changeLines(out, t0);
    let final: Status | undefined;
    try {
      final = await follow(client, answer.request_id, view, stop.signal);
    } finally {
      process.off('SIGINT', onSigint);
      view?.clear();
    }
    if (!final) {
      err.write(`stopped following; batch ${answer.request_id} is processed anyway.\n  status: curl -s ${client.baseUrl}/api/events/batch/${answer.request_id}/status -H @<(printf 'Authorization: Bearer %s\n' "$SVC_API_TOKEN")\n`);
      return 130;
    }
    const elapsed = formatElapsed(performance.now() - t0);
    if (options.json) out.write(`${JSON.stringify(final, null, 2)}\n`);
    else if (final.state === 'completed') out.write(`batch ${final.request_id} completed after ${elapsed}: ${final.message ?? ''}\n`);
    else err.write(`batch ${final.request_id} failed after ${elapsed} (${final.error_code ?? 'unknown'}): ${final.message ?? ''}\n`);
    return final.state === 'completed' ? 0 : 1;
  } catch (e) {
    if (e instanceof Unreachable) {
      if (options.json) out.write(noAnswerJson(e.message));
      err.write(`svc events: ${e.message}\n`);
      return 3;
    }
    if (e instanceof ServerError) {
      if (options.json) out.write(refusalJson(e));
      const d = v.safeParse(problems, e.detail);
      const list = d.success && d.output.errors?.length ? d.output.errors.map((p) => `\n  - ${p}`).join('') : '';
      err.write(`svc events: ${e.message}${list}\n`);
      return serverErrorExit(e);
    }
    if (e instanceof Unexpected) {
      if (options.json) out.write(noAnswerJson(e.message));
      err.write(`svc events: ${e.message}\n`);
      return 1;
    }
    throw e;
  } finally {
    client.close();
  }
}

type View = { show(s: Status): void; clear(): void };

/**
 * Reads the status stream until a terminal state; undefined when `signal` aborted first. A stream
 * cut short (the server restarting) or refused for a moment (502-504) is opened again, within
 * UNREACHABLE_GRACE_MS.
 */
async function follow(client: ServerClient, requestId: string, view: View | undefined, signal: AbortSignal): Promise<Status | undefined> {
  let unreachableSince: number | undefined;
  while (!signal.aborted) {
    try {
      for await (const message of client.events(`/api/events/batch/${encodeURIComponent(requestId)}/stream`, signal)) {
        unreachableSince = undefined;
        if (message.event !== 'status') continue;
        const s = checked(status, parseJson(message.data));
        view?.show(s);
        if (isTerminalBatchState(s.state)) return s;
      }
    } catch (e) {
      if (signal.aborted) return undefined;
      // The server away (restarting), or what stands before it saying so: a gateway's 502 while
      // it restarts, its 503 while its database is away. The batch is processed regardless.
      if (!serverNotUp(e)) throw e;
      unreachableSince ??= performance.now();
      if (performance.now() - unreachableSince > UNREACHABLE_GRACE_MS) throw new Unreachable(`lost the server at ${client.baseUrl}: ${networkReason(e)}`);
    }
    await sleep(RECONNECT_DELAY_MS, undefined, { signal }).catch(() => {});
  }
  return undefined;
}

/** A line per state change, for logs and pipes: `[0.3s] processing: routing its events`. */
function changeLines(out: Out, t0: number): View {
  let last = '';
  return {
    show(s) {
      if (s.state === last) return;
      last = s.state;
      out.write(`[${formatElapsed(performance.now() - t0)}] ${s.state}${s.message ? `: ${s.message}` : ''}\n`);
    },
    clear() {},
  };
}

/** One status line redrawn in place on a terminal, with a spinner while the batch is unfinished. */
function liveLine(out: Out, t0: number): View {
  let current: Status | undefined;
  let frame = 0;
  const draw = () => {
    if (!current) return;
    const text = `${SPINNER[frame++ % SPINNER.length]} batch ${current.request_id.slice(0, 8)} ${current.state}${current.message ? ` · ${current.message}` : ''} · ${formatElapsed(performance.now() - t0)}`;
    out.write(CLEAR_LINE + terminalLine(text, out.columns));
  };
  const timer = setInterval(draw, TICK_MS);
  return {
    show(s) {
      current = s;
      draw();
    },
    clear() {
      clearInterval(timer);
      out.write(CLEAR_LINE);
    },
  };
}

class Unreachable extends Error {}
class Unexpected extends Error {}

/** Runs a request; a request without an answer becomes Unreachable (exit 3). */
async function call<T>(client: ServerClient, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof ServerError) throw e;
    throw new Unreachable(`cannot reach the server at ${client.baseUrl}: ${networkReason(e)}`);
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new Unexpected(`the status stream sent something that is not JSON: ${text.slice(0, 100)}`);
  }
}

function checked<S extends v.GenericSchema>(schema: S, value: unknown): v.InferOutput<S> {
  const r = v.safeParse(schema, value);
  if (!r.success) throw new Unexpected(`unexpected answer from the server: ${v.getDotPath(r.issues[0]) ?? 'body'}: ${r.issues[0].message}`);
  return r.output;
}
