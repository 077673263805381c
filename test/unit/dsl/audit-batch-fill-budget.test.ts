// `batch(size, fill_with)` padded its last batch, and `slice(n)` made its n lists, without counting
// them against the render's budget: `[1] | batch(200000000, 'x')` (a size a payload can give) held a
// server's event loop 20 s and 2 GB, `slice(20000000)` 11 s and 1.2 GB. Both now pay for what they make.
import { describe, expect, it } from 'vitest';
import { renderValue, TemplateError } from '../../../src/dsl/render.ts';

const render = (template: string, ctx: Record<string, unknown> = {}): unknown => renderValue(template, ctx, 'start.loop.in');

describe('batch with fill_with', () => {
  it('pads the last batch as before when the size is reasonable', () => {
    expect(render("{{ [1, 2, 3] | batch(2, 'x') }}")).toEqual([[1, 2], [3, 'x']]);
    expect(render('{{ [1, 2, 3] | batch(2) }}')).toEqual([[1, 2], [3]]);
  });

  it('refuses padding past the render budget with a template error, not a list of millions', () => {
    const started = Date.now();
    expect(() => render('{{ [1] | batch(workload.size, none) | length }}', { workload: { size: 5_000_000 } })).toThrow(TemplateError);
    expect(() => render("{{ [1] | batch(5000000, 'x') }}")).toThrow(/start\.loop\.in: rendering took more than 1000000 steps/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe('slice', () => {
  it('slices as before', () => {
    expect(render('{{ [1, 2, 3] | slice(2) }}')).toEqual([[1, 2], [3]]);
    expect(render("{{ [1, 2, 3] | slice(2, 'x') }}")).toEqual([[1, 2], [3, 'x']]);
  });

  it('refuses a count past the render budget, however few the items', () => {
    const started = Date.now();
    expect(() => render('{{ ([1] | slice(workload.n))[0] }}', { workload: { n: 5_000_000 } })).toThrow(/rendering took more than 1000000 steps/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
