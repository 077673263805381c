// Roles of API callers, each including the ones before it.

/** API token roles, each including the ones before it. */
export const ROLES = ['viewer', 'operator', 'admin'] as const;
export type Role = (typeof ROLES)[number];

const RANK: Readonly<Record<Role, number>> = { viewer: 0, operator: 1, admin: 2 };

/** True when `role` includes `needed` (admin includes operator includes viewer). */
export function roleAtLeast(role: Role, needed: Role): boolean {
  return RANK[role] >= RANK[needed];
}

/** Who may send a signal to a waiting step when its `approval` names no roles. */
export const DEFAULT_SIGNAL_ROLES: readonly Role[] = ['operator'];

/** True when a caller of `role` may send a signal to a step whose `approval.roles` are `roles` (null: DEFAULT_SIGNAL_ROLES). */
export function admitsSignal(roles: readonly Role[] | null, role: Role | null | undefined): boolean {
  return (roles ?? DEFAULT_SIGNAL_ROLES).some((needed) => role != null && roleAtLeast(role, needed));
}

/** True when `value` names a role (for input from tokens, assertions and the command line). */
export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && Object.hasOwn(RANK, value);
}
