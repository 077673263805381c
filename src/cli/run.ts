import { randomUUID } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { ServerError } from '../worker/server-client.ts';
import { formatElapsed, lineView, silentView, terminalView } from './progress-view.ts';
import { resourceTypeOf, RunApi, ServerUnreachableError, UnexpectedAnswerError, type ExecutionStatus } from './run-api.ts';
import { parseRunOptions, type RunOptions } from './run-options.ts';
import { errorMessage, type StepProgress } from './step-progress.ts';
import { watchExecution } from './watch-execution.ts';
import { RUN_SUMMARY, RUN_USAGE } from './run-usage.ts';
import { processEnvironment } from '../secret-environment.ts';
import { isPlainObject } from '../objects.ts';
import { parsePlaybook, type NormalizedPlaybook } from '../dsl/parse-playbook.ts';
import { preparePayload } from './run-workload.ts';
import { describeServerError } from './describe-server-error.ts';
import { refusalProblems, refusalText, registerFile } from './register-file.ts';
import { noAnswerJson, refusalJson, serverErrorExit } from './api-command.ts';
import { writeUsageError } from './usage-error.ts';
import { NotUtf8Error, readTextFile } from './read-text-file.ts';

export { RUN_SUMMARY, RUN_USAGE };



type Out = { write(text: string): unknown };

// A target written as a file (a path from /, ./, ../ or ~, or a YAML name) that is not one: the
// server refuses it as a catalog path (422: not slash-separated names), which is not what the caller meant.
const FILE_LIKE = /^(?:\.{0,2}\/|~)|\.ya?ml$/i;

async function isFile(target: string): Promise<boolean> {
  try {
    return (await stat(target)).isFile();
  } catch {
    return false;
  }
}

/**
 * How long the execution ran, from its start to its end as the server has them (what `svc status`
 * says): the client's own wait saw the end up to a poll late (a second) and counted its
 * registration; that wait only when the answer lacks the times.
 */
function runTimeMs(execution: ExecutionStatus, waitedMs: number): number {
  const ran = Date.parse(execution.finished_at ?? '') - Date.parse(execution.started_at ?? '');
  return Number.isFinite(ran) && ran >= 0 ? ran : waitedMs;
}

function printFinal(out: Out, execution: ExecutionStatus, progress: StepProgress, elapsedMs: number): void {
  const error = execution.error;
  const failedStep = execution.status === 'failed' && isPlainObject(error) && typeof error.step === 'string' ? error.step : undefined;
  const steps = `${progress.finalCounter(failedStep)} steps`;
  out.write(`execution ${execution.execution_id} ${execution.status} after ${formatElapsed(runTimeMs(execution, elapsedMs))} (${steps})\n`);
  if (execution.status === 'completed') {
    out.write(`result:\n${JSON.stringify(execution.result ?? null, null, 2)}\n`);
    return;
  }
  if (error === undefined || error === null) return;
  out.write(`error: ${errorMessage(error)}\n`);
  if (typeof error === 'object') {
    const rest = Object.entries(error).filter(([k]) => k !== 'message');
    if (rest.length) out.write(`${JSON.stringify(Object.fromEntries(rest), null, 2)}\n`);
  }
}

/**
 * The target's file text (null for a catalog path) and its playbook, to type `--set` values: the
 * file's, or with `--set` the catalog's newest version; null when it cannot be read or parsed.
 */
async function targetPlaybook(api: RunApi, options: RunOptions): Promise<{ content: string | null; playbook: NormalizedPlaybook | null }> {
  const content = (await isFile(options.target)) ? await readTextFile(options.target) : null;
  const text = content ?? (options.sets.length > 0 ? await api.catalogContent(options.target) : null);
  const parsed = text === null ? null : parsePlaybook(text);
  return { content, playbook: parsed?.ok ? parsed.playbook : null };
}

/** Registers the file (when the target is one) and returns the catalog path to start; ServerError passes through. */
async function resolvePath(api: RunApi, options: RunOptions, content: string | null, out: Out, err: Out): Promise<{ path: string; fromFile: boolean }> {
  if (content === null) return { path: options.target, fromFile: false };
  // As its document says, as `svc catalog register` sends it: an agent's file sent as a plain
  // playbook would be stored as a new version that runs neither way.
  const reg = await registerFile(api, options.target, content, out, err, options.json, resourceTypeOf(content));
  return { path: reg.path, fromFile: true };
}

/**
 * `svc run`: registers a playbook file (or takes a catalog path), starts it and, with --wait,
 * follows it to the end. Returns the exit code: 0 ok, 1 failed/rejected, 2 usage, 3 unreachable, 130 Ctrl-C.
 */
export async function runCommand(argv: string[]): Promise<number> {
  const out = process.stdout;
  const err = process.stderr;
  const parsed = parseRunOptions(argv, processEnvironment());
  if (!parsed.ok) {
    writeUsageError({ out, err }, 'run', parsed.message, RUN_USAGE.split('\n')[0], argv, parsed.exitCode);
    return parsed.exitCode;
  }
  const options = parsed.options;
  const api = new RunApi(options.serverUrl, options.apiToken);
  const t0 = performance.now();
  let stage: 'register' | 'start' | 'wait' = 'register';
  let fromFile = false;
  try {
    const local = await targetPlaybook(api, options);
    // Checked here as the server will, so a wrong value is refused before anything is sent.
    const prepared = preparePayload(local.playbook, options.payload, options.sets);
    if (!prepared.ok) {
      // Programs read stdout: the refusal as JSON there too, shaped as the server's 422 would be.
      if (options.json) out.write(`${JSON.stringify({ error: 'the workload does not match the playbook inputs', status: 422, stage: 'workload', problems: prepared.problems }, null, 2)}\n`);
      err.write(`svc run: the workload does not match the playbook inputs:${prepared.problems.map((p) => `\n  - ${p.path}: ${p.message}`).join('')}\n`);
      return 2;
    }
    const target = await resolvePath(api, options, local.content, out, err);
    fromFile = target.fromFile;
    stage = 'start';
    // One key for this invocation: the start's retries are the same start.
    const started = await api.start(target.path, prepared.payload, randomUUID(), options.labels, options.priority);
    const id = started.execution_id;
    if (!options.json) {
      // A start that joined an open debounce window made no execution of its own: its payload replaced the window's.
      out.write(started.debounced ? `execution ${id} debounced (${started.path}): joined its open window; it runs with the last start's payload\n` : `execution ${id} started (${started.path})\n`);
    }
    if (!options.wait) {
      if (options.json) out.write(`${JSON.stringify(await api.execution(id), null, 2)}\n`);
      return 0;
    }

    stage = 'wait';
    // --json keeps stdout for the status object; a person at the terminal (`svc run x --wait
    // --json | jq`) still sees the live line, on stderr, and a program reading stderr gets nothing.
    const view = options.json ? (err.isTTY ? terminalView(err) : silentView()) : out.isTTY ? terminalView(out) : lineView(out);
    const stop = new AbortController();
    const onSigint = () => stop.abort();
    process.on('SIGINT', onSigint);
    let outcome;
    try {
      outcome = await watchExecution(api, id, started.path, { view, t0, signal: stop.signal });
    } finally {
      process.off('SIGINT', onSigint);
      view.clear();
    }
    const elapsedMs = performance.now() - t0;
    if (outcome.kind === 'interrupted') {
      const base = api.baseUrl;
      err.write(
        `stopped waiting after ${formatElapsed(elapsedMs)}; execution ${id} was not cancelled and keeps running (${outcome.progress.counter} steps done).\n` +
          // svc sends SVC_API_TOKEN; a bare curl is 401 where the server checks callers.
          `  status:  svc status ${id} --server ${base}   # GET ${base}/api/executions/${id}\n` +
          `  events:  svc logs ${id} --server ${base}\n` +
          `  cancel:  svc cancel ${id} --server ${base}\n`,
      );
      return 130;
    }
    if (options.json) out.write(`${JSON.stringify(outcome.execution, null, 2)}\n`);
    else printFinal(out, outcome.execution, outcome.progress, elapsedMs);
    return outcome.execution.status === 'completed' ? 0 : 1;
  } catch (e) {
    if (e instanceof ServerUnreachableError) {
      if (options.json) out.write(noAnswerJson(e.message));
      err.write(`svc run: ${e.message}\n`);
      return 3;
    }
    if (e instanceof ServerError) {
      // Programs read stdout: the refusal as JSON there too (a refused file's problems at their places).
      if (options.json) out.write(refusalJson(e, { stage, ...(stage === 'register' ? { file: options.target, problems: refusalProblems(e) } : {}) }));
      if (stage === 'register' && e.status === 400) err.write(refusalText('run', options.target, e));
      else if (stage === 'start' && !fromFile && (e.status === 404 || (e.status === 422 && FILE_LIKE.test(options.target)))) err.write(`svc run: '${options.target}' is neither a file nor a playbook in the catalog at ${api.baseUrl}\n`);
      else err.write(`svc run: ${describeServerError(e)}\n`);
      return serverErrorExit(e);
    }
    if (e instanceof UnexpectedAnswerError) {
      if (options.json) out.write(noAnswerJson(e.message));
      err.write(`svc run: ${e.message}\n`);
      return 1;
    }
    // Nothing was sent: the file is refused where it is wrong, as a registration's problems are.
    if (e instanceof NotUtf8Error) {
      if (options.json) out.write(`${JSON.stringify({ error: 'not UTF-8 text', file: e.file, line: e.line, column: e.column }, null, 2)}\n`);
      err.write(`svc run: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
}
