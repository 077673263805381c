import { describe, expect, it } from 'vitest';
import { evaluateCondition, isTruthy, renderValue, TemplateError } from '../../../src/dsl/render.ts';

const ctx: Record<string, unknown> = {
  workload: { base_url: 'http://127.0.0.1:9000', limit: 10, ids: [1, 2, 3], filter: { active: true }, note: null },
  keychain: { api: { access_token: 'tok-very-secret' } },
  steps: { start: { status: 'ok', result: { body: [{ id: 1 }] }, error: null } },
  payload: '{{ workload.limit }}',
  outcome: { status: 'ok', error: null },
};

function templateError(fn: () => unknown): TemplateError {
  try {
    fn();
  } catch (error) {
    if (error instanceof TemplateError) return error;
    throw error;
  }
  throw new Error('expected a TemplateError');
}

describe('renderValue', () => {
  it('renders a lone expression to its native value', () => {
    expect(renderValue('{{ workload.ids }}', ctx, 'f')).toEqual([1, 2, 3]);
    expect(renderValue('{{ workload.limit }}', ctx, 'f')).toBe(10);
    expect(renderValue('  {{workload.filter}} ', ctx, 'f')).toEqual({ active: true });
    expect(renderValue('{{ workload.filter.active }}', ctx, 'f')).toBe(true);
    expect(renderValue('{{ workload.note }}', ctx, 'f')).toBeNull();
    expect(renderValue('{{ workload.limit * 2 }}', ctx, 'f')).toBe(20);
    expect(renderValue('{{ steps.start.result.body }}', ctx, 'f')).toEqual([{ id: 1 }]);
    expect(renderValue('{{ missing | default(7) }}', ctx, 'f')).toBe(7);
  });

  it('interpolates into strings when the template is more than one expression', () => {
    expect(renderValue('{{ workload.base_url }}/users?limit={{ workload.limit }}', ctx, 'f')).toBe('http://127.0.0.1:9000/users?limit=10');
    expect(renderValue('{{ workload.limit }}{{ workload.limit }}', ctx, 'f')).toBe('1010');
    expect(renderValue('{% for i in workload.ids %}{{ i }},{% endfor %}', ctx, 'f')).toBe('1,2,3,');
    expect(renderValue('a {{ missing | default("") }} b', ctx, 'f')).toBe('a  b');
  });

  it('deep-renders objects and lists, leaving keys and non-strings alone', () => {
    const value = {
      url: '{{ workload.base_url }}/users',
      headers: { Authorization: 'Bearer {{ keychain.api.access_token }}', '{{ key }}': 'k' },
      params: ['{{ workload.limit }}', 3, true, null],
    };
    expect(renderValue(value, ctx, 'tool[0]')).toEqual({
      url: 'http://127.0.0.1:9000/users',
      headers: { Authorization: 'Bearer tok-very-secret', '{{ key }}': 'k' },
      params: [10, 3, true, null],
    });
    expect(value.url).toBe('{{ workload.base_url }}/users');
  });

  it('never renders output a second time', () => {
    expect(renderValue('{{ payload }}', ctx, 'f')).toBe('{{ workload.limit }}');
    expect(renderValue('data: {{ payload }}', ctx, 'f')).toBe('data: {{ workload.limit }}');
    expect(renderValue({ nested: ['{{ payload }}'] }, ctx, 'f')).toEqual({ nested: ['{{ workload.limit }}'] });
  });

  it('leaves strings without template markers as they are', () => {
    expect(renderValue('plain { text }', ctx, 'f')).toBe('plain { text }');
  });

  it('offers the json, number, string and base64 filters', () => {
    expect(renderValue('{{ workload.ids | tojson }}', ctx, 'f')).toBe('[1,2,3]');
    expect(renderValue('{{ "{\\"a\\": [1]}" | fromjson }}', ctx, 'f')).toEqual({ a: [1] });
    expect(renderValue('{{ "42" | int }}', ctx, 'f')).toBe(42);
    expect(renderValue('{{ "3.9" | int }}', ctx, 'f')).toBe(3);
    expect(renderValue('{{ "x" | int }}', ctx, 'f')).toBe(0);
    expect(renderValue('{{ "2.5" | float }}', ctx, 'f')).toBe(2.5);
    expect(renderValue('{{ workload.limit | string }}', ctx, 'f')).toBe('10');
    expect(renderValue('{{ workload.ids | length }}', ctx, 'f')).toBe(3);
    expect(renderValue('{{ missing | default("fallback") }}', ctx, 'f')).toBe('fallback');
    expect(renderValue('{{ "user:pass" | b64encode }}', ctx, 'f')).toBe('dXNlcjpwYXNz');
    expect(renderValue('{{ "dXNlcjpwYXNz" | b64decode }}', ctx, 'f')).toBe('user:pass');
  });

  it('throws TemplateError naming the field for a syntax error', () => {
    const error = templateError(() => renderValue({ url: 'http://x/{{ workload.limit ' }, ctx, 'tool[0]'));
    expect(error.name).toBe('TemplateError');
    expect(error.field).toBe('tool[0].url');
    expect(error.message).toMatch(/^template error in tool\[0\]\.url: /);
    expect(error.message).not.toMatch(/unknown path|\n|at /);
  });

  it('throws TemplateError for an undefined function or filter', () => {
    const call = templateError(() => renderValue(['ok', '{{ nope(1) }}'], ctx, 'tool[0].params'));
    expect(call.field).toBe('tool[0].params[1]');
    expect(call.message).toContain('nope');
    const filter = templateError(() => renderValue('{{ workload.limit | shout }}', ctx, 'tool[0].url'));
    expect(filter.message).toBe("template error in tool[0].url: unknown filter 'shout' (line 1, column 21)");
  });

  it('throws TemplateError for an attribute of an undefined value', () => {
    const error = templateError(() => renderValue('{{ steps.missing.result }}', ctx, 'tool[0].body'));
    expect(error.field).toBe('tool[0].body');
    expect(error.message).toBe("template error in tool[0].body: 'steps.missing' is undefined: 'steps' has no attribute 'missing'");
  });

  it('refuses an attribute of null (strict, as Jinja with StrictUndefined) unless defaulted', () => {
    expect(templateError(() => renderValue('{{ outcome.error.code }}', ctx, 'f')).message).toBe("template error in f: 'outcome.error.code' is undefined: 'outcome.error' is none");
    expect(renderValue("{{ outcome.error.code | default('none') }}", ctx, 'f')).toBe('none');
    expect(renderValue('{{ outcome.error.code is defined }}', ctx, 'f')).toBe(false);
  });

  it('throws TemplateError for a missing keychain entry or field without revealing values', () => {
    const entry = templateError(() => renderValue({ headers: { A: 'Bearer {{ keychain.other.access_token }}' } }, ctx, 'tool[1]'));
    expect(entry.message).toBe("template error in tool[1].headers.A: keychain entry 'other' is not available");
    const field = templateError(() => renderValue('{{ keychain.api.refresh_token }}', ctx, 'tool[0].url'));
    expect(field.message).toBe("template error in tool[0].url: keychain entry 'api' has no field 'refresh_token'");
    expect(field.message).not.toContain('tok-very-secret');
    const bracket = templateError(() => renderValue("{{ keychain['other']['x'] }}", ctx, 'f'));
    expect(bracket.message).toContain("keychain entry 'other' is not available");
    const noKeychain = templateError(() => renderValue('{{ keychain.api.access_token }}', {}, 'f'));
    expect(noKeychain.field).toBe('f');
  });

  it('does not leak a secret through fromjson errors', () => {
    const error = templateError(() => renderValue('{{ keychain.api.access_token | fromjson }}', ctx, 'f'));
    expect(error.message).not.toContain('tok-very-secret');
  });
});

describe('evaluateCondition', () => {
  it('evaluates the {{ }} form and bare expressions', () => {
    expect(evaluateCondition("{{ outcome.status == 'ok' }}", ctx)).toBe(true);
    expect(evaluateCondition("outcome.status == 'ok'", ctx)).toBe(true);
    expect(evaluateCondition("{{ outcome.status == 'error' }}", ctx)).toBe(false);
    expect(evaluateCondition('workload.limit > 5 and workload.ids | length == 3', ctx)).toBe(true);
    expect(evaluateCondition('{{ outcome.status }} is {{ workload.limit }}', ctx)).toBe(true);
  });

  it('uses Jinja truthiness', () => {
    for (const falsy of ['false', 'False', '""', '0', '[]', '{}', 'none', 'missing is defined', 'missing | default(0)', '"false"', '"False"', 'workload.note']) {
      expect(evaluateCondition(falsy, ctx), falsy).toBe(false);
    }
    for (const truthy of ['true', '"no"', '1', '[0]', '{"a": 0}', 'workload.ids', 'workload.filter']) {
      expect(evaluateCondition(truthy, ctx), truthy).toBe(true);
    }
  });

  it('throws TemplateError naming the condition', () => {
    const error = templateError(() => evaluateCondition('{{ outcome.status == }}', ctx, 'workflow[0].next[1].when'));
    expect(error.field).toBe('workflow[0].next[1].when');
  });

  it('isTruthy treats the text "false" like false', () => {
    expect([isTruthy(' false '), isTruthy('FALSE'), isTruthy(Number.NaN), isTruthy(new Map())]).toEqual([false, false, false, false]);
    expect([isTruthy('0'), isTruthy('x'), isTruthy(-1)]).toEqual([true, true, true]);
  });
});
