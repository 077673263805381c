import { describe, expect, it } from 'vitest';
import { canEnter } from '../../../src/db/data-dir-access.ts';

const postgres = { name: 'postgres', uid: 101, gid: 104 };

describe('canEnter (the x bit that applies to PostgreSQL spawned as its own user)', () => {
  it('takes the owner bit for the owner, the group bit for the group, else the other bit', () => {
    expect(canEnter({ uid: 0, gid: 0, mode: 0o40700 }, postgres)).toBe(false); // mktemp -d as root
    expect(canEnter({ uid: 0, gid: 0, mode: 0o40711 }, postgres)).toBe(true);
    expect(canEnter({ uid: 101, gid: 0, mode: 0o40700 }, postgres)).toBe(true);
    expect(canEnter({ uid: 101, gid: 104, mode: 0o40077 }, postgres)).toBe(false); // owner bits decide for the owner
    expect(canEnter({ uid: 0, gid: 104, mode: 0o40710 }, postgres)).toBe(true);
    expect(canEnter({ uid: 0, gid: 104, mode: 0o40701 }, postgres)).toBe(false); // group bits decide for the group
  });

  it('counts a user yet to be made (no ids) as other', () => {
    const unmade = { name: 'postgres', uid: -1, gid: -1 };
    expect(canEnter({ uid: 0, gid: 0, mode: 0o40755 }, unmade)).toBe(true);
    expect(canEnter({ uid: 0, gid: 0, mode: 0o40750 }, unmade)).toBe(false);
  });
});
