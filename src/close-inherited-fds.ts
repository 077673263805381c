import { closeSync, readdirSync, readFileSync } from 'node:fs';
import type { Logger } from './log.ts';

// A descriptor the process's parent left open without close-on-exec (a supervisor's, a shell's
// `exec 40<file`, a socket) stays open in every program it spawns: bwrap passes it on into the
// sandbox, and a shell task could read it (`cat <&40`). Node marks close-on-exec what it opens,
// and at start the inherited fds 0 to 15 and those right after up to the first one not open
// (libuv's uv_disable_stdio_inheritance); one after a gap, it leaves as it came.

// O_CLOEXEC as the kernel's fdinfo shows it (octal flags; it reports the fd's close-on-exec bit
// there). node:fs's constants do not carry it.
const O_CLOEXEC = 0o2000000;
const FLAGS = /^flags:\s*([0-7]+)$/m;

/**
 * Closes every descriptor >= 3 this process holds without close-on-exec (but Node's IPC channel,
 * NODE_CHANNEL_FD), so that no program it spawns gets one; logs their numbers. Call it at the
 * start of a process that runs tasks, before it spawns anything. Does nothing without /proc.
 */
export function closeInheritedFds(log: Logger): number[] {
  let fds: string[];
  try {
    fds = readdirSync('/proc/self/fd');
  } catch {
    return [];
  }
  const keep = new Set([0, 1, 2, Number(process.env.NODE_CHANNEL_FD ?? -1)]);
  const closed: number[] = [];
  for (const fd of fds.map(Number).filter((n) => Number.isInteger(n) && !keep.has(n))) {
    let flags: number;
    try {
      const match = FLAGS.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'));
      if (!match) continue;
      flags = parseInt(match[1], 8);
    } catch {
      continue; // gone meanwhile: the directory readdirSync listed through, say
    }
    if (flags & O_CLOEXEC) continue;
    try {
      closeSync(fd);
      closed.push(fd);
    } catch {
      // Closed meanwhile: nothing to do.
    }
  }
  closed.sort((a, b) => a - b);
  // Numbers only: what a descriptor points at may itself say too much.
  if (closed.length) log.info({ fds: closed }, `closed ${closed.length} inherited file descriptor${closed.length === 1 ? '' : 's'} without close-on-exec`);
  return closed;
}
