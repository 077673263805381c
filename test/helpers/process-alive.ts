import { readFileSync } from 'node:fs';

/** Whether `pid` is a running process; a zombie (exited, not yet reaped by its parent) is not. */
export function processAlive(pid: number): boolean {
  try {
    // Field 3 of /proc/<pid>/stat is the state; the command name before it may hold spaces.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}
