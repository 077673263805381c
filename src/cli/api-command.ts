import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import * as v from 'valibot';
import { ConfigError, loadClientConfig } from '../config.ts';
import { ServerClient, ServerError } from '../worker/server-client.ts';
import { optionErrorMessage, serverFlagProblem, UsageError, writeUsageError } from './usage-error.ts';
import { describeServerError } from './describe-server-error.ts';
import { refusalExitCode } from './executions-usage.ts';
import { padColumns, printableText, textWidth } from './text-width.ts';

/** How long one CLI request may wait for its answer. */
export const CLI_REQUEST_TIMEOUT_MS = 30_000;

export type Out = { write(text: string): unknown };

export { UsageError };

/** A command's arguments parsed strictly (positionals allowed); an unknown or malformed option is a UsageError. */
export function parseCliArgs<O extends ParseArgsOptionsConfig>(args: string[], options: O) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: true });
  } catch (e) {
    throw new UsageError(optionErrorMessage(e, args));
  }
}

/**
 * The client of a CLI command that talks to the API: `--server` or SVC_SERVER_URL, and
 * SVC_API_TOKEN as the caller's token. Throws UsageError on a bad address or setting.
 */
export function cliClient(serverFlag: string | undefined): ServerClient {
  let env;
  try {
    env = loadClientConfig(serverFlag);
  } catch (e) {
    if (e instanceof ConfigError) throw new UsageError(e.message, 78);
    throw e;
  }
  let server = env.SVC_SERVER_URL;
  if (serverFlag !== undefined) {
    const problem = serverFlagProblem(serverFlag);
    if (problem) throw new UsageError(problem);
    server = serverFlag.trim();
  }
  return new ServerClient(server, { timeoutMs: CLI_REQUEST_TIMEOUT_MS, token: env.SVC_API_TOKEN });
}

/**
 * The exit code of an answer the server refused or failed, by its status as every client command
 * exits (docs/cli.md): 3 cannot serve now (502-504), 4 not found, 5 conflict, 6 not allowed, else 1.
 */
export function serverErrorExit(e: ServerError): number {
  return refusalExitCode(e.status);
}

/**
 * A refusal as a program reads it on stdout with `--json`: `{error, status, detail}`, `extra`
 * (svc run's `stage`…) before the detail; its text goes to stderr as without `--json`.
 */
export function refusalJson(e: ServerError, extra: Record<string, unknown> = {}): string {
  return `${JSON.stringify({ error: e.message, status: e.status, ...extra, detail: e.detail }, null, 2)}\n`;
}

/**
 * No answer to read, as a program reads it on stdout with `--json`: `{error, status: null,
 * detail: null}` (the server unreachable, or an answer this client does not understand), the
 * shape of a refusal; its text goes to stderr as without `--json`.
 */
export function noAnswerJson(error: string): string {
  return `${JSON.stringify({ error, status: null, detail: null }, null, 2)}\n`;
}

/**
 * Where runCli also puts a refusal (refusalJson) when the command was given `--json`: `json()`
 * says so once its options are parsed; a usage error reads `argv` (they may not have parsed).
 */
export type JsonRefusal = { out: Out; argv: readonly string[]; json(): boolean };

/**
 * Runs a CLI command body, turning its errors into messages and exit codes (a refusal by its
 * status: serverErrorExit; 1 an answer it does not understand, 2 usage, 3 unreachable); a refusal, or no
 * answer, also on `refusal.out` as JSON when `refusal.json()`.
 */
export async function runCli(name: string, usageLine: string, err: Out, body: () => Promise<number>, refusal: JsonRefusal): Promise<number> {
  try {
    return await body();
  } catch (e) {
    if (e instanceof UsageError) {
      writeUsageError({ out: refusal.out, err }, name, e.message, usageLine, refusal.argv, e.exitCode);
      return e.exitCode;
    }
    if (e instanceof ServerError) {
      if (refusal.json()) refusal.out.write(refusalJson(e));
      // With the fields the server names (detail.errors), as svc run prints a refusal.
      err.write(`svc ${name}: ${describeServerError(e)}\n`);
      return serverErrorExit(e);
    }
    // A body's v.parse of an answer: the server answered, with something this client cannot read
    // (not an svc server, or another version), which is no reason to look for it elsewhere.
    if (e instanceof v.ValiError) {
      const issue = e.issues[0];
      const message = `unexpected answer from the server: ${v.getDotPath(issue) ?? 'body'}: ${issue.message}`;
      if (refusal.json()) refusal.out.write(noAnswerJson(message));
      err.write(`svc ${name}: ${message}\n`);
      return 1;
    }
    const message = `server unreachable: ${e instanceof Error ? e.message : String(e)}`;
    if (refusal.json()) refusal.out.write(noAnswerJson(message));
    err.write(`svc ${name}: ${message}\n`);
    return 3;
  }
}

/**
 * A plain text table: a header row and rows, columns padded to their widest cell (in terminal
 * columns: 東京 takes 4); a cell's control characters escaped (a key rendered from a workload).
 */
export function table(cells: string[][]): string {
  if (cells.length === 0) return '';
  const rows = cells.map((row) => row.map(printableText));
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => textWidth(row[i] ?? ''))));
  return rows.map((row) => row.map((cell, i) => padColumns(cell ?? '', widths[i])).join('  ').trimEnd()).join('\n') + '\n';
}
