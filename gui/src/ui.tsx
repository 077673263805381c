import type { ReactNode } from 'react';
import { errorText } from './api.ts';

/** A status word with its colour (running, completed, failed, cancelled, …). */
export function StatusBadge({ status }: { status: string }) {
  return <span className={`badge s-${status}`}>{status}</span>;
}

/** JSON folded under a summary line; open shows it indented. */
export function JsonView({ label, value, open = false }: { label: string; value: unknown; open?: boolean }) {
  if (value === null || value === undefined) return null;
  return (
    <details className="json" open={open}>
      <summary>{label}</summary>
      <pre>{JSON.stringify(value, null, 2)}</pre>
    </details>
  );
}

/** An error for the user: the API's detail when it sent one. */
export function ErrorBox({ error }: { error: unknown }) {
  if (!error) return null;
  const text = errorText(error);
  return (
    <p className="error" role="alert">
      {text}
    </p>
  );
}

export function Section({ title, children, actions }: { title: string; children: ReactNode; actions?: ReactNode }) {
  return (
    <section className="panel" aria-label={title}>
      <header className="panel-head">
        <h2>{title}</h2>
        {actions}
      </header>
      {children}
    </section>
  );
}

/** "3.2 s", "4 min 10 s", "2 h 5 min" from milliseconds. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s % 60)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

// One formatter for every timestamp: toLocaleString with options builds a new one per call,
// which a list of hundreds of rows pays on each render. Same fields as toLocaleString's default.
const TIME_FORMAT = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric', hour12: false });

/** Local date and time of an ISO timestamp, to the second. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : TIME_FORMAT.format(d);
}

/** How long ago an ISO timestamp was, roughly. */
export function formatAge(iso: string): string {
  return `${formatDuration(Date.now() - new Date(iso).getTime())} ago`;
}

// The time of day alone, for moments of today (what waits now); same fields as TIME_FORMAT's.
const CLOCK_FORMAT = new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: 'numeric', second: 'numeric', hour12: false });

/** An ISO timestamp as its time of day when it is today (local), else as formatTime does. */
export function formatClock(iso: string | null | undefined, now: Date = new Date()): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toDateString() === now.toDateString() ? CLOCK_FORMAT.format(d) : TIME_FORMAT.format(d);
}
