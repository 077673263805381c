import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { ConfigError, loadClientConfig } from '../config.ts';
import { asObject } from '../objects.ts';
import { EVENT } from '../../machines/event-types.ts';
import { problemDetail, ServerError } from '../worker/server-client.ts';
import { noAnswerJson, refusalJson } from './api-command.ts';
import { INSPECT_USAGE } from './simulate-usage.ts';
import { EXIT, refusalExitCode } from './executions-usage.ts';
import { optionErrorMessage, serverFlagProblem, usageSynopsis, writeUsageError } from './usage-error.ts';
import { endCut, padColumns, printableText, textWidth } from './text-width.ts';
import { EXECUTION_STATUSES } from '../../machines/statuses.ts';

type Out = { write(text: string): unknown };
type StepLine = { status?: unknown; loop?: { length?: unknown; done?: unknown; in_flight?: unknown } };

/** One terminal line for an inspection event (null for the ones it does not show). */
export function inspectLine(raw: unknown): string | null {
  const e = asObject(raw);
  // The actor's snapshot is the state the start left (a first step already waiting, a retry's
  // replayed steps): shown as the first move, since nothing else may come for a long while.
  if (e.type === '@xstate.actor') {
    const header = printableText(`execution ${String(e.sessionId).replace('execution-', '')} (${String(e.name)})`);
    return e.snapshot === undefined ? header : `${header}\n${stateLine({ type: EVENT.executionStarted }, asObject(e.snapshot))}`;
  }
  if (e.type !== '@xstate.snapshot') return null;
  return stateLine(asObject(e.event), asObject(e.snapshot));
}

/** A move's line: the event, the execution's top state, its active steps and those it finished. */
function stateLine(event: Record<string, unknown>, snapshot: Record<string, unknown>): string {
  const steps = asObject(snapshot.context);
  const active: string[] = [];
  const done: string[] = [];
  for (const [rawName, rawStep] of Object.entries(steps)) {
    // A step's name is the playbook's data: its control characters (ESC, CR) escaped, as every
    // table svc prints writes them (docs/cli.md), never acted on by the terminal.
    const name = printableText(rawName);
    const s = asObject(rawStep) as StepLine;
    // The view's `waiting` (for a time or a signal) is active, not finished: listed with the
    // active steps and named so, as `svc status` shows it.
    if (s.status === 'active' || s.status === 'waiting') {
      const l = asObject(s.loop);
      const shown = typeof l.length === 'number' ? `${name} [${String(l.done)}/${l.length}, ${String(l.in_flight)} in flight]` : name;
      active.push(s.status === 'waiting' ? `${shown} (waiting)` : shown);
    } else if (s.status !== 'pending') done.push(`${name} ${String(s.status)}`);
  }
  // The execution's status (paused, queued: flags the machine's top state does not show), else its top state.
  const top = typeof snapshot.execution_status === 'string' ? snapshot.execution_status : typeof snapshot.value === 'string' ? snapshot.value : 'running';
  const what = endCut(printableText(eventCell(event)), EVENT_COLUMN);
  return `${padColumns(what, EVENT_COLUMN)} ${padColumns(printableText(top), STATE_COLUMN)} active: ${active.join(', ') || '-'}${done.length ? ` | ${done.join(', ')}` : ''}`;
}

/** An event as its line's first column names it: its type, its command's seq and a child's end (`child.finished seq 3 completed`). */
function eventCell(event: Record<string, unknown>): string {
  return [event.type, event.seq !== undefined ? `seq ${String(event.seq)}` : '', typeof event.status === 'string' ? event.status : ''].filter(Boolean).join(' ');
}

// Lines are printed as events come, so the columns are as wide as what they can hold, not as
// what came: the widest event (a child's end, of a playbook under 10,000 commands) and status.
// A wider one (a type unknown here, a seq past 9999) is cut with an ellipsis, the columns kept.
const EVENT_COLUMN = textWidth(eventCell({ type: EVENT.childFinished, seq: 9999, status: 'completed' }));
const STATE_COLUMN = Math.max(...EXECUTION_STATUSES.map((s) => s.length));

// The HTTP status a close code of the inspection stream stands for (src/api/execution-state.ts).
const CLOSE_STATUS = new Map([
  [4404, 404],
  [1008, 401],
]);

/** `svc inspect`: follows an execution's inspection stream until it ends; returns the exit code. */
export async function inspectCommand(argv: string[], out: Out = process.stdout, errOut: Out = process.stderr): Promise<number> {
  // A command line `svc inspect` cannot take: exit 2, written as every command writes a usage error.
  const usageFailed = (message: string): number => {
    writeUsageError({ out, err: errOut }, 'inspect', message, usageSynopsis(INSPECT_USAGE), argv);
    return 2;
  };
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { json: { type: 'boolean' }, server: { type: 'string' } }, strict: true, allowPositionals: true });
  } catch (err) {
    return usageFailed(optionErrorMessage(err, argv));
  }
  const [id, ...rest] = parsed.positionals;
  // As svc status and logs say it: what is wrong, and the ID as given (one past 2^53 included).
  if (!id) return usageFailed('inspect needs an execution ID');
  if (rest.length) return usageFailed(`unexpected arguments: ${rest.join(' ')}`);
  if (!/^[1-9]\d*$/.test(id) || !Number.isSafeInteger(Number(id))) return usageFailed(`the execution ID must be a positive integer, got ${JSON.stringify(id)}`);
  const server = parsed.values.server;
  const problem = server === undefined ? undefined : serverFlagProblem(server);
  if (problem) return usageFailed(problem);
  let client;
  try {
    client = loadClientConfig(server);
  } catch (err) {
    if (err instanceof ConfigError) {
      errOut.write(`svc inspect: ${err.message}\n`);
      return 78;
    }
    throw err;
  }
  const base = (server ?? client.SVC_SERVER_URL).replace(/\/+$/, '').replace(/^http/i, 'ws');
  const headers: Record<string, string> = client.SVC_API_TOKEN ? { authorization: `Bearer ${client.SVC_API_TOKEN}` } : {};
  const json = parsed.values.json ?? false;
  return new Promise<number>((resolve) => {
    const ws = new WebSocket(`${base}/api/executions/${id}/inspect`, { headers });
    // The server's refusal, or why it could not be reached (the refusal wins when both come).
    let refusal: ServerError | undefined;
    let unreachable: string | undefined;
    // A refusal is told as every client command tells one: the request, the status, the server's
    // detail (a wrong token, a role too low), read from the answer's body before the socket goes.
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        refusal = new ServerError(res.statusCode ?? 0, problemDetail(body), `GET /api/executions/${id}/inspect`);
        ws.terminate();
      });
    });
    ws.on('message', (data) => {
      let event: unknown;
      try {
        event = JSON.parse(String(data));
      } catch {
        return;
      }
      if (json) out.write(`${JSON.stringify(event)}\n`);
      else {
        const line = inspectLine(event);
        if (line) out.write(`${line}\n`);
      }
    });
    ws.on('error', (err) => {
      unreachable ??= err.message;
    });
    ws.on('close', (code, reason) => {
      if (refusal) {
        if (json) out.write(refusalJson(refusal));
        errOut.write(`svc inspect: ${refusal.message}\n`);
        resolve(refusalExitCode(refusal.status));
        return;
      }
      if (unreachable !== undefined) {
        if (json) out.write(noAnswerJson(`server unreachable: ${unreachable}`));
        errOut.write(`svc inspect: server unreachable: ${unreachable}\n`);
        resolve(3);
        return;
      }
      if (code === 1000) {
        if (!json) out.write(`${String(reason)}\n`);
        resolve(0);
        return;
      }
      // 1006: the connection dropped without a close (the server stopped or the network went): unreachable, as at the start.
      if (code === 1006) {
        const message = 'server unreachable: the stream closed without an end (1006)';
        if (json) out.write(noAnswerJson(message));
        errOut.write(`svc inspect: ${message}\n`);
        resolve(3);
        return;
      }
      // The server's end of a stream it will not serve: the execution gone (4404) or the caller's
      // token (1008); exit codes and --json as every execution command says a 404 or a 401.
      const said = printableText(String(reason)) || `stream closed (${code})`;
      const status = CLOSE_STATUS.get(code) ?? null;
      if (json) out.write(`${JSON.stringify({ error: said, status, detail: String(reason) || null }, null, 2)}\n`);
      errOut.write(`svc inspect: ${said}\n`);
      resolve(status === null ? EXIT.failed : refusalExitCode(status));
    });
  });
}
