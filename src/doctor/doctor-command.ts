import { resolve as resolvePath } from 'node:path';
import { parseArgs } from 'node:util';
import * as v from 'valibot';
import { ConfigError, isLoopbackHost, loadClientConfig } from '../config.ts';
import { DoctorClient, DoctorStopped } from './doctor-client.ts';
import { DOCTOR_SERVE_DEFAULT_PORT, DOCTOR_USAGE } from './doctor-usage.ts';
import { defaultDoctorTokenFile, removeDoctorToken, writeDoctorToken } from './serve-token.ts';
import { EXIT_COULD_NOT_RUN, exitCodeOf, type ToolName } from './outcome.ts';
import { renderOutcome } from './render-outcome.ts';
import { invokeTool } from './tools.ts';
import { liveLine } from '../cli/live-line.ts';
import { optionErrorMessage, SERVER_FLAG_USERINFO, writeUsageError } from '../cli/usage-error.ts';
import { holdsUserinfo } from '../url-userinfo.ts';

const TOOL_OF = new Map<string, ToolName>([
  ['detect', 'detect'],
  ['reachability', 'reachability'],
  ['repair', 'repair_trigger_reaper'],
]);
// detect's options, as typed on the command line, and the tool arguments they set.
const DETECT_FLAGS = { 'stuck-minutes': 'stuck_minutes', 'pending-seconds': 'pending_seconds', 'worker-stale-seconds': 'worker_stale_seconds', limit: 'limit', 'timeout-seconds': 'timeout_seconds' } as const;

const serverUrl = v.pipe(v.string(), v.trim(), v.url(), v.regex(/^https?:\/\//i));
const port = v.pipe(v.string(), v.regex(/^\d{1,5}$/, 'expects a port number'), v.transform(Number), v.maxValue(65535, 'expects a port number'));
/** Exit codes of a doctor stopped by a signal (128 + its number), as a shell reports them. */
const EXIT_SIGINT = 130;
const EXIT_SIGTERM = 143;
const NUMBER_TEXT = /^[+-]?(\d+\.?\d*|\.\d+)$/;

class UsageError extends Error {}

type Target = { serverUrl: string; apiToken: string | undefined };

/**
 * The server to examine (--server, else SVC_SERVER_URL) and the API token to send (SVC_API_TOKEN);
 * only those variables: a bad server-side setting must not stop the doctor.
 */
function resolveTarget(flag: string | undefined): Target {
  let client;
  try {
    client = loadClientConfig(flag);
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(err.message);
    throw err;
  }
  if (flag === undefined) return { serverUrl: client.SVC_SERVER_URL, apiToken: client.SVC_API_TOKEN };
  const r = v.safeParse(serverUrl, flag);
  if (!r.success) throw new UsageError(`--server expects an http(s) URL, got ${JSON.stringify(flag)}`);
  if (holdsUserinfo(r.output)) throw new UsageError(SERVER_FLAG_USERINFO);
  return { serverUrl: r.output, apiToken: client.SVC_API_TOKEN };
}

function parse(argv: string[], options: Record<string, { type: 'string' | 'boolean' }>) {
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new UsageError(optionErrorMessage(err, argv));
  }
}

async function runTool(name: ToolName, argv: string[]): Promise<number> {
  const flags = name === 'detect' ? Object.fromEntries(Object.keys(DETECT_FLAGS).map((f) => [f, { type: 'string' as const }])) : {};
  const values = parse(argv, { json: { type: 'boolean' }, text: { type: 'boolean' }, server: { type: 'string' }, ...flags });
  if (values.json && values.text) throw new UsageError('--json and --text: give one');
  const args: Record<string, unknown> = {};
  for (const [flag, key] of Object.entries(DETECT_FLAGS)) {
    const text = values[flag];
    // A number when it reads as one; the text otherwise, for the schema to name the option.
    if (typeof text === 'string') args[key] = NUMBER_TEXT.test(text.trim()) ? Number(text) : text;
  }
  const target = resolveTarget(typeof values.server === 'string' ? values.server : undefined);
  const client = new DoctorClient(target.serverUrl, target.apiToken);
  // A person at a terminal sees what a wait waits for (detect: up to --timeout-seconds), on
  // stderr, redrawn in place and gone before the outcome; a program reading stdout sees nothing of it.
  const live = process.stderr.isTTY ? liveLine(process.stderr) : undefined;
  client.progress = live?.say;
  // Ctrl-C or SIGTERM while detect runs: it cancels the executions it started (else they would
  // show up as stuck), and the doctor exits 128 + the signal's number. The other tools start
  // nothing: a signal ends them as it ends any process.
  const stopping = new AbortController();
  let stoppedBy: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stoppedBy) return;
    stoppedBy = signal;
    stopping.abort();
  };
  if (name === 'detect') {
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  }
  client.stopped = stopping.signal;
  try {
    const invocation = await invokeTool(name, args, client).finally(() => live?.clear());
    if (!invocation.ok) {
      // Problems name the argument (`stuck_minutes: …`); the person typed the option.
      const asOption = (problem: string) => {
        const flag = Object.entries(DETECT_FLAGS).find(([, key]) => problem.startsWith(`${key}:`))?.[0];
        return flag ? `--${flag}${problem.slice(problem.indexOf(':'))}` : problem;
      };
      throw new UsageError(invocation.problems.map(asOption).join('; '));
    }
    const o = invocation.outcome;
    // The spec: "the CLI prints the same object". A program reading the output gets it; a
    // person at a terminal gets the summary (--json / --text choose either way).
    const asJson = values.json === true || (values.text !== true && !process.stdout.isTTY);
    process.stdout.write(asJson ? `${JSON.stringify(o, null, 2)}\n` : renderOutcome(o));
    return exitCodeOf(o.severity);
  } catch (err) {
    if (!(err instanceof DoctorStopped)) throw err;
    process.stderr.write(`svc doctor ${name}: ${stoppedBy ?? 'SIGINT'}: ${err.message}\n`);
    return stoppedBy === 'SIGTERM' ? EXIT_SIGTERM : EXIT_SIGINT;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    client.close();
  }
}

async function serve(argv: string[]): Promise<number> {
  const values = parse(argv, { port: { type: 'string' }, host: { type: 'string' }, server: { type: 'string' }, 'token-file': { type: 'string' } });
  let listenPort = DOCTOR_SERVE_DEFAULT_PORT;
  if (typeof values.port === 'string') {
    const r = v.safeParse(port, values.port);
    if (!r.success) throw new UsageError(`--port: ${r.issues[0].message}, got ${JSON.stringify(values.port)}`);
    listenPort = r.output;
  }
  const host = typeof values.host === 'string' ? values.host : '127.0.0.1';
  const target = resolveTarget(typeof values.server === 'string' ? values.server : undefined);
  if (!isLoopbackHost(host)) {
    throw new UsageError(`--host ${host} is not a loopback address: doctor serve listens on loopback only (127.0.0.1, ::1); put an authenticating proxy in front to reach it from elsewhere`);
  }
  const tokenFile = typeof values['token-file'] === 'string' && values['token-file'] !== '' ? resolvePath(values['token-file']) : defaultDoctorTokenFile();
  // Written before listening: a caller that finds the port open finds the token too.
  const token = await writeDoctorToken(tokenFile).catch((err: unknown) => {
    throw new UsageError(`--token-file: could not write ${tokenFile}: ${err instanceof Error ? err.message : String(err)}`);
  });
  const { serveDoctor } = await import('./serve.ts');
  let served: Awaited<ReturnType<typeof serveDoctor>>;
  try {
    served = await serveDoctor({ host, port: listenPort, ...target, token, tokenFile });
  } catch (err) {
    await removeDoctorToken(tokenFile, token);
    throw err;
  }
  process.stdout.write(`svc doctor serving ${served.url} (GET /tools) for the server at ${target.serverUrl}\ncallers send Authorization: Bearer <the token in ${tokenFile}>\nCtrl-C stops it.\n`);
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  process.stderr.write(`${signal}: stopping…\n`);
  await served.close();
  await removeDoctorToken(tokenFile, token);
  return 0;
}

/**
 * `svc doctor <detect|reachability|repair|serve>`: runs one tool and prints its outcome (--json:
 * the object itself). Exit code: 0 ok, 2 anomaly, 3 could not run (a bad option included, so 2
 * always means an anomaly).
 */
export async function doctorCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  try {
    if (sub === 'serve') return await serve(rest);
    const name = sub === undefined ? undefined : TOOL_OF.get(sub);
    if (!name) throw new UsageError(sub === undefined ? 'expects a command: detect, reachability, repair or serve' : `unknown command '${sub}': expects detect, reachability, repair or serve`);
    return await runTool(name, rest);
  } catch (err) {
    // Whatever stopped it (a bad option, a port in use), the doctor did not run: exit 3, never 1.
    if (err instanceof UsageError) writeUsageError({ out: process.stdout, err: process.stderr }, 'doctor', err.message, DOCTOR_USAGE.split('\n').slice(0, 2).join('\n'), argv);
    else process.stderr.write(`svc doctor: ${err instanceof Error ? err.message : String(err)}\n`);
    return EXIT_COULD_NOT_RUN;
  }
}
