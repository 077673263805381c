// A parallel loop that failed lets its running items finish, and how they end changes only its
// result's data: the path search explored each of them ok and error (2^n endings), so a loop of
// ten literal items passed the search's budget, and registering it warned 'too many paths to check
// them all' (and took 0.3-0.4 s of the server's thread). Each item before the first failure is
// still explored ok and error.
import { describe, expect, it } from 'vitest';
import { playbookFromYaml, playbookPaths, playbookWarnings } from '../../../machines/simulate-playbook.ts';

const playbook = (items: number, kind: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: fan, path: audit/fan }
workflow:
  - step: each
    loop: { in: ${JSON.stringify(Array.from({ length: items }, (_, i) => i))}, iterator: n, mode: parallel }
    tool: { name: t, ${kind} }
    next:
      - { step: tidy, when: "{{ outcome.status == 'error' }}" }
      - { step: done }
  - step: tidy
  - step: done
`;

describe('paths of a parallel loop', () => {
  it.each([
    ['http', "kind: http, url: 'http://127.0.0.1:9/'"],
    ['playbook', 'kind: playbook, path: audit/child'],
  ])('of 14 %s items: every path checked, each ending reached, no warning', (_, kind) => {
    const pb = playbookFromYaml(playbook(14, kind));
    expect(playbookWarnings(pb)).toEqual([]);
    const report = playbookPaths(pb);
    expect(report.truncated).toBe(false);
    expect(report.unreachable).toEqual([]);
    const ends = new Set(report.paths.map((p) => `${p.status} ${p.path.join(' → ')}`));
    expect(ends).toEqual(new Set(['completed each → done', 'completed each → tidy']));
    // The first failure at each item, or none: 15 paths.
    expect(report.paths).toHaveLength(15);
  });
});
