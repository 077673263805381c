import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pipeline, type Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { ArchivedEvent, ArchivedExecution, EventRange } from '../db/partition.repo.ts';
import { isObject } from '../objects.ts';

// An archived range of the event log as JSON Lines (docs/scaling.md): one file per range,
// `events-<lo>-<hi>.jsonl` under SVC_ARCHIVE_DIR; each line `{"execution": {...}}` (its row, the
// snapshot left out) or `{"event": {...}}` (a row of core.event), executions first, then every
// event in log order. Written to a temporary name, flushed and renamed, the directory flushed too:
// a file that exists is whole, and one the drop went on from stays.

/** The file range `r` is archived to under `dir`. */
export function archiveFileOf(dir: string, r: EventRange): string {
  return join(dir, `events-${String(r.lo).padStart(19, '0')}-${String(r.hi).padStart(19, '0')}.jsonl`);
}

/** What an archive writer is given: the executions, then the events, page by page (an empty page: done). */
export type ArchiveSource = { nextExecutions(): Promise<ArchivedExecution[]>; nextEvents(): Promise<ArchivedEvent[]> };

/** Writes range `r` to its file under `dir` (made if missing); returns the path and how many events. */
export async function writeArchive(dir: string, r: EventRange, source: ArchiveSource): Promise<{ path: string; events: number }> {
  await mkdir(dir, { recursive: true, mode: 0o750 });
  const path = archiveFileOf(dir, r);
  const tmp = `${path}.partial`;
  const file = await open(tmp, 'w', 0o640);
  let events = 0;
  try {
    for (let page = await source.nextExecutions(); page.length; page = await source.nextExecutions()) {
      await file.write(page.map((e) => `${JSON.stringify({ execution: e })}\n`).join(''));
    }
    for (let page = await source.nextEvents(); page.length; page = await source.nextEvents()) {
      events += page.length;
      await file.write(page.map((e) => `${JSON.stringify({ event: e })}\n`).join(''));
    }
    await file.sync();
  } finally {
    await file.close();
  }
  await rename(tmp, path);
  // The rename is the directory's to keep: flushed before the range's rows are deleted, so a
  // power cut after those deletes cannot take the file with it.
  const d = await open(dir, 'r');
  try {
    await d.sync();
  } finally {
    await d.close();
  }
  return { path, events };
}

/** One line of an archive file, read back. */
export type ArchiveLine = { execution: ArchivedExecution } | { event: ArchivedEvent };

/** The first bytes of a gzip stream (RFC 1952). */
const GZIP_MAGIC = [0x1f, 0x8b];

/**
 * The text of the archive file at `path`, decompressed when it is gzip (an operator may compress
 * the archives of old ranges, `gzip events-….jsonl`); `gzip`: whether it was.
 */
async function archiveText(path: string): Promise<{ text: Readable; gzip: boolean }> {
  const file = await open(path, 'r');
  let gzip: boolean;
  try {
    const { bytesRead, buffer } = await file.read(Buffer.alloc(GZIP_MAGIC.length), 0, GZIP_MAGIC.length, 0);
    gzip = bytesRead === GZIP_MAGIC.length && GZIP_MAGIC.every((b, i) => buffer[i] === b);
  } finally {
    await file.close();
  }
  if (!gzip) return { text: createReadStream(path, 'utf8'), gzip };
  const text = createGunzip();
  text.setEncoding('utf8');
  // A read error of the file reaches the reader through the decompressor.
  pipeline(createReadStream(path), text, () => {});
  return { text, gzip };
}

/**
 * Reads an archive file (JSON Lines, or JSON Lines compressed with gzip) line by line; a line that
 * is not one is an error naming its number.
 */
export async function* readArchive(path: string): AsyncGenerator<ArchiveLine> {
  const { text, gzip } = await archiveText(path);
  // Every line written ends with a newline: a last line that is not JSON and has none is a file
  // cut short (a copy that stopped, a full disk), not one written wrong.
  let lastChar = '';
  text.on('data', (chunk: string) => {
    if (chunk.length) lastChar = chunk[chunk.length - 1];
  });
  // JSON.parse's own message names neither the file nor the line.
  const notJson = (line: number) => new Error(`${path}: line ${line} is not JSON (an archive file is JSON Lines)`);
  let unparsed: number | null = null;
  let n = 0;
  try {
    for await (const line of createInterface({ input: text, crlfDelay: Infinity })) {
      if (unparsed !== null) throw notJson(unparsed);
      n++;
      if (!line.trim()) continue;
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        // Said once it is known whether another line follows.
        unparsed = n;
        continue;
      }
      if (isObject(parsed) && isObject(parsed.execution) && typeof parsed.execution.execution_id === 'number') yield { execution: { ...parsed.execution, execution_id: parsed.execution.execution_id } };
      else if (isObject(parsed) && isObject(parsed.event) && typeof parsed.event.execution_id === 'number' && typeof parsed.event.event_id === 'number') {
        yield { event: { ...parsed.event, execution_id: parsed.event.execution_id, event_id: parsed.event.event_id } };
      } else throw new Error(`${path}: line ${n} is not an archived execution or event`);
    }
    if (unparsed !== null) throw lastChar === '\n' ? notJson(unparsed) : new Error(`${path}: the file ends inside line ${unparsed} (it was cut short: every line of an archive ends with a newline)`);
  } catch (e) {
    // zlib's own messages ("unexpected end of file", "incorrect header check") name no file.
    const code = e instanceof Error && 'code' in e ? e.code : undefined;
    if (!gzip || typeof code !== 'string' || !code.startsWith('Z_')) throw e;
    const where = n ? `after line ${n}` : 'before its first line';
    throw new Error(code === 'Z_BUF_ERROR' ? `${path}: the gzip file ends early, ${where} (it was cut short)` : `${path}: not a readable gzip file ${where} (${e instanceof Error ? e.message : String(e)})`);
  }
}

/**
 * The first execution of `source` (the range's executions still in the database, by id, page by
 * page) that the archive file at `path` does not hold as the database has it (same id, start and
 * last event), or null when it holds every one. A file already there is kept instead of written
 * again only when it is this database's archive of the range (a run cut off after writing it):
 * one of another database archiving to the same directory, or one written before a restore
 * brought the range back with more in it, holds other executions, and dropping the range after
 * it would lose them. Both lists are in id order (the file's executions come first, by id), so
 * they are read side by side, a page of the database at a time, whatever the range's size.
 */
export async function archiveMissing(path: string, source: () => Promise<ArchivedExecution[]>): Promise<ArchivedExecution | null> {
  const lines = readArchive(path);
  const next = async (): Promise<ArchivedExecution | undefined> => {
    const n = await lines.next();
    return !n.done && 'execution' in n.value ? n.value.execution : undefined;
  };
  let held = await next();
  try {
    for (let page = await source(); page.length; page = await source()) {
      for (const e of page) {
        while (held && held.execution_id < e.execution_id) held = await next();
        if (!held || held.execution_id !== e.execution_id || held.last_event_id !== e.last_event_id || instant(held.started_at) !== instant(e.started_at)) return e;
      }
    }
    return null;
  } finally {
    await lines.return(undefined);
  }
}

// A start time as read from JSON (to_jsonb's text, with the offset of the session that wrote it): ms since the epoch.
const instant = (v: unknown): number => (typeof v === 'string' ? Date.parse(v) : NaN);

/** The archive files under `dir`, as written or compressed with gzip (`.jsonl.gz`), oldest range first (none when it does not exist). */
export async function archiveFiles(dir: string): Promise<string[]> {
  const names = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    throw err;
  });
  return names.filter((n) => /^events-\d{19}-\d{19}\.jsonl(\.gz)?$/.test(n)).sort().map((n) => join(dir, n));
}
