// `default(none)` is how a playbook says "absent means none" (Jinja returns None): a value that is
// exactly that template renders natively, so a `playbook` task's `timeout_seconds`, an `env`
// variable (none leaves it unset) or a child's args get null. The filter took an explicit none
// for "no default given" and rendered '' (a timeout_seconds of '' fails the task invalid_task);
// `int(none)` and `float(none)` gave 0 the same way.
import { describe, expect, it } from 'vitest';
import { renderValue } from '../../../src/dsl/render.ts';

const render = (template: string) => renderValue(template, { workload: { n: 3, empty: '' } }, 'field');

describe('an explicit none as the fallback', () => {
  it('is what default and d give for an absent value', () => {
    expect(render('{{ workload.missing | default(none) }}')).toBeNull();
    expect(render('{{ workload.missing | d(None) }}')).toBeNull();
    expect(render('{{ workload.missing | default(default_value=none) }}')).toBeNull();
    expect(render('{{ workload.empty | default(none, true) }}')).toBeNull();
    expect(render('{{ { "t": workload.missing | default(none) } }}')).toEqual({ t: null });
  });

  it('is what int and float give for what is not a number', () => {
    expect(render('{{ "x" | int(none) }}')).toBeNull();
    expect(render('{{ "zz" | int(none, 16) }}')).toBeNull();
    expect(render('{{ "x" | float(none) }}')).toBeNull();
  });

  it('leaves the defaults of a filter given no fallback as they were', () => {
    expect(render('{{ workload.missing | default }}')).toBe('');
    expect(render('{{ workload.missing | default() }}')).toBe('');
    expect(render('{{ "x" | int }}')).toBe(0);
    expect(render('{{ "x" | float }}')).toBe(0);
    expect(render('{{ workload.n | default(none) }}')).toBe(3);
  });
});
