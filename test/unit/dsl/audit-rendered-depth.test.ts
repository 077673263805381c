// A template could render to a value nested thousands of levels deep (`fromjson` of "[[[[...]]]]"):
// the server's write of it overflowed the stack, so a start whose loop.in or child args held one
// answered 500, and a worker's task failed `internal`. Such a value is now a template error.
import { describe, expect, it } from 'vitest';
import { renderValue, TemplateError } from '../../../src/dsl/render.ts';

const nested = (levels: number) => `{{ ("[" * ${levels} ~ "]" * ${levels}) | fromjson }}`;
const depthOf = (value: unknown): number => (Array.isArray(value) ? 1 + Math.max(0, ...value.map(depthOf)) : 0);

describe('how deep a rendered value may nest', () => {
  it.each([
    ['start.loop.in', `{{ [${nested(20000).slice(3, -3)}] }}`],
    ['start.task_0.args.d', nested(20000)],
    ['start.next[0].set.deep', nested(200)],
    ['start.task_0.env.X', `{{ {"a": ${nested(300).slice(3, -3)}} }}`],
  ])('%s is refused past 128 levels, as a template error', (path, template) => {
    expect(() => renderValue(template, {}, path)).toThrow(TemplateError);
    expect(() => renderValue(template, {}, path)).toThrow(new RegExp(`${path.replace(/[.[\]]/g, '\\$&')}: the value nests more than 128 levels`));
  });

  it('renders what nests 128 levels or less, as before', () => {
    expect(depthOf(renderValue(nested(128), {}, 'f'))).toBe(128);
    expect(renderValue('{{ workload.a }}', { workload: { a: [[1, { b: [2] }]] } }, 'f')).toEqual([[1, { b: [2] }]]);
    // Text is text however deep what it printed was.
    expect(renderValue(`x{{ ${nested(1000).slice(3, -3)} | length }}`, {}, 'f')).toBe('x1');
  });
});
