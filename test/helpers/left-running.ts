import { readdirSync, readFileSync } from 'node:fs';

/**
 * SIGKILLs every `svc` process still running that a test of this run spawned (its environment
 * holds `variable=runId`, see process.ts); returns their pids. A test that failed or timed out
 * may start a server after its file's afterEach stopped the others: nothing else would end it.
 */
export function killLeftRunning(variable: string, runId: string): number[] {
  const mark = `${variable}=${runId}`;
  const killed: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(name)) continue;
    const pid = Number(name);
    try {
      // environ is the process's environment at exec: vitest's own processes got the mark set
      // later or inherit it without running svc, so the command line must name src/cli.ts too.
      if (!readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(mark)) continue;
      if (!readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').some((a) => a.endsWith('src/cli.ts'))) continue;
      process.kill(pid, 'SIGKILL');
      killed.push(pid);
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return killed;
}
