// docs/operations.md (*Traces*) lists the attributes spans carry: "names, ids, numbers, statuses
// and error codes only". Every `svc.*` attribute src/telemetry/execution-trace.ts writes is named
// there, so a reader can tell what reaches the trace backend (svc.error.task, svc.error.step,
// svc.step.replayed and svc.resumed_from.execution.id were written and not listed).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (path: string) => readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8');

describe('span attributes in the docs', () => {
  it('names every svc.* attribute a span is given', () => {
    const written = [...new Set(read('src/telemetry/execution-trace.ts').match(/'svc\.[a-z_.]+'/g) ?? [])].map((q) => q.slice(1, -1));
    expect(written.length).toBeGreaterThan(10);
    const docs = read('docs/operations.md');
    const traces = docs.slice(docs.indexOf('### Traces (OpenTelemetry)'));
    expect(written.filter((a) => !traces.includes(`\`${a}\``))).toEqual([]);
  });
});
