// What the shell sandbox costs a task: spawn to exit of `true` through the shell tool, with the
// sandbox (prlimit + bwrap + env + sh) and without it (prlimit + sh), RUNS each, interleaved.
// `npm run bench:sandbox`; figures in docs/benchmarks.md ("The shell sandbox").
import { ensurePackage } from '../scripts/ensure-package.ts';
import { probeShellSandbox } from '../src/worker/tools/probe-shell-sandbox.ts';
import { shell } from '../src/worker/tools/shell.ts';
import { DEFAULT_SHELL_SETTINGS } from '../src/worker/tools/shell-settings.ts';
import type { ShellHost } from '../src/worker/tools/shell-argv.ts';
import { mean, quantile, round } from './stats.ts';

const RUNS = Number(process.argv[2] ?? 200);
const WARMUP_RUNS = 10;

ensurePackage('bubblewrap', 'bwrap', 'the shell sandbox bench');
const sandboxed = await probeShellSandbox(DEFAULT_SHELL_SETTINGS);
const unsandboxed = await probeShellSandbox({ ...DEFAULT_SHELL_SETTINGS, sandbox: false });
if (sandboxed.unavailable) throw new Error(sandboxed.unavailable);

async function once(host: ShellHost): Promise<number> {
  const t0 = performance.now();
  const outcome = await shell({ name: 'bench', kind: 'shell', command: 'true' }, { signal: new AbortController().signal, env: {}, shell: host });
  if (outcome.status !== 'ok') throw new Error(`true failed: ${JSON.stringify(outcome)}`);
  return performance.now() - t0;
}

const times = { sandboxed: [] as number[], unsandboxed: [] as number[] };
for (let i = 0; i < WARMUP_RUNS; i++) await Promise.all([once(sandboxed), once(unsandboxed)]);
for (let i = 0; i < RUNS; i++) {
  times.sandboxed.push(await once(sandboxed));
  times.unsandboxed.push(await once(unsandboxed));
}
const row = (name: string, ms: number[]) => ({ name, runs: ms.length, p50_ms: round(quantile(ms, 0.5)), p99_ms: round(quantile(ms, 0.99)), mean_ms: round(mean(ms)) });
const rows = [row('sandboxed (prlimit + bwrap)', times.sandboxed), row('unsandboxed (prlimit + sh)', times.unsandboxed)];
console.table(rows);
console.log(`added by the sandbox: p50 ${round(rows[0].p50_ms - rows[1].p50_ms)} ms, p99 ${round(rows[0].p99_ms - rows[1].p99_ms)} ms (root worker: ${process.getuid?.() === 0})`);
