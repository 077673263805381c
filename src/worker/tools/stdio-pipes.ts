import { execFile } from 'node:child_process';
import { closeSync, constants, fchownSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { TASK_PATH } from './shell-argv.ts';

// Why FIFOs: spawn's 'pipe' stdio is a socketpair, and a socket cannot be opened again by path, so
// `echo oops > /dev/stderr` or `tee /dev/stdout` failed ("No such device or address"). A FIFO
// opened at both ends is a pipe(7), which can. Node cannot make one (no mkfifo), so a batch is
// made ahead by one mkfifo run in a directory of the worker's own (mode 0700); each FIFO serves one
// stream of one task and is unlinked as soon as its ends are open: nothing but the two ends reaches
// it after, nothing is left of it after the task. A program's stdin, known whole beforehand, is a
// file there (unlinked once open): a FIFO opened again (`cat /dev/stdin`) once the worker has
// written it all and closed its end would wait for a writer for ever.
const BATCH = 64;
const stock: string[] = [];
let dir: string | undefined;
let made = 0;
let making: Promise<void> | undefined;
const run = promisify(execFile);

function makeFifos(): Promise<void> {
  making ??= (async () => {
    const into = (dir ??= fifoDirectory());
    const paths = Array.from({ length: BATCH }, () => join(into, String(made++)));
    await run('mkfifo', ['-m', '600', '--', ...paths], { env: { PATH: TASK_PATH } });
    stock.push(...paths);
  })().finally(() => (making = undefined));
  return making;
}

function fifoDirectory(): string {
  const created = mkdtempSync(join(tmpdir(), 'svc-pipes-'));
  process.once('exit', () => rmSync(created, { recursive: true, force: true }));
  return created;
}

async function takeFifo(): Promise<string> {
  for (;;) {
    const path = stock.pop();
    if (path !== undefined) {
      // The next batch is made while this one lasts: a task rarely waits for mkfifo.
      if (stock.length < BATCH / 2) makeFifos().catch(() => {});
      return path;
    }
    await makeFifos();
  }
}

// Opens both ends of the FIFO at `path` for a stream the program writes, and unlinks it. The
// worker's end is non-blocking (libuv wants it so) and opened first, so that the program's, which
// is blocking as a program expects its stdout to be, does not wait for a reader.
function outputPipe(path: string, owner: number | undefined): { ours: number; theirs: number } {
  const ours = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const theirs = openSync(path, constants.O_WRONLY);
    // A root worker's task runs as a user of its own, and opens /dev/stdout again as that user.
    if (owner !== undefined) fchownSync(theirs, owner, owner);
    return { ours, theirs };
  } catch (error) {
    closeSync(ours);
    throw error;
  } finally {
    rmSync(path, { force: true });
  }
}

// The program's stdin: a file it can read, not write (mode 0444, the worker's), unlinked once open.
async function inputFile(text: string): Promise<number> {
  const path = join((dir ??= fifoDirectory()), `in-${made++}`);
  try {
    await writeFile(path, text, { mode: 0o444, flag: 'wx' });
    return openSync(path, constants.O_RDONLY);
  } finally {
    rmSync(path, { force: true });
  }
}

export type StdioPipes = {
  /** The program's ends, for spawn's stdio 0 to 2 (stdin 'ignore', /dev/null, when it has none). */
  theirs: ['ignore' | number, number, number];
  stdout: Readable;
  stderr: Readable;
  /** Closes the worker's copies of the program's ends: once the program runs, or could not start. */
  release(): void;
};

/**
 * A program's stdio: stdout and stderr on pipes (pipe(7), which a program can open again as
 * /dev/stdout, /dev/stderr), the worker's ends as streams like spawn's 'pipe'; `stdin` as a file
 * (/dev/stdin opens it again from its start), or /dev/null. The program's ends belong to `owner`
 * when given (a root worker's task user).
 */
export async function stdioPipes(opts: { stdin?: string; owner?: number }): Promise<StdioPipes> {
  const paths = [await takeFifo(), await takeFifo()];
  const opened: number[] = [];
  try {
    const [out, err] = paths.map((path) => {
      const end = outputPipe(path, opts.owner);
      opened.push(end.ours, end.theirs);
      return end;
    });
    const input = opts.stdin === undefined ? undefined : await inputFile(opts.stdin);
    const theirs = [input, out.theirs, err.theirs];
    let released = false;
    return {
      theirs: [input ?? 'ignore', out.theirs, err.theirs],
      stdout: new Socket({ fd: out.ours, readable: true, writable: false }),
      stderr: new Socket({ fd: err.ours, readable: true, writable: false }),
      release() {
        if (released) return;
        released = true;
        for (const fd of theirs) if (fd !== undefined) closeSync(fd);
      },
    };
  } catch (error) {
    for (const path of paths) rmSync(path, { force: true });
    for (const fd of opened) closeSync(fd);
    throw error;
  }
}
