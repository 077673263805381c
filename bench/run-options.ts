// `npm run bench`'s command line, parsed once: a bad option is a usage error (exit 2), not a stack trace.
import { parseArgs } from 'node:util';
import { BATCH_EXECUTIONS, BATCH_TARGET_RATE } from './batch-intake.ts';

// The batch intake run: the target rate for BATCH_SECONDS, then (shorter) rates above it until one
// misses the target, or, when it missed, rates below it until one meets it.
const BATCH_SECONDS = 30;
const BATCH_SEARCH = { up: [400, 500, 600, 800, 1_000], down: [250, 200, 150, 100, 50], seconds: 10 };
/** Rounds of `--only traces` without `--rounds`. */
export const TRACES_DEFAULT_ROUNDS = 3;

const USAGE = `npm run bench [-- OPTIONS]: every figure beside its baseline (docs/benchmarks.md)
  --only PART            one part alone: batch (batch intake), gateway (the gateway's added latency),
                         webhook (webhook acceptance), timers (timers due together), traces (the
                         40-step chain with OpenTelemetry off and on), flow (limits per key against
                         none), servers (1, 2 and 3 svc server processes, each bus), lull (a burst
                         of starts after a lull beside a warm one), hydration (a ~10,000-event
                         execution folded and hydrated)
  --rounds N             rounds of --only traces (default ${TRACES_DEFAULT_ROUNDS}) or servers
  --executions N         executions per round of --only servers
  --batch-seconds N      the batch intake's target run (default ${BATCH_SECONDS})
  --batch-rate R         its arrival rate, batches/s (default ${BATCH_TARGET_RATE})
  --batch-executions N   how many executions its batches go to (default ${BATCH_EXECUTIONS})
  --no-search            skip the search for the highest rate that meets the target
  --help                 this text`;
const PARTS = ['batch', 'gateway', 'webhook', 'timers', 'traces', 'flow', 'servers', 'lull', 'hydration'] as const;
export type BenchPart = (typeof PARTS)[number];
const isPart = (text: string): text is BenchPart => (PARTS as readonly string[]).includes(text);

const OPTIONS = {
  only: { type: 'string' },
  rounds: { type: 'string' },
  executions: { type: 'string' },
  'batch-seconds': { type: 'string' },
  'batch-rate': { type: 'string' },
  'batch-executions': { type: 'string' },
  'no-search': { type: 'boolean' },
  help: { type: 'boolean' },
} as const;

export type BenchOptions = Readonly<{
  only: BenchPart | undefined;
  /** Given only: each part has its own default. */
  rounds: number | undefined;
  executions: number | undefined;
  batchSeconds: number | undefined;
  batchFirst: Readonly<{ rate: number; seconds: number; executions: number }>;
  batchSearch: typeof BATCH_SEARCH | undefined;
}>;

/** A usage error: the message and the usage on stderr, exit 2. */
function usageError(message: string): never {
  process.stderr.write(`bench: ${message}\n${USAGE}\n`);
  process.exit(2);
}

function positive(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0) usageError(`--${name} expects a positive number, got ${text}`);
  return n;
}

const whole = (n: number | undefined) => (n === undefined ? undefined : Math.ceil(n));

/** The options of `argv` (process.argv without node and the script); `--help` prints the usage and exits 0. */
export function benchOptions(argv: string[]): BenchOptions {
  let values: ReturnType<typeof parseArgs<{ args: string[]; options: typeof OPTIONS; strict: true }>>['values'];
  try {
    ({ values } = parseArgs({ args: argv, options: OPTIONS, strict: true }));
  } catch (err) {
    return usageError(err instanceof Error ? err.message : String(err));
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const only = values.only;
  if (only !== undefined && !isPart(only)) usageError(`--only expects ${PARTS.join(', ')}, got ${only}`);
  const batchSeconds = positive('batch-seconds', values['batch-seconds']);
  return Object.freeze({
    only,
    rounds: whole(positive('rounds', values.rounds)),
    executions: whole(positive('executions', values.executions)),
    batchSeconds,
    batchFirst: Object.freeze({
      rate: positive('batch-rate', values['batch-rate']) ?? BATCH_TARGET_RATE,
      seconds: batchSeconds ?? BATCH_SECONDS,
      executions: whole(positive('batch-executions', values['batch-executions'])) ?? BATCH_EXECUTIONS,
    }),
    batchSearch: values['no-search'] ? undefined : BATCH_SEARCH,
  });
}
