import * as v from 'valibot';
import { MAX_AGE_SECONDS } from '../config.ts';
import { ServerError } from '../worker/server-client.ts';
import { detect } from './detect.ts';
import { DoctorFailure, DoctorStopped, detailText, type DoctorClient } from './doctor-client.ts';
import { outcome, type Outcome, type ToolName } from './outcome.ts';
import { reachability } from './reachability.ts';
import { repair } from './repair.ts';

// The doctor's three tools, with their arguments: `svc doctor <command>` and `svc doctor serve`
// run these same definitions, so both answer with the same outcome objects.

// Ages as long as the server's own settings take (1,000,000 days; SVC_COMMAND_REAPER_* and the
// like): a longer one reached the detection statements as a number the API refuses (past 2^53:
// the run's 422, not naming the argument) or, past JavaScript's numbers, as null, which matched
// nothing and reported every check ok.
const MAX_AGE_MINUTES = MAX_AGE_SECONDS / 60;

const positive = (what: string, fallback: number, max: number) =>
  v.optional(
    v.pipe(v.number('expects a number'), v.gtValue(0, 'must be > 0'), v.maxValue(max, `must be <= ${max}`), v.description(`${what} (default ${fallback})`)),
    fallback,
  );

/** Arguments of `detect`: the detection thresholds and how long to wait for the results. */
const detectInput = v.strictObject(
  {
  stuck_minutes: positive('minutes a running execution may go without progress', 30, MAX_AGE_MINUTES),
  pending_seconds: positive('seconds a PENDING command may wait unclaimed', 300, MAX_AGE_SECONDS),
  worker_stale_seconds: positive('seconds without a heartbeat after which a worker pool counts as gone', 60, MAX_AGE_SECONDS),
  limit: v.optional(
    v.pipe(v.number('expects a number'), v.integer('must be an integer'), v.minValue(1, 'must be >= 1'), v.maxValue(100, 'must be <= 100'), v.description('ids listed per finding (default 20)')),
    20,
  ),
  timeout_seconds: v.optional(
    v.pipe(v.number('expects a number'), v.gtValue(0, 'must be > 0'), v.maxValue(600, 'must be <= 600'), v.description('how long to wait for the detection playbooks (default 60)')),
    60,
  ),
}, 'unknown argument');
const noInput = v.strictObject({}, 'unknown argument');

type Tool<S extends v.GenericSchema> = {
  description: string;
  input: S;
  run(client: DoctorClient, args: v.InferOutput<S>): Promise<Outcome>;
};
const tool = <S extends v.GenericSchema>(t: Tool<S>) => t;

export const TOOLS = {
  detect: tool({
    description:
      'Runs the read-only detection playbooks on the server: stuck executions, commands held by dead workers, stranded PENDING commands, silent worker pools.',
    input: detectInput,
    run: detect,
  }),
  reachability: tool({
    description: "Checks that the server's API answers, that it reaches its database, and that its command bus listens.",
    input: noInput,
    run: (client) => reachability(client),
  }),
  repair_trigger_reaper: tool({
    description: "Asks the server's command reaper for one sweep now (republishes stranded commands); a server without the endpoint is a no-op.",
    input: noInput,
    run: (client) => repair(client),
  }),
} satisfies Record<ToolName, unknown>;

export type Invocation = { ok: true; outcome: Outcome } | { ok: false; problems: string[] };

/**
 * Validates `args` for the tool and runs it against the client's server. Invalid arguments come
 * back as problems (`field: message`); a tool that cannot run is an outcome of severity `error`.
 */
export async function invokeTool(name: ToolName, args: unknown, client: DoctorClient): Promise<Invocation> {
  return name === 'detect' ? invokeWith(name, TOOLS.detect, args, client) : invokeWith(name, TOOLS[name], args, client);
}

async function invokeWith<S extends v.GenericSchema>(name: ToolName, t: Tool<S>, args: unknown, client: DoctorClient): Promise<Invocation> {
  const parsed = v.safeParse(t.input, args ?? {});
  if (!parsed.success) return { ok: false, problems: parsed.issues.map((i) => `${v.getDotPath(i) ?? 'arguments'}: ${i.message}`) };
  try {
    return { ok: true, outcome: await t.run(client, parsed.output) };
  } catch (err) {
    if (err instanceof DoctorStopped) throw err;
    return { ok: true, outcome: failed(name, err, client.baseUrl) };
  }
}

/** The outcome of a tool that could not run: what failed, and what to try. */
function failed(name: ToolName, err: unknown, server: string): Outcome {
  if (err instanceof DoctorFailure) return outcome(name, 'error', { summary: err.message, next_steps: err.nextSteps, server, failure: err.kind });
  if (err instanceof ServerError) {
    return outcome(name, 'error', {
      summary: `${err.message.split(':')[0]}: the server answered ${err.status} (${detailText(err.detail)})`,
      next_steps: [`svc doctor reachability --server ${server}`, 'the server log says more'],
      server,
      failure: 'server_error',
      http_status: err.status,
    });
  }
  return outcome(name, 'error', { summary: `the doctor failed: ${err instanceof Error ? err.message : String(err)}`, next_steps: [], server, failure: 'internal' });
}
