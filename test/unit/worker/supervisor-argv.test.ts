import { isAbsolute } from 'node:path';
import { describe, expect, it } from 'vitest';
import { supervisorArgv, WATCHDOG_NOTE } from '../../../src/worker/tools/supervisor-argv.ts';

const program = ['/usr/bin/prlimit', '--cpu=1:2', '--', '/bin/sh', '-c', 'WRAPPER', 'sh'];

describe('supervisorArgv', () => {
  it('without a deadline: the script, the shield flag, three empty places (no watchdog), then the program', () => {
    const [sh, c, script, name, ...rest] = supervisorArgv(program, { graceMs: 5_000 });
    expect([sh, c, name]).toEqual(['/bin/sh', '-c', 'svc-shell']);
    expect(rest).toEqual(['0', '', '', '', ...program]);
    expect(script).toContain('exec "$@"');
  });

  it('with a deadline: its seconds, the absolute path of sleep and the grace period, as positional parameters', () => {
    const argv = supervisorArgv(program, { shieldTerm: true, deadlineMs: 1_500, graceMs: 5_000 });
    const [shield, deadline, sleep, grace, ...rest] = argv.slice(4);
    expect([shield, deadline, grace]).toEqual(['1', '1.500', '5.000']);
    expect(isAbsolute(sleep)).toBe(true);
    expect(sleep).toMatch(/\/sleep$/);
    expect(rest).toEqual(program);
  });

  it('writes seconds as plain decimals to the millisecond (never an exponent), at least 1 ms', () => {
    const deadline = (ms: number) => supervisorArgv([], { deadlineMs: ms, graceMs: 5_000 })[5];
    expect(deadline(1_000.2)).toBe('1.001');
    expect(deadline(1e-9)).toBe('0.001');
    expect(deadline(0)).toBe('0.001');
    expect(deadline(2 ** 31 - 1 + 500)).toBe('2147484.147');
  });

  it('puts nothing into the script: it is the same text whatever the deadline, the program or its arguments', () => {
    const script = (argv: string[], deadlineMs?: number) => supervisorArgv(argv, { deadlineMs, graceMs: 5_000 })[2];
    const plain = script(program);
    expect(script(['/bin/sh', '-c', 'echo $(id)'], 7_250)).toBe(plain);
    expect(plain).not.toMatch(/7\.250|5\.000/);
    // The watchdog notes its deadline on fd 4 before it signals the group, then kills it.
    expect(plain).toContain(`echo ${WATCHDOG_NOTE} >&4; kill -TERM 0;`);
    expect(plain).toContain('kill -KILL 0; fi;');
  });
});
