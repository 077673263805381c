/** One row of the printed table. */
export type Row = { figure: string; value: string; baseline: string; ratio: string; target: string; verdict: string; noise?: string };

const HEADERS: Required<Row> = { figure: 'figure', value: 'value', baseline: 'baseline', ratio: 'ratio', target: 'target', verdict: '', noise: 'other load' };
const COLUMNS = Object.keys(HEADERS) as (keyof Row)[];

/** A plain-text table with left-aligned figure names and right-aligned numbers. */
export function formatTable(rows: Row[]): string {
  const all: Required<Row>[] = [HEADERS, ...rows.map((r) => ({ noise: '', ...r }))];
  const width = Object.fromEntries(COLUMNS.map((c) => [c, Math.max(...all.map((r) => r[c].length))])) as Record<keyof Row, number>;
  const line = (r: Required<Row>) =>
    COLUMNS.map((c) => (c === 'figure' || c === 'verdict' ? r[c].padEnd(width[c]) : r[c].padStart(width[c])))
      .join('  ')
      .trimEnd();
  const rule = COLUMNS.map((c) => '-'.repeat(width[c])).join('  ').trimEnd();
  return [line(all[0]), rule, ...all.slice(1).map(line)].join('\n');
}

/** Other processes' CPU load during a phase, e.g. "0.8 cores" (other engineers' tests share the machine). */
export const noise = (cores: number | null): string => (cores === null ? '' : `${cores.toFixed(1)} cores`);

export const fmt = (n: number, digits = 2): string => (Number.isFinite(n) ? n.toFixed(digits) : '-');
