import { parseArgs } from 'node:util';
import { loadClientConfig, ConfigError } from '../config.ts';
import { ServerError } from '../worker/server-client.ts';
import { CATALOG_USAGE } from './catalog-usage.ts';
import { describeServerError } from './describe-server-error.ts';
import { refusalProblems, refusalText, registerFile } from './register-file.ts';
import { EXIT, notServingNow, refusalExitCode } from './executions-usage.ts';
import { optionErrorMessage, serverFlagProblem, usageSynopsis, writeUsageError } from './usage-error.ts';
import { resourceTypeOf, RunApi, ServerUnreachableError, UnexpectedAnswerError } from './run-api.ts';
import { NotUtf8Error, readTextFile } from './read-text-file.ts';

/**
 * `svc catalog register FILE...`: registers each file as its document says (a playbook, an agent,
 * an MCP server), without starting it.
 * Returns the exit code: 0 all registered, 1 one refused or unreadable, 2 usage, 3 unreachable or not
 * serving now (502-504), 6 the caller not allowed (401/403: it stops at that file).
 */
export async function catalogCommand(argv: string[]): Promise<number> {
  const out = process.stdout;
  const err = process.stderr;
  // What is wrong first, then the usage: a bare usage leaves a person to guess.
  const usage = (problem: string) => {
    writeUsageError({ out, err }, 'catalog', problem, usageSynopsis(CATALOG_USAGE), argv);
    return 2;
  };
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { json: { type: 'boolean' }, server: { type: 'string' } }, strict: true, allowPositionals: true });
  } catch (e) {
    return usage(optionErrorMessage(e, argv));
  }
  const [sub, ...files] = parsed.positionals;
  if (sub === undefined) return usage('a subcommand is required (register)');
  if (sub !== 'register') return usage(`unknown subcommand '${sub}' (register)`);
  if (files.length === 0) return usage('register needs at least one FILE');
  const problem = parsed.values.server === undefined ? undefined : serverFlagProblem(parsed.values.server);
  if (problem) return usage(problem);
  let config;
  try {
    config = loadClientConfig(parsed.values.server);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    err.write(`svc catalog: ${e.message}\n`);
    return 78;
  }
  const api = new RunApi(parsed.values.server?.trim() ?? config.SVC_SERVER_URL, config.SVC_API_TOKEN);
  const json = parsed.values.json ?? false;
  let code = 0;
  for (const file of files) {
    let content: string;
    try {
      content = await readTextFile(file);
    } catch (e) {
      const reason = e instanceof NotUtf8Error ? 'not UTF-8 text' : e instanceof Error && 'code' in e ? String(e.code) : 'unreadable';
      err.write(e instanceof NotUtf8Error ? `svc catalog: ${e.message}\n` : `svc catalog: cannot read ${file} (${reason})\n`);
      if (json) out.write(`${JSON.stringify({ file, error: `cannot read (${reason})`, ...(e instanceof NotUtf8Error ? { line: e.line, column: e.column } : {}) })}\n`);
      code = 1;
      continue;
    }
    try {
      // As its document says: an MCP server document or an agent through POST /api/catalog/register.
      const reg = await registerFile(api, file, content, out, err, json, resourceTypeOf(content));
      if (json) out.write(`${JSON.stringify({ file, ...reg })}\n`);
    } catch (e) {
      if (e instanceof ServerUnreachableError) {
        if (json) out.write(`${JSON.stringify({ file, error: e.message, status: null })}\n`);
        err.write(`svc catalog: ${e.message}\n`);
        return 3;
      }
      // Not this file's fault (its database away, say): the rest would meet the same; try later.
      if (e instanceof ServerError && notServingNow(e.status)) {
        if (json) out.write(`${JSON.stringify({ file, error: e.message, status: e.status, detail: e.detail })}\n`);
        err.write(`svc catalog: ${file}: ${describeServerError(e)}\n`);
        return 3;
      }
      if (!(e instanceof ServerError) && !(e instanceof UnexpectedAnswerError)) throw e;
      err.write(e instanceof ServerError ? refusalText('catalog', file, e) : `svc catalog: ${e.message}\n`);
      // As the usage says: {file, error, status, problems} (each with line and column), the server's detail beside.
      if (json) out.write(`${JSON.stringify({ file, error: e.message, ...(e instanceof ServerError ? { status: e.status, problems: refusalProblems(e), detail: e.detail } : {}) })}\n`);
      // The caller, not the file (a token unknown, revoked or of a role too low): every other file
      // would meet the same, so it stops here with the code every client command gives it.
      if (e instanceof ServerError && refusalExitCode(e.status) === EXIT.notAllowed) return EXIT.notAllowed;
      code = 1;
    }
  }
  return code;
}
