// A trigger's templates at registration (DESIGN.md "Triggers", "Authoring"): a payload or
// delivery_id template that reads a name nothing defines fails every fire, so registration
// names it, beside a root the trigger's kind does not have.
import { describe, expect, it } from 'vitest';
import { parsePlaybook } from '../../../src/dsl/parse-playbook.ts';

function problems(trigger: string): { path: string; message: string }[] {
  const r = parsePlaybook(`apiVersion: svc/v1
metadata: { name: t, path: t/triggers }
triggers:
  - ${trigger}
workflow:
  - step: start
    tool: { name: a, kind: noop }
`);
  return r.ok ? [] : r.problems.map(({ path, message }) => ({ path, message }));
}

describe("a trigger's templates", () => {
  it('a name nothing defines is undefined; a root of another kind is not available here', () => {
    expect(problems('{ name: n, kind: schedule, cron: "0 2 * * *", payload: { d: "{{ nosuch1 }}" } }')).toEqual([
      { path: 'triggers[0].payload.d', message: "'nosuch1' is undefined: a trigger's templates read trigger" },
    ]);
    expect(problems('{ name: h, kind: webhook, auth: a, signature: github, delivery_id: "{{ request.headers[\'x\'] }}{{ zz }}", payload: { s: "{{ message.seq }}" } }')).toEqual([
      { path: 'triggers[0].payload.s', message: "'message' is not available here: a trigger's templates read trigger, request" },
      { path: 'triggers[0].delivery_id', message: "'zz' is undefined: a trigger's templates read request" },
    ]);
  });

  it("a field its root does not have is undefined, with the fields it has (a misspelling: 'did you mean')", () => {
    expect(problems('{ name: n, kind: schedule, cron: "0 2 * * *", payload: { z: "{{ trigger.nme }}", ok: "{{ trigger.nme2 | default(1) }}" } }')).toEqual([
      { path: 'triggers[0].payload.z', message: "'trigger.nme' is undefined: trigger has name, kind, scheduled_time, fired_at (did you mean 'name'?)" },
    ]);
    expect(problems('{ name: w, kind: webhook, auth: a, payload: { b: "{{ request.bdy }}", h: "{{ request[\'headers\'][\'x-a\'] }}" } }')).toEqual([
      { path: 'triggers[0].payload.b', message: "'request.bdy' is undefined: request has body, headers, query (did you mean 'body'?)" },
    ]);
    expect(problems('{ name: o, kind: nats, auth: a, stream: S, subject: s.x, payload: { m: "{{ message.data }}" } }')).toEqual([
      { path: 'triggers[0].payload.m', message: "'message.data' is undefined: message has subject, seq, text, json, headers" },
    ]);
  });

  it("a webhook's signature: a mapping's own problems are named (with 'did you mean'), a name outside the styles lists them", () => {
    expect(problems('{ name: w, kind: webhook, auth: a, signature: { style: hmac, hedaer: x-s } }')).toEqual([
      { path: 'triggers[0].signature.hedaer', message: "unknown field 'hedaer' (did you mean 'header'?)" },
    ]);
    expect(problems('{ name: w, kind: webhook, auth: a, signature: { style: github } }')).toEqual([
      { path: 'triggers[0].signature.style', message: "must be hmac: the mapping form sets the hmac style's headers (the other styles are written signature: github, stripe, bearer)" },
    ]);
    expect(problems('{ name: w, kind: webhook, auth: a, signature: githb }')).toEqual([
      { path: 'triggers[0].signature', message: 'must be one of github, stripe, hmac, bearer, or a mapping {style: hmac, header, prefix, timestamp_header}' },
    ]);
    expect(problems('{ name: w, kind: webhook, auth: a, signature: { style: hmac, header: x-s, prefix: "sha256=" } }')).toEqual([]);
  });

  it("accepts the kind's roots, a default for what may be absent, the template's own names and the functions", () => {
    expect(problems('{ name: n, kind: schedule, cron: "0 2 * * *", payload: { d: "{{ trigger.scheduled_time[:10] }}", e: "{{ x | default(1) }}", f: "{% set y = 1 %}{{ y }}", g: "{{ range(2) | list }}" } }')).toEqual([]);
    expect(problems('{ name: o, kind: nats, auth: a, stream: S, subject: s.x, payload: { m: "{{ message.json }}", n: "{{ trigger.name }}" } }')).toEqual([]);
  });
});

describe("a NATS trigger's stream and subject", () => {
  it('a stream name or subject NATS refuses is a problem at its place, not a trigger that never consumes', () => {
    const nats = (stream: string, subject: string) => problems(`{ name: o, kind: nats, auth: a, stream: "${stream}", subject: "${subject}" }`).map((p) => p.path);
    expect(nats('ORDERS', 'orders.created')).toEqual([]);
    expect(nats('ORDERS-2_b', 'orders.>')).toEqual([]);
    expect(nats('ORDERS', '*.created.*')).toEqual([]);
    expect(nats('ORDERS', '>')).toEqual([]);
    for (const stream of ['ORD.ERS', 'ORD ERS', 'ORD*', 'ORD>', 'a/b', 'a\\\\b']) expect(nats(stream, 'orders.created'), stream).toEqual(['triggers[0].stream']);
    for (const subject of ['orders created', 'orders..created', '.orders', 'orders.', 'orders.>.created', 'orders\\tcreated']) expect(nats('ORDERS', subject), subject).toEqual(['triggers[0].subject']);
  });
});

describe("a webhook's delivery_id", () => {
  it('that reads nothing of the request (a header name, a constant) is a problem: every delivery after the first would be a duplicate', () => {
    const why = "names every delivery the same, so each after the first would be a duplicate that starts nothing: write a template over request, e.g. \"{{ request.headers['x-github-delivery'] }}\"";
    expect(problems('{ name: w, kind: webhook, auth: a, delivery_id: x-github-delivery }')).toEqual([{ path: 'triggers[0].delivery_id', message: `'x-github-delivery' ${why}` }]);
    expect(problems(`{ name: w, kind: webhook, auth: a, delivery_id: "{{ 'fixed' }}" }`)).toEqual([{ path: 'triggers[0].delivery_id', message: `'{{ 'fixed' }}' ${why}` }]);
    expect(problems(`{ name: w, kind: webhook, auth: a, delivery_id: "{{ request.headers['x-id'] }}" }`)).toEqual([]);
    expect(problems(`{ name: w, kind: webhook, auth: a, delivery_id: "{{ request.body.id | default('none') }}-{{ request.query.n | default(0) }}" }`)).toEqual([]);
  });
});
