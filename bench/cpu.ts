import { readFileSync, readdirSync } from 'node:fs';
import { round } from './stats.ts';

// Linux reports process and system CPU times in clock ticks; USER_HZ is 100 on every mainstream
// architecture (Node offers no sysconf to read it).
const MS_PER_TICK = 10;

/** CPU times (ms) at one instant: this process, the PostgreSQL server (postmaster and backends), extra pids, and the whole machine. */
export type CpuSnapshot = { at: number; nodeMs: number; postgresMs: number | null; extraMs: number; clientMs: number; systemBusyMs: number | null; elu: EventLoopUtilization };

type EventLoopUtilization = ReturnType<typeof performance.eventLoopUtilization>;

export type CpuDelta = {
  wallMs: number;
  /** CPU of this Node process: server, in-process workers and the bench client (user + system). */
  nodeMs: number;
  /** CPU of the PostgreSQL server: postmaster, live backends, reaped backends (null for an external server). */
  postgresMs: number | null;
  /** CPU of worker processes started by the bench. */
  workerProcessMs: number;
  /** CPU of the load generator's process (bench/load-client.ts), where one runs. */
  loadClientMs: number;
  /** Busy CPU of the whole machine, all processes (null where /proc/stat is unavailable). */
  systemBusyMs: number | null;
  /** Machine CPU not accounted to the above: other processes on the machine (noise), the kernel's softirq work. */
  otherMs: number | null;
  /** Fraction of wall time this process's event loop was busy (one thread runs server, in-process workers and bench). */
  eventLoopUtilization: number;
};

function statFields(pid: number): string[] | null {
  try {
    const st = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return st.slice(st.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** utime + stime (+ cutime + cstime: its reaped children) of a process, in ms. */
function processTreeCpuMs(pid: number, withReaped: boolean): number {
  const f = statFields(pid);
  if (!f) return 0;
  // After "pid (comm) ": state=0 ppid=1 ... utime=11 stime=12 cutime=13 cstime=14
  const ticks = Number(f[11]) + Number(f[12]) + (withReaped ? Number(f[13]) + Number(f[14]) : 0);
  return ticks * MS_PER_TICK;
}

/** The postmaster's own and its reaped children's CPU, plus every live child (backends, walwriter, ...). */
function postgresCpuMs(postmasterPid: number): number {
  let total = processTreeCpuMs(postmasterPid, true);
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const f = statFields(Number(d));
    if (f && Number(f[1]) === postmasterPid) total += (Number(f[11]) + Number(f[12])) * MS_PER_TICK;
  }
  return total;
}

function systemBusyMs(): number | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0];
    // cpu user nice system idle iowait irq softirq steal guest guest_nice
    const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
    return (user + nice + system + irq + softirq + steal) * MS_PER_TICK;
  } catch {
    return null;
  }
}

/** Where CPU goes during a phase: this process, PostgreSQL, worker processes, and everything else on the machine. */
export class CpuMeter {
  readonly #postmasterPid: number | null;
  readonly extraPids = new Set<number>();
  /** Load generator processes: reported apart from the service's own CPU. */
  readonly clientPids = new Set<number>();

  constructor(postmasterPid: number | null) {
    this.#postmasterPid = postmasterPid;
  }

  snapshot(): CpuSnapshot {
    const u = process.cpuUsage();
    let extraMs = 0;
    for (const pid of this.extraPids) extraMs += processTreeCpuMs(pid, false);
    let clientMs = 0;
    for (const pid of this.clientPids) clientMs += processTreeCpuMs(pid, false);
    return {
      at: performance.now(),
      nodeMs: (u.user + u.system) / 1000,
      postgresMs: this.#postmasterPid ? postgresCpuMs(this.#postmasterPid) : null,
      extraMs,
      clientMs,
      systemBusyMs: systemBusyMs(),
      elu: performance.eventLoopUtilization(),
    };
  }

  /** Worker processes must still run when `b` is taken (an exited process has no /proc entry). */
  static delta(a: CpuSnapshot, b: CpuSnapshot): CpuDelta {
    const nodeMs = b.nodeMs - a.nodeMs;
    const postgresMs = a.postgresMs !== null && b.postgresMs !== null ? b.postgresMs - a.postgresMs : null;
    const workerProcessMs = b.extraMs - a.extraMs;
    const loadClientMs = b.clientMs - a.clientMs;
    const systemBusy = a.systemBusyMs !== null && b.systemBusyMs !== null ? b.systemBusyMs - a.systemBusyMs : null;
    return {
      wallMs: b.at - a.at,
      nodeMs,
      postgresMs,
      workerProcessMs,
      loadClientMs,
      systemBusyMs: systemBusy,
      otherMs: systemBusy !== null ? systemBusy - nodeMs - (postgresMs ?? 0) - workerProcessMs - loadClientMs : null,
      eventLoopUtilization: performance.eventLoopUtilization(b.elu, a.elu).utilization,
    };
  }
}

/** The 1-minute load average of the machine (other engineers' tests make figures noisy). */
export function loadAverage1m(): number {
  try {
    return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
  } catch {
    return Number.NaN;
  }
}

export type CpuPerStep = {
  nodeMs: number;
  postgresMs: number | null;
  workerProcessMs: number;
  /** The load generator's process (0 where it runs in the bench's own process). */
  loadClientMs: number;
  /** CPU used meanwhile by everything else on the machine (other engineers' tests, kernel): noise. */
  otherMs: number | null;
  /** Other processes' load in CPU cores, averaged over the phase. */
  otherCores: number | null;
  eventLoopUtilization: number;
};

/** A phase's CPU divided by the steps it ran; other load also as average cores. */
export function cpuPerStep(d: CpuDelta, steps: number): CpuPerStep {
  return {
    nodeMs: round(d.nodeMs / steps, 3),
    postgresMs: d.postgresMs === null ? null : round(d.postgresMs / steps, 3),
    workerProcessMs: round(d.workerProcessMs / steps, 3),
    loadClientMs: round(d.loadClientMs / steps, 3),
    otherMs: d.otherMs === null ? null : round(d.otherMs / steps, 3),
    otherCores: d.otherMs === null ? null : round(Math.max(0, d.otherMs) / d.wallMs, 2),
    eventLoopUtilization: round(d.eventLoopUtilization, 3),
  };
}
