import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { ConfigError, loadConfig } from '../config.ts';
import { archiveFiles, readArchive } from '../partitions/archive-file.ts';
import type { ArchivedEvent, ArchivedExecution } from '../db/partition.repo.ts';
import { parseCliArgs, runCli, table, UsageError, type Out } from './api-command.ts';
import { ARCHIVE_USAGE } from './archive-usage.ts';
import { commandErrorJson, usageSynopsis } from './usage-error.ts';
import { EXIT } from './executions-usage.ts';

const OPTIONS = { dir: { type: 'string' }, execution: { type: 'string' }, json: { type: 'boolean' } } as const;

/**
 * SVC_ARCHIVE_DIR as the server reads it (src/config.ts: trimmed, absolute), so that the command
 * lists where the server archives; a bad one is refused as the server refuses it (exit 78).
 */
function archiveDirSetting(env: Readonly<Record<string, string | undefined>>): string | undefined {
  try {
    return loadConfig({ SVC_ARCHIVE_DIR: env.SVC_ARCHIVE_DIR }).SVC_ARCHIVE_DIR;
  } catch (e) {
    if (e instanceof ConfigError) throw new UsageError(e.message, 78);
    throw e;
  }
}

/**
 * What went wrong reading `path`, said of the file (this command asks no server, so runCli's
 * "server unreachable", exit 3, would mislead), with its exit code; undefined: not a file error.
 */
function fileProblem(e: unknown, path: string): { message: string; code: number } | undefined {
  const code = e instanceof Error && 'code' in e ? e.code : undefined;
  if (code === 'ENOENT') return { message: `${path}: no such file`, code: EXIT.notFound };
  if (code === 'EISDIR') return { message: `${path}: is a directory, not an archive file`, code: EXIT.failed };
  if (code === 'ENOTDIR') return { message: `${path}: not a directory`, code: EXIT.failed };
  if (code === 'EACCES' || code === 'EPERM') return { message: `${path}: permission denied`, code: EXIT.failed };
  return undefined;
}

const text = (v: unknown): string => (v === null || v === undefined ? '-' : typeof v === 'string' ? v : JSON.stringify(v));

/** `svc archive [list]|show`: reads the JSON Lines files of ranges retention dropped; returns the exit code. */
export async function archiveCommand(argv: string[], out: Out = process.stdout, err: Out = process.stderr, env: Readonly<Record<string, string | undefined>> = process.env): Promise<number> {
  return runCli('archive', usageSynopsis(ARCHIVE_USAGE), err, async () => {
    const { values, positionals } = parseCliArgs(argv, OPTIONS);
    // A file or directory it cannot read: on stderr, and with --json on stdout too (a program reads why there).
    const failed = (message: string, code: number): number => {
      if (values.json) out.write(commandErrorJson('archive', message));
      err.write(`svc archive: ${message}\n`);
      return code;
    };
    const [sub = 'list', ...args] = positionals;
    if (sub === 'list') {
      if (args.length || values.execution !== undefined) throw new UsageError('list takes --dir DIR and --json only');
      const dir = values.dir ?? archiveDirSetting(env);
      if (!dir) throw new UsageError('no archive directory: give --dir DIR or set SVC_ARCHIVE_DIR');
      // A directory named on the command line that is not there is a typo, not an empty archive
      // (SVC_ARCHIVE_DIR's is made by the first archiving: until then there is nothing to list).
      if (values.dir !== undefined && !existsSync(values.dir)) {
        return failed(`${values.dir}: no such directory`, EXIT.notFound);
      }
      let files: string[];
      try {
        files = await archiveFiles(dir);
      } catch (e) {
        const problem = fileProblem(e, dir);
        if (!problem) throw e;
        return failed(problem.message, problem.code);
      }
      out.write(values.json ? `${JSON.stringify({ files, count: files.length })}\n` : files.length ? table([['file'], ...files.map((f) => [basename(f)])]) : `no archive files under ${dir}\n`);
      return EXIT.ok;
    }
    if (sub !== 'show') throw new UsageError(`unknown subcommand '${sub}' (list or show)`);
    const [named, ...extra] = args;
    if (!named || extra.length) throw new UsageError('show needs one FILE');
    // `list` prints names: a bare name not in the working directory is one of DIR's.
    const dir = values.dir ?? archiveDirSetting(env);
    const file = dir && !named.includes('/') && !existsSync(named) ? join(dir, named) : named;
    const wanted = values.execution === undefined ? null : Number(values.execution);
    if (wanted !== null && !(Number.isSafeInteger(wanted) && wanted > 0)) throw new UsageError(`--execution expects an execution id, got ${JSON.stringify(values.execution)}`);
    const executions: ArchivedExecution[] = [];
    const events: ArchivedEvent[] = [];
    const counts = new Map<number, number>();
    try {
      for await (const line of readArchive(file)) {
        if ('execution' in line) {
          if (wanted === null || line.execution.execution_id === wanted) executions.push(line.execution);
        } else {
          counts.set(line.event.execution_id, (counts.get(line.event.execution_id) ?? 0) + 1);
          if (line.event.execution_id === wanted) events.push(line.event);
        }
      }
    } catch (e) {
      const problem = fileProblem(e, file);
      return failed(problem ? problem.message : e instanceof Error ? e.message : String(e), problem ? problem.code : EXIT.failed);
    }
    if (wanted !== null) {
      if (!executions.length) {
        return failed(`execution ${wanted} is not in ${basename(file)}`, EXIT.notFound);
      }
      out.write(values.json ? `${JSON.stringify({ execution: executions[0], events })}\n` : table([['event_id', 'type', 'step', 'status', 'at'], ...events.map((e) => [String(e.event_id), text(e.event_type), text(e.step), text(e.status), text(e.created_at)])]));
      return EXIT.ok;
    }
    const n = (e: ArchivedExecution) => counts.get(e.execution_id) ?? 0;
    if (values.json) out.write(`${JSON.stringify({ executions: executions.map((e) => ({ ...e, events: n(e) })), count: executions.length })}\n`);
    else out.write(table([['execution', 'path', 'status', 'started', 'finished', 'events'], ...executions.map((e) => [String(e.execution_id), text(e.path), text(e.status), text(e.started_at), text(e.finished_at), String(n(e))])]));
    return EXIT.ok;
  }, { out, argv, json: () => false });
}
