import { parseArgs } from 'node:util';
import * as v from 'valibot';
import { ConfigError, loadClientConfig } from '../config.ts';
import { ServerClient, ServerError } from '../worker/server-client.ts';
import { CLEANUP_USAGE } from './cleanup-usage.ts';
import { describeServerError } from './describe-server-error.ts';
import { noAnswerJson, refusalJson, serverErrorExit } from './api-command.ts';
import { optionErrorMessage, serverFlagProblem, writeUsageError } from './usage-error.ts';

const DEFAULT_AGE_MINUTES = 5;
const REQUEST_TIMEOUT_MS = 120_000;

const answer = v.looseObject({
  cancelled_count: v.number(),
  execution_ids: v.array(v.number()),
  message: v.string(),
  executions: v.optional(v.array(v.looseObject({ execution_id: v.number(), path: v.string(), parent_execution_id: v.nullable(v.number()), started_at: v.string() }))),
});
type Answer = v.InferOutput<typeof answer>;

type Out = { write(text: string): unknown };

/** The readable form: the message, then one row per execution. */
export function cleanupTable(a: Answer): string {
  const lines = [a.message];
  const rows = a.executions ?? a.execution_ids.map((id) => ({ execution_id: id, path: '', parent_execution_id: null, started_at: '' }));
  if (rows.length) {
    const table = [['EXECUTION', 'PATH', 'STARTED', 'PARENT'], ...rows.map((r) => [String(r.execution_id), r.path, r.started_at, r.parent_execution_id === null ? '-' : String(r.parent_execution_id)])];
    const widths = table[0].map((_, i) => Math.max(...table.map((row) => row[i].length)));
    for (const row of table) lines.push(row.map((cell, i) => (i === 0 ? cell.padStart(widths[i]) : cell.padEnd(widths[i]))).join('  ').trimEnd());
  }
  return `${lines.join('\n')}\n`;
}

/** `svc cleanup`: asks the server to cancel (or, dry, list) stuck executions; returns the exit code. */
export async function cleanupCommand(argv: string[], out: Out = process.stdout, err: Out = process.stderr): Promise<number> {
  const usage = (message: string, code = 2) => {
    writeUsageError({ out, err }, 'cleanup', message, CLEANUP_USAGE.split('\n')[0], argv, code);
    return code;
  };
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { 'older-than-minutes': { type: 'string' }, 'dry-run': { type: 'boolean' }, json: { type: 'boolean' }, server: { type: 'string' } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (e) {
    return usage(optionErrorMessage(e, argv));
  }
  const rawAge = values['older-than-minutes'];
  const age = rawAge === undefined ? DEFAULT_AGE_MINUTES : /^\d+$/.test(rawAge.trim()) ? Number(rawAge) : NaN;
  if (!Number.isSafeInteger(age) || age < 1) return usage(`--older-than-minutes expects an integer >= 1, got ${JSON.stringify(rawAge)}`);
  let env;
  try {
    // Only the variables the client needs (a bad server-side setting must not stop the command);
    // SVC_SERVER_URL only when --server does not replace it.
    env = loadClientConfig(values.server);
  } catch (e) {
    if (e instanceof ConfigError) return usage(e.message, 78);
    throw e;
  }
  let server = env.SVC_SERVER_URL;
  if (values.server !== undefined) {
    const problem = serverFlagProblem(values.server);
    if (problem) return usage(problem);
    server = values.server.trim();
  }
  // An operator's API token (SVC_API_TOKEN) when the server checks callers.
  const client = new ServerClient(server, { timeoutMs: REQUEST_TIMEOUT_MS, token: env.SVC_API_TOKEN });
  try {
    const raw = await client.request<unknown>('POST', '/api/executions/cleanup', { older_than_minutes: age, dry_run: values['dry-run'] ?? false });
    const parsed = v.safeParse(answer, raw);
    if (!parsed.success) {
      const message = `unexpected answer from ${client.baseUrl}: ${v.getDotPath(parsed.issues[0]) ?? 'body'}: ${parsed.issues[0].message}`;
      if (values.json) out.write(noAnswerJson(message));
      err.write(`svc cleanup: ${message}\n`);
      return 1;
    }
    out.write(values.json ? `${JSON.stringify(parsed.output, null, 2)}\n` : cleanupTable(parsed.output));
    return 0;
  } catch (e) {
    if (e instanceof ServerError) {
      // Programs read stdout: the refusal as JSON there too, as svc run --json gives it.
      if (values.json) out.write(refusalJson(e));
      err.write(`svc cleanup: ${describeServerError(e)}\n`);
      return serverErrorExit(e);
    }
    const message = `server ${client.baseUrl} unreachable: ${e instanceof Error ? e.message : String(e)}`;
    if (values.json) out.write(noAnswerJson(message));
    err.write(`svc cleanup: ${message}\n`);
    return 3;
  } finally {
    client.close();
  }
}
