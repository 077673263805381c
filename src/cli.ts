#!/usr/bin/env -S node --max-semi-space-size=32
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from './config.ts';
import { keepCompiledModules } from './compile-cache.ts';
import { keepShortLivedObjectsYoung } from './gc-settings.ts';
import { CLEANUP_SUMMARY, CLEANUP_USAGE } from './cli/cleanup-usage.ts';
import { RUN_SUMMARY, RUN_USAGE } from './cli/run-usage.ts';
import { CATALOG_SUMMARY, CATALOG_USAGE } from './cli/catalog-usage.ts';
import { DOCTOR_SUMMARY, DOCTOR_USAGE } from './doctor/doctor-usage.ts';
import { TOKEN_SUMMARY, TOKEN_USAGE } from './cli/token-usage.ts';
import { EVENTS_SUMMARY, EVENTS_USAGE } from './cli/events-usage.ts';
import { AGENT_SUMMARY, AGENT_USAGE, MCP_SUMMARY, MCP_USAGE } from './cli/agents-usage.ts';
import { GATEWAY_SUMMARY, GATEWAY_USAGE } from './cli/gateway-usage.ts';
import { TRIGGERS_SUMMARY, TRIGGERS_USAGE } from './cli/triggers-usage.ts';
import { LIMITS_SUMMARY, LIMITS_USAGE } from './cli/limits-usage.ts';
import { ARCHIVE_SUMMARY, ARCHIVE_USAGE } from './cli/archive-usage.ts';
import { EXECUTION_COMMANDS, type ExecutionCommandName } from './cli/executions-usage.ts';
import { INSPECT_SUMMARY, INSPECT_USAGE, SIMULATE_SUMMARY, SIMULATE_USAGE } from './cli/simulate-usage.ts';
import { moveSecretsOutOfEnvironment } from './secret-environment.ts';
import { asksForJson, commandErrorJson, isParseArgsError, optionErrorMessage, UsageError, usageSynopsis, writeUsageError } from './cli/usage-error.ts';
import { WORKER_USAGE } from './cli/worker-concurrency.ts';

// Each command imports what it needs when it runs: `svc run` and `svc worker` should not load
// the server, the database driver's pool or the embedded PostgreSQL.

type Command = { summary: string; usage: string; run(argv: string[]): Promise<number> };

// Commands that serve until stopped, and run tasks or hold keys meanwhile.
const LONG_RUNNING = new Set(['start', 'server', 'worker', 'gateway']);

// `svc doctor serve` serves until stopped too, holding SVC_API_TOKEN (an admin's, for repair):
// like the long-running commands it keeps no secret in its environment.
const servesUntilStopped = (argv: readonly string[]): boolean => LONG_RUNNING.has(argv[0] ?? '') || (argv[0] === 'doctor' && argv.slice(1).includes('serve'));

const ENV_NOTE = `Configuration comes from SVC_* environment variables (see README.md).`;

function wantsHelp(argv: string[]): boolean {
  return argv.includes('--help') || argv.includes('-h');
}

/** One of the commands on executions: its help from executions-usage.ts, its code loaded when it runs. */
function executionCommand(name: ExecutionCommandName): Command {
  return { ...EXECUTION_COMMANDS[name], run: async (argv) => (await import('./cli/executions-command.ts')).executionsCommand(name, argv) };
}

const commands: Record<string, Command> = {
  start: {
    summary: 'start the server (embedded PostgreSQL when SVC_DATABASE_URL is unset)',
    usage: 'svc start',
    run: async () => (await import('./cli/serve.ts')).serve(loadConfig(), true),
  },
  server: {
    summary: 'start the API server only (no in-process workers)',
    usage: 'svc server',
    run: async () => (await import('./cli/serve.ts')).serve(loadConfig(), false),
  },
  worker: {
    summary: 'run a worker pool that claims commands from SVC_SERVER_URL (SIGTERM drains)',
    usage: WORKER_USAGE,
    run: async (argv) => (await import('./cli/serve.ts')).workerCommand(argv),
  },
  gateway: {
    summary: GATEWAY_SUMMARY,
    usage: GATEWAY_USAGE,
    run: async (argv) => (await import('./cli/gateway-command.ts')).gatewayCommand(argv),
  },
  migrate: {
    summary: 'apply pending database migrations and exit',
    usage: 'svc migrate [--json]\n\n  --json  print {"applied": [...], "current": "..."} on stdout (for programs), with "ahead": [...] when the database has migrations of a newer version',
    run: async (argv) => {
      const json = parseArgs({ args: argv, options: { json: { type: 'boolean' } }, strict: true, allowPositionals: false }).values.json ?? false;
      const { Db } = await import('./db/db.ts');
      const { aheadNotice, migrate } = await import('./db/migrate.ts');
      const { openDatabase } = await import('./db/open-database.ts');
      const config = loadConfig();
      const { createLogger } = await import('./log.ts');
      const log = createLogger(config.SVC_LOG_LEVEL, process.stderr); // stdout is the answer (--json)
      const database = await openDatabase(config, log);
      const db = new Db(database.url, 2);
      try {
        const result = await migrate(db, undefined, { log });
        // A database a newer version migrated is not "up to date" with this one: say what it has.
        const ahead = aheadNotice(result);
        if (json) process.stdout.write(`${JSON.stringify({ applied: result.applied, current: result.current ?? null, ...(ahead ? { ahead: result.ahead } : {}) })}\n`);
        else if (result.applied.length) process.stdout.write(`applied ${result.applied.join(', ')}\n${ahead ? `${ahead}\n` : ''}`);
        else process.stdout.write(ahead ? `${ahead}\n` : `database is up to date (${result.current ?? 'no migrations'})\n`);
        return 0;
      } finally {
        await db.close();
        await database.embedded?.stop();
      }
    },
  },
  rekey: {
    summary: 're-seal credential and keychain data with the current SVC_ENCRYPTION_KEY (old keys from SVC_ENCRYPTION_KEYS_OLD)',
    usage: 'svc rekey [--batch-size N] [--dry-run] [--json]\n\n  --batch-size N  rows re-sealed per transaction (default 200)\n  --dry-run       count the rows that need re-sealing, change nothing\n  --json          print the tallies as one JSON object on stdout (progress goes to stderr)',
    run: async (argv) => (await import('./rekey.ts')).rekeyCommand(argv),
  },
  token: {
    summary: TOKEN_SUMMARY,
    usage: TOKEN_USAGE,
    run: async (argv) => (await import('./cli/token-command.ts')).tokenCommand(argv),
  },
  run: {
    summary: RUN_SUMMARY,
    usage: RUN_USAGE,
    run: async (argv) => (await import('./cli/run.ts')).runCommand(argv),
  },
  catalog: {
    summary: CATALOG_SUMMARY,
    usage: CATALOG_USAGE,
    run: async (argv) => (await import('./cli/catalog-command.ts')).catalogCommand(argv),
  },
  doctor: {
    summary: DOCTOR_SUMMARY,
    usage: DOCTOR_USAGE,
    run: async (argv) => (await import('./doctor/doctor-command.ts')).doctorCommand(argv),
  },
  triggers: {
    summary: TRIGGERS_SUMMARY,
    usage: TRIGGERS_USAGE,
    run: async (argv) => (await import('./cli/triggers-command.ts')).triggersCommand(argv),
  },
  limits: {
    summary: LIMITS_SUMMARY,
    usage: LIMITS_USAGE,
    run: async (argv) => (await import('./cli/limits-command.ts')).limitsCommand(argv),
  },
  archive: {
    summary: ARCHIVE_SUMMARY,
    usage: ARCHIVE_USAGE,
    run: async (argv) => (await import('./cli/archive-command.ts')).archiveCommand(argv),
  },
  events: {
    summary: EVENTS_SUMMARY,
    usage: EVENTS_USAGE,
    run: async (argv) => (await import('./cli/events-send.ts')).eventsCommand(argv),
  },
  cleanup: {
    summary: CLEANUP_SUMMARY,
    usage: CLEANUP_USAGE,
    run: async (argv) => (await import('./cli/cleanup.ts')).cleanupCommand(argv),
  },
  agent: {
    summary: AGENT_SUMMARY,
    usage: AGENT_USAGE,
    run: async (argv) => (await import('./cli/agent-command.ts')).agentCommand(argv),
  },
  mcp: {
    summary: MCP_SUMMARY,
    usage: MCP_USAGE,
    run: async (argv) => (await import('./cli/mcp-command.ts')).mcpCommand(argv),
  },
  simulate: {
    summary: SIMULATE_SUMMARY,
    usage: SIMULATE_USAGE,
    run: async (argv) => (await import('./cli/simulate.ts')).simulateCommand(argv),
  },
  inspect: {
    summary: INSPECT_SUMMARY,
    usage: INSPECT_USAGE,
    run: async (argv) => (await import('./cli/inspect.ts')).inspectCommand(argv),
  },
  // Daily work on executions (docs/cli.md).
  list: executionCommand('list'),
  status: executionCommand('status'),
  logs: executionCommand('logs'),
  cancel: executionCommand('cancel'),
  pause: executionCommand('pause'),
  resume: executionCommand('resume'),
  retry: executionCommand('retry'),
  signal: executionCommand('signal'),
};

function usage(): string {
  const width = Math.max(...Object.keys(commands).map((c) => c.length));
  const rows = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  return `usage: svc <command> [options]\n\ncommands:\n${rows.join('\n')}\n\n'svc <command> --help' for a command's options. ${ENV_NOTE}\n`;
}

/** Entry point: dispatches to a command and returns its exit code. */
export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  // `svc help run` is `svc run --help`, as git and npm read it: the word after help was ignored.
  if (name === 'help' && rest[0] !== undefined && !rest[0].startsWith('-')) return main([rest[0], '--help', ...rest.slice(1)]);
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage());
    return name ? 0 : 2;
  }
  const command = commands[name];
  if (!command) {
    // A usage error as a command's: given --json, also the JSON a program reads (writeUsageError).
    if (asksForJson(argv)) process.stdout.write(commandErrorJson('', `unknown command '${name}'`));
    process.stderr.write(`svc: unknown command '${name}'\n\n${usage()}`);
    return 2;
  }
  if (wantsHelp(rest)) {
    process.stdout.write(`usage: ${command.usage}\n\n${command.summary}\n${ENV_NOTE}\n`);
    return 0;
  }
  try {
    // Reject unknown flags early rather than silently ignoring a typo.
    if (name === 'start' || name === 'server') parseArgs({ args: rest, options: {}, strict: true, allowPositionals: false });
    return await command.run(rest);
  } catch (err) {
    const message = optionErrorMessage(err, rest);
    if (err instanceof UsageError || isParseArgsError(err)) {
      // A typo is not a failure: 2 and the usage, as every client command answers one.
      const code = err instanceof UsageError ? err.exitCode : 2;
      writeUsageError({ out: process.stdout, err: process.stderr }, name, message, usageSynopsis(command.usage), rest, code);
      return code;
    }
    process.stderr.write(`svc ${name}: ${message}${databaseCause(err)}\n`);
    return err instanceof ConfigError ? 78 : 1;
  }
}

/**
 * What the database said, after `database_unavailable`'s own message: at start that message alone
 * left the operator to guess between a wrong password, a wrong address and a stopped database.
 */
function databaseCause(err: unknown): string {
  const unavailable = err instanceof Error && 'code' in err && err.code === 'database_unavailable';
  return unavailable && err.cause instanceof Error ? ` (${err.cause.message})` : '';
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('/svc')) {
  // First of all: no secret stays in the environment of a process that lives on (it may
  // re-execute this one). A client command that ends in a moment keeps its start fast instead.
  if (servesUntilStopped(process.argv.slice(2)) || process.env.SVC_SECRETS_HANDOFF !== undefined) moveSecretsOutOfEnvironment();
  if (!LONG_RUNNING.has(process.argv[2] ?? '')) stopWhenReaderGoes();
  keepCompiledModules();
  keepShortLivedObjectsYoung();
  main(process.argv.slice(2)).then(exitAfterOutput);
}

/** What a shell reports for a command that SIGPIPE ended (128 + 13), as `yes | head` gives. */
const READER_GONE_EXIT = 141;

/**
 * A client command whose reader went away (`svc logs 7 -f | head -3`: EPIPE on stdout) stops
 * there with 141, quietly: it crashed with an unhandled 'error' event and its stack trace at its
 * next write, and kept following until then.
 */
function stopWhenReaderGoes(): void {
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    process.exit(READER_GONE_EXIT);
  });
}

/**
 * Exits with `code` once stdout and stderr have taken everything written to them: process.exit
 * drops what a pipe has not taken yet, so a reader slower than the command (`svc logs 8 --json |
 * jq`) got its first 64 KiB. A reader that went away (EPIPE, `| head`) ends the wait as well.
 */
function exitAfterOutput(code: number): void {
  let open = 2;
  const done = () => {
    if (--open === 0) process.exit(code);
  };
  for (const stream of [process.stdout, process.stderr]) {
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      done();
    };
    // A write that failed before (EPIPE: the reader went away) fails this one too, and its
    // callback may run before the reader-gone handler: the command must then end as that handler
    // would, not with the code of a command whose output was all read.
    const settle = (err?: Error | null) => {
      if (readerGone(stream, err)) process.exit(READER_GONE_EXIT);
      end();
    };
    stream.once('error', settle);
    stream.write('', settle);
  }
}

/** Whether stdout of a client command failed with EPIPE: this write, or an earlier one that destroyed it. */
function readerGone(stream: NodeJS.WriteStream, err: Error | null | undefined): boolean {
  const isEpipe = (e: Error | null | undefined) => e instanceof Error && 'code' in e && e.code === 'EPIPE';
  return stream === process.stdout && !LONG_RUNNING.has(process.argv[2] ?? '') && (isEpipe(err) || isEpipe(stream.errored));
}
