// Templates are strict (docs/playbook-dsl.md): reading an attribute that is not there is an error
// naming it, whatever the syntax. `| attr('nme')` and the `attribute=` of map, sort, sum, join,
// min, max, unique, selectattr and rejectattr read it as nothing instead, so a misspelt name
// rendered as empty text (`echo {{ user | attr('nme') }}` ran `echo`) or silently dropped items.
import { describe, expect, it } from 'vitest';
import { renderValue, TemplateError } from '../../../src/dsl/render.ts';

const ctx = { workload: { user: { name: 'ann' }, users: [{ name: 'ann', email: 'a@x' }, { name: 'bob' }], nothing: null } };
const render = (template: string): unknown => renderValue(template, ctx, 'start.greet.command');

function failure(template: string): string {
  try {
    renderValue(template, ctx, 'start.greet.command');
  } catch (error) {
    if (!(error instanceof TemplateError)) throw error;
    return error.message;
  }
  throw new Error(`expected a TemplateError for ${template}`);
}

describe('strict attribute reads in filters', () => {
  it('`attr` of a missing attribute is an error naming the expression and the attribute', () => {
    expect(failure("echo {{ workload.user | attr('nme') }}")).toBe("template error in start.greet.command: 'workload.user | attr('nme')' is undefined: 'workload.user' has no attribute 'nme'");
    expect(failure("{{ workload.nothing | attr('a') }}")).toMatch(/'workload.nothing' is none/);
    expect(render("{{ workload.user | attr('name') }}")).toBe('ann');
  });

  it('`default` and `is defined` still read `attr` leniently, along the whole chain', () => {
    expect(render("{{ workload.user | attr('nme') | default('x') }}")).toBe('x');
    expect(render("{{ workload.missing | attr('a') | default('x') }}")).toBe('x');
    expect(render("{{ workload.user | attr('nme') is defined }}")).toBe(false);
  });

  it.each([
    ["{{ workload.users | map(attribute='nme') | join(',') }}", 'map(attribute="nme"): a mapping has no attribute \'nme\''],
    ["{{ workload.users | map(attribute='email') | join(',') }}", 'map(attribute="email"): a mapping has no attribute \'email\''],
    ["{{ workload.users | sort(attribute='nme') }}", 'sort(attribute="nme")'],
    ["{{ workload.users | join(',', attribute='nme') }}", 'join(attribute="nme")'],
    ["{{ workload.users | sum(attribute='age') }}", 'sum(attribute="age")'],
    ["{{ workload.users | max(attribute='nme') }}", 'max(attribute="nme")'],
    ["{{ workload.users | unique(attribute='nme') }}", 'unique(attribute="nme")'],
    ["{{ workload.users | selectattr('email') | list }}", 'selectattr(attribute="email")'],
    ["{{ workload.users | rejectattr('email', 'equalto', 'a@x') | list }}", 'rejectattr(attribute="email")'],
  ])('%s is an error', (template, message) => {
    expect(failure(template)).toContain(message);
  });

  it('what may be absent is still said so: map with default=, selectattr with a test of presence', () => {
    expect(render("{{ workload.users | map(attribute='email', default='-') | join(',') }}")).toBe('a@x,-');
    expect(render("{{ workload.users | selectattr('email', 'defined') | map(attribute='name') | join(',') }}")).toBe('ann');
    expect(render("{{ workload.users | rejectattr('email', 'undefined') | map(attribute='name') | join(',') }}")).toBe('ann');
    expect(render("{{ workload.users | map(attribute='name') | join(',') }}")).toBe('ann,bob');
  });
});
