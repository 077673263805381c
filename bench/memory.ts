import { readFile } from 'node:fs/promises';

export const RSS_SAMPLE_INTERVAL_MS = 50;
const MIB = 1024 * 1024;

/** Samples this process's RSS every RSS_SAMPLE_INTERVAL_MS; keeps the overall and per-phase peaks (MiB). */
export class RssSampler {
  #timer: NodeJS.Timeout | undefined;
  #phase = 'setup';
  readonly peakByPhaseMiB: Record<string, number> = {};
  peakMiB = 0;
  samples = 0;

  start(): void {
    this.#sample();
    this.#timer = setInterval(() => this.#sample(), RSS_SAMPLE_INTERVAL_MS);
    this.#timer.unref();
  }

  phase(name: string): void {
    this.#sample();
    this.#phase = name;
    this.#sample();
  }

  stop(): void {
    this.#sample();
    clearInterval(this.#timer);
  }

  #sample(): void {
    const mib = process.memoryUsage.rss() / MIB;
    this.samples++;
    if (mib > this.peakMiB) this.peakMiB = mib;
    if (mib > (this.peakByPhaseMiB[this.#phase] ?? 0)) this.peakByPhaseMiB[this.#phase] = mib;
  }
}

/** Peak RSS (VmHWM) of another process in MiB, from /proc; null where /proc is unavailable. */
export async function peakRssOfPid(pid: number): Promise<number | null> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = /VmHWM:\s+(\d+)\s+kB/.exec(status)?.[1];
    return kb ? Number(kb) / 1024 : null;
  } catch {
    return null;
  }
}
