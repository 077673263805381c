import { describe, expect, it } from 'vitest';
import { parsePlaybook, referencedKeychainNames, type NormalizedPlaybook, type Problem } from '../../../src/dsl/parse-playbook.ts';

// The example of DESIGN.md "Playbook DSL v1", verbatim.
const designExample = `
apiVersion: svc/v1
kind: Playbook
metadata: { name: fetch_users, path: examples/fetch_users }
workload: { base_url: "http://127.0.0.1:9000", limit: 10 }
keychain:
  - { name: api, kind: oauth2, scope: global, auth: api_client_auth, auto_renew: true }
workflow:
  - step: start
    tool:
      - name: users
        kind: http
        method: GET
        url: "{{ workload.base_url }}/users"
        headers: { Authorization: "Bearer {{ keychain.api.access_token }}" }
        params: { limit: "{{ workload.limit }}" }
        retry: { attempts: 3, delay_seconds: 0.5, backoff: 2 }
    next:
      - { step: store, when: "{{ outcome.status == 'ok' }}" }
      - { step: report }
  - step: store
    loop: { in: "{{ steps.start.result.body }}", iterator: user, mode: parallel, max_in_flight: 4 }
    tool:
      - { name: insert, kind: postgres, auth: db_auth,
          command: "INSERT INTO users(id, name) VALUES ($1, $2)", params: ["{{ user.id }}", "{{ user.name }}"] }
  - step: report
    tool: [ { name: notify, kind: shell, command: "echo failed" } ]
`;

const header = `apiVersion: svc/v1
kind: Playbook
metadata: { name: t, path: tests/t }
`;

function parseOk(text: string): NormalizedPlaybook {
  const result = parsePlaybook(text);
  if (!result.ok) throw new Error(`expected a valid playbook, got ${JSON.stringify(result.problems)}`);
  return result.playbook;
}

/** The problems without their line and column (placeOf tests those). */
function problemsOf(text: string): Problem[] {
  const result = parsePlaybook(text);
  if (result.ok) throw new Error('expected problems, the playbook parsed');
  return result.problems.map(({ path, message }) => ({ path, message }));
}

describe('parsePlaybook: the DESIGN.md example', () => {
  const playbook = parseOk(designExample);

  it('keeps the document fields', () => {
    expect(playbook.apiVersion).toBe('svc/v1');
    expect(playbook.kind).toBe('Playbook');
    expect(playbook.metadata).toEqual({ name: 'fetch_users', path: 'examples/fetch_users' });
    expect(playbook.workload).toEqual({ base_url: 'http://127.0.0.1:9000', limit: 10 });
    expect(playbook.keychain).toEqual([
      { name: 'api', kind: 'oauth2', scope: 'global', auth: 'api_client_auth', auto_renew: true },
    ]);
  });

  it('normalizes steps, tasks, arcs and loops', () => {
    expect(playbook.entry).toBe('start');
    expect(playbook.workflow.map((s) => s.step)).toEqual(['start', 'store', 'report']);
    const [start, store, report] = playbook.workflow;
    expect(start.tasks).toHaveLength(1);
    expect(start.tasks[0]).toMatchObject({
      name: 'users',
      kind: 'http',
      method: 'GET',
      url: '{{ workload.base_url }}/users',
      retry: { attempts: 3, delay_seconds: 0.5, backoff: 2 },
    });
    expect(start.next).toEqual({
      mode: 'exclusive',
      arcs: [{ step: 'store', when: "{{ outcome.status == 'ok' }}" }, { step: 'report' }],
    });
    expect(store.loop).toEqual({ in: '{{ steps.start.result.body }}', iterator: 'user', mode: 'parallel', max_in_flight: 4 });
    expect(store.tasks[0]).toMatchObject({ name: 'insert', kind: 'postgres', auth: 'db_auth', params: ['{{ user.id }}', '{{ user.name }}'] });
    expect(report.tasks[0]).toMatchObject({ name: 'notify', kind: 'shell', command: 'echo failed' });
    expect(report.next).toEqual({ mode: 'exclusive', arcs: [] });
  });

  it('finds the keychain entries a task references', () => {
    expect(referencedKeychainNames(playbook.workflow[0].tasks[0])).toEqual(['api']);
    expect(referencedKeychainNames(playbook.workflow[1].tasks[0])).toEqual([]);
  });
});

describe('parsePlaybook: normalization', () => {
  it('fills defaults: kind, workload, keychain, task names, retry, http method, loop', () => {
    const playbook = parseOk(`apiVersion: svc/v1
metadata: { name: t, path: tests/t }
workflow:
  - step: first
    loop: { in: [1, 2] }
    tool:
      - { kind: noop }
      - { kind: http, url: "http://x", method: post }
  - step: second
`);
    expect(playbook.kind).toBe('Playbook');
    expect(playbook.workload).toEqual({});
    expect(playbook.keychain).toEqual([]);
    expect(playbook.entry).toBe('first');
    const [first, second] = playbook.workflow;
    expect(first.loop).toEqual({ in: [1, 2], iterator: 'item', mode: 'sequential' });
    expect(first.tasks.map((t) => t.name)).toEqual(['task_0', 'task_1']);
    expect(first.tasks[0].retry).toEqual({ attempts: 1, delay_seconds: 0, backoff: 1 });
    expect(first.tasks[1]).toMatchObject({ method: 'POST' });
    expect(second.tasks).toEqual([]);
    expect(second.loop).toBeUndefined();
  });

  it('accepts a single task object and every form of next', () => {
    const playbook = parseOk(`${header}workflow:
  - step: a
    tool: { name: only, kind: noop }
    next: b
  - step: b
    next: [c, { step: d, when: "{{ vars.x }}", set: { x: 1 } }]
  - step: c
    next: { mode: inclusive, arcs: [a, { step: d }] }
  - step: d
    next: { arcs: [a] }
`);
    const [a, b, c, d] = playbook.workflow;
    expect(a.tasks.map((t) => t.name)).toEqual(['only']);
    expect(a.next).toEqual({ mode: 'exclusive', arcs: [{ step: 'b' }] });
    expect(b.next).toEqual({ mode: 'exclusive', arcs: [{ step: 'c' }, { step: 'd', when: '{{ vars.x }}', set: { x: 1 } }] });
    expect(c.next).toEqual({ mode: 'inclusive', arcs: [{ step: 'a' }, { step: 'd' }] });
    expect(d.next).toEqual({ mode: 'exclusive', arcs: [{ step: 'a' }] });
  });

  it('parses each task kind with its fields', () => {
    const playbook = parseOk(`${header}workflow:
  - step: start
    tool:
      - { name: h, kind: http, url: "http://x", accept_status: [404], body: { a: 1 }, timeout_seconds: 5 }
      - { name: p, kind: postgres, command: "select 1", params: [1] }
      - { name: c, kind: playbook, path: tests/child, args: { n: 1 } }
      - { name: m, kind: mcp, server: tools, method: tools/call, tool: add, arguments: { a: 1 } }
      - { name: s, kind: shell, command: "echo hi", env: { A: "1" }, cwd: /tmp }
      - { name: n, kind: noop, retry: { attempts: 2, when: "{{ outcome.status == 'error' }}" } }
`);
    expect(playbook.workflow[0].tasks.map((t) => t.kind)).toEqual(['http', 'postgres', 'playbook', 'mcp', 'shell', 'noop']);
    expect(playbook.workflow[0].tasks[5].retry).toEqual({ attempts: 2, delay_seconds: 0, backoff: 1, when: "{{ outcome.status == 'error' }}" });
  });

  it('accepts the spec metadata and keychain fields', () => {
    const playbook = parseOk(`apiVersion: svc/v1
metadata:
  name: agent
  path: agents/a
  agent: true
  terminal: { visible: true, workspace: w, scopes: [s], capabilities: [c] }
keychain:
  - { name: sm, kind: secret_manager, provider: gcp, scope: local, auth: cloud_auth, map: { token: path/to/secret }, ttl_seconds: 60 }
  - { name: tok, kind: http, endpoint: "http://t", method: POST, headers: { A: b }, data: { x: 1 }, token_field: t, ttl_field: e }
workflow: [ { step: start } ]
`);
    expect(playbook.metadata.agent).toBe(true);
    expect(playbook.keychain.map((k) => k.scope)).toEqual(['local', 'global']);
  });

  it('lists keychain names used through brackets and in blocks, not outside templates', () => {
    const playbook = parseOk(`${header}workflow:
  - step: start
    tool:
      - kind: shell
        command: "{% if keychain.b.x %}{{ keychain['a'].token }}{% endif %} keychain.plain"
        env: { T: "{{ keychain.a.token }} {{ workload.keychain.nope }}" }
`);
    expect(referencedKeychainNames(playbook.workflow[0].tasks[0])).toEqual(['b', 'a']);
  });
});

describe('parsePlaybook: problems', () => {
  it('reports malformed YAML with line and column', () => {
    const problems = problemsOf('apiVersion: svc/v1\nworkflow: [ { step: a }\n');
    expect(problems).toHaveLength(1);
    expect(problems[0].path).toBe('$');
    expect(problems[0].message).toMatch(/^YAML syntax error at line \d+, column \d+: /);
  });

  it('places a list or mapping used as a key at that key, not at 1:1 (js-yaml marks the document start)', () => {
    const problemsAt = (text: string) => {
      const result = parsePlaybook(text);
      return result.ok ? [] : result.problems;
    };
    expect(problemsAt(`${header}workload:\n  [1, 2]: x\nworkflow:\n  - step: start\n`)[0]).toMatchObject({ path: '$', line: 5, column: 3 });
    expect(problemsAt(`${header}workflow:\n  - step: start\n    ? {a: 1}\n    : 2\n`)[0]).toMatchObject({ line: 6, column: 7 });
    // A second document keeps its place (its error has no mark).
    expect(problemsAt(`${header}workflow:\n  - step: start\n---\na: 1\n`)[0]).toMatchObject({ line: 6, column: 1 });
  });

  it('keeps workload, vars and argument keys named prototype or constructor (valibot records drop them), and refuses them as input names', () => {
    const playbook = parseOk(`${header}workload: { prototype: 1, constructor: c }\nworkflow:\n  - step: start\n    tool: { kind: http, url: 'http://x', params: { prototype: v } }\n`);
    expect(playbook.workload).toEqual({ prototype: 1, constructor: 'c' });
    expect(playbook.workflow[0].tasks[0]).toMatchObject({ params: { prototype: 'v' } });
    const problems = problemsOf(`${header}inputs: { constructor: { type: string } }\nworkflow:\n  - step: start\n`);
    expect(problems).toEqual([{ path: 'inputs', message: expect.stringContaining('constructor') }]);
  });

  it('refuses a step name longer than the API can name (256 characters), takes one of 256', () => {
    const named = (name: string) => `${header}workflow:\n  - step: ${name}\n`;
    expect(parseOk(named('s'.repeat(256))).workflow[0].step).toHaveLength(256);
    expect(problemsOf(named('s'.repeat(257)))).toEqual([{ path: 'workflow[0].step', message: expect.stringContaining('at most 256 characters') }]);
  });

  it('reports an empty document and a non-mapping document', () => {
    expect(problemsOf('')[0]).toMatchObject({ path: '$' });
    expect(problemsOf('- a\n- b\n')).toEqual([{ path: '$', message: 'the document must be a mapping' }]);
  });

  it('refuses a list where a mapping goes (a record would take [1, 2] as {"0": 1, "1": 2})', () => {
    const problems = problemsOf(`${header}workload: [1, 2]
triggers: [ { name: w, kind: webhook, auth: hook, payload: [1, 2] } ]
workflow:
  - step: start
    tool: { name: s, kind: http, url: "http://x/y", headers: [1, 2], params: ["a"] }
`);
    expect(problems.map((p) => p.path).sort()).toEqual(['triggers[0].payload', 'workflow[0].tool.headers', 'workflow[0].tool.params', 'workload']);
    for (const p of problems) expect(p.message).toMatch(/Object/);
  });

  it('reports a missing workflow', () => {
    expect(problemsOf(header)).toEqual([{ path: 'workflow', message: 'is required' }]);
  });

  it('reports an empty workflow', () => {
    expect(problemsOf(`${header}workflow: []\n`)).toEqual([{ path: 'workflow', message: 'must have at least one step' }]);
  });

  it('reports an unknown task kind at its path', () => {
    const problems = problemsOf(`${header}workflow:
  - step: start
  - step: two
  - step: three
    tool: [ { kind: noop }, { kind: ftp, url: x } ]
`);
    expect(problems).toHaveLength(1);
    expect(problems[0].path).toBe('workflow[2].tool[1].kind');
    expect(problems[0].message).toMatch(/must be one of .*"http".*got "ftp"/);
  });

  it('reports a missing task kind', () => {
    const problems = problemsOf(`${header}workflow:\n  - step: start\n    tool: { url: x }\n`);
    expect(problems).toEqual([{ path: 'workflow[0].tool.kind', message: expect.stringMatching(/^is required \(one of "http"/) }]);
  });

  it('reports a duplicate step name', () => {
    expect(problemsOf(`${header}workflow:\n  - step: a\n  - step: b\n  - step: a\n`)).toEqual([
      { path: 'workflow[2].step', message: "duplicate step name 'a' (first at workflow[0])" },
    ]);
  });

  it('reports arcs to a missing step in each form of next', () => {
    const problems = problemsOf(`${header}workflow:
  - step: a
    next: nowhere
  - step: b
    next: [a, { step: gone }]
  - step: c
    next: { mode: inclusive, arcs: [lost] }
`);
    expect(problems).toEqual([
      { path: 'workflow[0].next', message: "arc to unknown step 'nowhere'" },
      { path: 'workflow[1].next[1].step', message: "arc to unknown step 'gone'" },
      { path: 'workflow[2].next.arcs[0]', message: "arc to unknown step 'lost'" },
    ]);
  });

  it('reports duplicate task names (explicit or defaulted) and duplicate keychain names', () => {
    const problems = problemsOf(`${header}keychain:
  - { name: k, kind: http }
  - { name: k, kind: oauth2 }
workflow:
  - step: a
    tool: [ { name: x, kind: noop }, { name: x, kind: noop }, { kind: noop }, { name: task_2, kind: noop } ]
`);
    expect(problems).toEqual([
      { path: 'workflow[0].tool[1].name', message: "duplicate task name 'x' in step 'a' (first at tool[0])" },
      { path: 'workflow[0].tool[3].name', message: "duplicate task name 'task_2' in step 'a' (first at tool[2])" },
      { path: 'keychain[1].name', message: "duplicate keychain entry name 'k' (first at keychain[0])" },
    ]);
  });

  it('requires a tool name for mcp tools/call', () => {
    expect(problemsOf(`${header}workflow:\n  - step: a\n    tool: { kind: mcp, server: s, method: tools/call }\n`)).toEqual([
      { path: 'workflow[0].tool.tool', message: 'is required when method is tools/call' },
    ]);
  });

  it('lists every shape problem at once', () => {
    const problems = problemsOf(`apiVersion: svc/v1
kind: Workflow
metadata: { name: t }
keychain: [ { name: k, kind: vault, scope: everywhere } ]
workflow:
  - step: a
    tools: []
    tool: { kind: http }
    loop: { in: 3, iterator: steps, mode: sideways, max_in_flight: 0 }
    next: [ { stepp: b } ]
  - step: b
    tool: { kind: noop, retry: { attempts: 0 } }
`);
    const byPath = Object.fromEntries(problems.map((p) => [p.path, p.message]));
    expect(byPath).toMatchObject({
      kind: expect.stringMatching(/"Playbook".*got "Workflow"/),
      'metadata.path': 'is required',
      'keychain[0].kind': expect.stringMatching(/got "vault"/),
      'keychain[0].scope': expect.stringMatching(/got "everywhere"/),
      'workflow[0].tools': "unknown field 'tools' (did you mean 'tool'?)",
      'workflow[0].tool.url': 'is required',
      'workflow[0].loop.in': 'must be a template string or a list',
      'workflow[0].loop.iterator': 'must not shadow a template root',
      'workflow[0].loop.mode': expect.stringMatching(/got "sideways"/),
      'workflow[0].loop.max_in_flight': 'must be >= 1',
      'workflow[0].next[0].step': 'is required',
      'workflow[0].next[0].stepp': "unknown field 'stepp' (did you mean 'step'?)",
      'workflow[1].tool.retry.attempts': 'must be >= 1',
    });
    expect(problems).toHaveLength(13);
  });

  it('names every unknown field of a mapping, each with its closest known one and its place (valibot stops at the first)', () => {
    const text = `apiVersion: svc/v1
kind: Playbook
metadata: { name: a4, path: audit/a4 }
workflw: []
priorty: 1
concurency: 2
inputs: { who: { type: string, requird: true, defualt: x, descripton: y, enm: [x] } }
workflow:
  - step: start
    nxt: x
    lop: y
    tool: { name: n, kind: http, url: "http://x", mehtod: GET, heders: {} }
`;
    const problems = problemsOf(text);
    expect(Object.fromEntries(problems.map((p) => [p.path, p.message]))).toEqual({
      workflw: "unknown field 'workflw' (did you mean 'workflow'?)",
      priorty: "unknown field 'priorty' (did you mean 'priority'?)",
      concurency: "unknown field 'concurency' (did you mean 'concurrency'?)",
      'inputs.who.requird': "unknown field 'requird' (did you mean 'required'?)",
      'inputs.who.defualt': "unknown field 'defualt' (did you mean 'default'?)",
      'inputs.who.descripton': "unknown field 'descripton' (did you mean 'description'?)",
      'inputs.who.enm': "unknown field 'enm' (did you mean 'enum'?)",
      'workflow[0].nxt': "unknown field 'nxt' (did you mean 'next'?)",
      'workflow[0].lop': "unknown field 'lop' (did you mean 'loop'?)",
      'workflow[0].tool.mehtod': "unknown field 'mehtod' (did you mean 'method'?)",
      'workflow[0].tool.heders': "unknown field 'heders' (did you mean 'headers'?)",
    });
    const parsed = parsePlaybook(text);
    expect(!parsed.ok && parsed.problems.find((p) => p.path === 'workflow[0].tool.heders')).toMatchObject({ line: 12, column: 64 });
  });

  it('lists shape and cross-reference problems together, each with its path', () => {
    // An unknown kind makes the shape invalid; the duplicate step, the duplicate task, the arc to
    // a missing step and the mcp call without a tool must still be reported with it.
    const problems = problemsOf(`${header}workflow:
  - step: a
    tool: [ { name: t, kind: ftp }, { name: t, kind: mcp, method: tools/call } ]
    next: [ { step: nowhere }, a ]
  - step: a
    next: { arcs: [gone] }
`);
    expect(problems).toEqual([
      { path: 'workflow[0].tool[0].kind', message: expect.stringMatching(/got "ftp"/) },
      { path: 'workflow[1].step', message: "duplicate step name 'a' (first at workflow[0])" },
      { path: 'workflow[0].tool[1].name', message: "duplicate task name 't' in step 'a' (first at tool[0])" },
      { path: 'workflow[0].tool[1].tool', message: 'is required when method is tools/call' },
      { path: 'workflow[0].next[0].step', message: "arc to unknown step 'nowhere'" },
      { path: 'workflow[1].next.arcs[0]', message: "arc to unknown step 'gone'" },
    ]);
  });

  it('lists the inputs\' problems (workload defaults, triggers every fire of which is refused) with the shape problems of other blocks', () => {
    const problems = problemsOf(`${header}inputs:
  retries: { type: integer }
  mode: { type: string }
workload: { retries: "3" }
triggers:
  - { name: nightly, kind: schedule, cron: "0 2 * * *" }
workflow:
  - step: a
    tool: { name: t, kind: ftp }
`);
    expect(problems.map((p) => p.path)).toEqual(['workflow[0].tool.kind', 'workload.retries', 'triggers[0].payload']);
    // A block the inputs' checks read that is malformed itself: its own problem, not theirs.
    expect(problemsOf(`${header}inputs: { retries: { type: integr } }
workload: { retries: "3" }
workflow:
  - step: a
`).map((p) => p.path)).toEqual(['inputs.retries.type']);
  });

  it('skips malformed parts in the cross-reference checks (the shape check names them)', () => {
    const problems = problemsOf(`${header}keychain: { k: 1 }
workflow:
  - step: [not, a, name]
    tool: just text
    next: { arcs: nope }
  - 42
  - step: b
    next: [ 7, { when: x }, { step: b } ]
`);
    expect(problems.map((p) => p.path)).toEqual([
      'keychain',
      'workflow[0].step',
      'workflow[0].tool',
      'workflow[0].next.arcs',
      'workflow[1]',
      'workflow[2].next[0]',
      'workflow[2].next[1].step',
    ]);
  });

  it('refuses an alias bomb before anything walks the expanded value', () => {
    const text = aliasBomb(6);
    expect(text.length).toBeLessThan(1000);
    const t0 = performance.now();
    const problems = problemsOf(text);
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(problems).toEqual([{ path: '$', message: 'document expands to more than 100000 nodes (YAML aliases?)' }]);
  });

  it('refuses a document that refers to itself', () => {
    expect(problemsOf(`${header}workload: &w { again: *w }
workflow: [ { step: a } ]
`)).toEqual([
      { path: '$', message: expect.stringMatching(/^document expands to more than \d+ nodes \(YAML aliases\?\)$/) },
    ]);
  });

  it('accepts a modest use of aliases', () => {
    const playbook = parseOk(`${header}workload: { base: &b { url: "http://x", n: 1 }, again: *b }
workflow: [ { step: a } ]
`);
    expect(playbook.workload.again).toEqual({ url: 'http://x', n: 1 });
  });
});

/** Ten strings, then `levels` lists of ten aliases each to the list before: 10^(levels+1) strings. */
function aliasBomb(levels: number): string {
  const lines = [header.trimEnd(), 'workload:', '  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]'];
  for (let i = 1; i <= levels; i++) lines.push(`  l${i}: &l${i} [${Array.from({ length: 10 }, () => `*l${i - 1}`).join(', ')}]`);
  lines.push('workflow: [ { step: start, tool: { kind: noop } } ]', '');
  return lines.join('\n');
}

describe('parsePlaybook: templates', () => {
  it('reports every template that cannot render, at its field: syntax, unknown filter or test, unsupported tags', () => {
    const problems = problemsOf(`${header}keychain:
  - { name: k, kind: http, endpoint: "{{ workload.url | nope }}" }
workflow:
  - step: start
    tool:
      name: "{{ not rendered"
      kind: shell
      command: "echo {{ workload.who }"
      env: { A: ["ok", "{{ x is nothing }}"] }
      retry: { attempts: 2, when: "outcome.status ==" }
    next:
      - { step: loop, when: "outcome.data | shout", set: { "a b": "{% include 'x' %}" } }
  - step: loop
    loop: { in: "{{ workload.items | nope }}" }
    tool:
      - { kind: noop }
      - { kind: shell, command: "{{ workload.who | nope }}" }
    next: { mode: inclusive, arcs: [ { step: start, when: "{{ 1 }}{% endif %}" } ], }
  - step: pause
    wait: { until: "{{ workload.at | bogusfilter }}" }
`);
    expect(problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
      'workflow[0].tool.command: expected variable end (line 1, column 22)',
      "workflow[0].tool.env.A[1]: unknown test 'nothing' (line 1, column 9)",
      'workflow[0].tool.retry.when: unexpected token: }} (line 1, column 22)',
      "workflow[0].next[0].when: unknown filter 'shout' (line 1, column 19)",
      `workflow[0].next[0].set["a b"]: 'include' is not supported in playbook templates (line 1, column 4)`,
      "workflow[1].tool[1].command: unknown filter 'nope' (line 1, column 19)",
      "workflow[1].loop.in: unknown filter 'nope' (line 1, column 21)",
      'workflow[1].next.arcs[0].when: unknown block tag: endif (line 1, column 11)',
      "workflow[2].wait.until: unknown filter 'bogusfilter' (line 1, column 18)",
      "keychain[0].endpoint: unknown filter 'nope' (line 1, column 19)",
    ]);
  });

  it('checks the target and the bounds of a slice for undefined reads; a defaulted slice is exempt', () => {
    const problems = problemsOf(`${header}workload: { s: abc }
workflow:
  - step: start
    tool: { kind: shell, command: "echo {{ steps.nope.result[:3] }} {{ workload.s[:nn] }} {{ steps.gone.result[1:] | default('') }} {{ workload.s[1:] }}" }
`);
    expect(problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
      "workflow[0].tool.command: 'steps.nope' is undefined: there is no step 'nope'",
      "workflow[0].tool.command: 'nn' is undefined",
    ]);
  });

  it('a read where an enclosing condition tested it defined is not undefined; the same read unguarded is', () => {
    const problems = problemsOf(`${header}workload: { s: abc }
workflow:
  - step: start
    tool:
      kind: shell
      command: >-
        {{ vars.page if vars.page is defined else 1 }}
        {% if workload.extra is defined and vars.n is defined %}{{ workload.extra }}{{ vars.n }}{% endif %}
        {% if vars.m is undefined %}none{% else %}{{ vars.m }}{% endif %}
        {{ vars.k is defined and vars.k > 1 }}
        {{ vars.page }}
`);
    expect(problems.map((p) => `${p.path}: ${p.message}`)).toEqual(["workflow[0].tool.command: 'vars.page' is undefined: no arc sets 'page' (use | default(...) for what may be absent)"]);
  });

  it('accepts the whole language, and leaves alone what is never rendered: workload, names, metadata', () => {
    const playbook = parseOk(`${header}workload: { greeting: "{{ not | a template }}", who: w, verb: v, h: 1, method: m, ok: true, t: 1, tool: x, arguments: {} }
workflow:
  - step: start
    desc: "{{ also not rendered"
    tool:
      - name: "{{ x"
        kind: shell
        command: >-
          {% macro q(v) %}{{ v | quote }}{% endmacro %}
          {% for k, v in workload | dictsort if k is string %}{{ loop.index }}={{ q(v) }}{% else %}none{% endfor %}
          {% set ns = namespace(n=0) %}{{ range(3) | map('string') | join(',') }} {{ ns.n }} {{ workload.who.upper() }} {{ workload.who[1:-1:2] }}
    next: [ { step: start, when: "vars.n is not defined and (vars.n or 0) < 2", set: { n: "{{ (vars.n or 0) + 1 }}" } } ]
`);
    expect(playbook.workflow[0].tasks[0].name).toBe('{{ x');
  });
});

describe('templated task fields', () => {
  const mcpTask = (fields: string) => `${header}workflow:\n  - step: a\n    tool: { kind: mcp, server: s, ${fields} }\n`;

  it('accepts any field of a task as a template; the worker checks what it renders to', () => {
    const result = parsePlaybook(mcpTask('method: "{{ workload.method }}", tool: "{{ workload.tool }}", arguments: "{{ workload.arguments }}", timeout_seconds: "{{ workload.t }}"'));
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.playbook.workflow[0].tasks[0]).toMatchObject({ method: '{{ workload.method }}', arguments: '{{ workload.arguments }}' });
    const http = parsePlaybook(`${header}workflow:\n  - step: a\n    tool: { kind: http, url: "http://x", method: "{{ workload.verb }}", headers: "{{ workload.h }}", accept_status: "{{ workload.ok }}" }\n`);
    expect(http.ok).toBe(true);
  });

  it('still checks literal values, naming the field', () => {
    expect(problemsOf(mcpTask('method: tools/destroy'))).toEqual([{ path: 'workflow[0].tool.method', message: expect.stringMatching(/^must be one of .*tools\/list.*got "tools\/destroy"$/) }]);
    expect(problemsOf(mcpTask('method: tools/list, arguments: 5'))).toEqual([{ path: 'workflow[0].tool.arguments', message: expect.stringContaining('expected') }]);
  });

  it('still checks the syntax of a templated field', () => {
    expect(problemsOf(mcpTask('method: "{{ workload.method "'))).toEqual([{ path: 'workflow[0].tool.method', message: expect.any(String) }]);
  });
});
