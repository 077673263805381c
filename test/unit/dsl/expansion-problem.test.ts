import { describe, expect, it } from 'vitest';
import { expansionProblem, MAX_DOCUMENT_NODES } from '../../../src/dsl/expansion-problem.ts';

const limits = { maxNodes: 100, maxTextChars: 1_000 };

describe('expansionProblem', () => {
  it('accepts a document within both budgets', () => {
    expect(expansionProblem({ a: [1, 2, { b: 'x' }], c: null }, limits)).toBeUndefined();
    expect(expansionProblem('plain', limits)).toBeUndefined();
  });

  it('counts every repeat of a shared value, as serialising it would', () => {
    const shared = Array.from({ length: 10 }, (_, i) => i); // 11 nodes
    expect(expansionProblem({ a: shared }, limits)).toBeUndefined();
    expect(expansionProblem({ a: Array.from({ length: 10 }, () => shared) }, limits)).toBe(
      'document expands to more than 100 nodes (YAML aliases?)',
    );
  });

  it('stops on a cycle', () => {
    const loop: { self?: unknown } = {};
    loop.self = loop;
    expect(expansionProblem(loop, limits)).toMatch(/more than 100 nodes/);
  });

  it('bounds the text of a long string repeated few times', () => {
    const long = 'x'.repeat(400);
    expect(expansionProblem([long, long], limits)).toBeUndefined();
    expect(expansionProblem([long, long, long], limits)).toBe('document expands to more than 1000 characters of text (YAML aliases?)');
    expect(expansionProblem({ ['k'.repeat(1_001)]: 1 }, limits)).toMatch(/characters of text/);
  });

  it('fails a huge list without walking it item by item', () => {
    const huge = new Array<number>(MAX_DOCUMENT_NODES * 10).fill(0);
    const t0 = performance.now();
    expect(expansionProblem(huge)).toMatch(/more than 100000 nodes/);
    expect(performance.now() - t0).toBeLessThan(1_000);
  });
});
