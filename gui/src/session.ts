import { createContext, useContext } from 'react';
import type { RuntimeConfig } from './api.ts';

export type Role = 'viewer' | 'operator' | 'admin';
export type User = { sub: string; name: string | null; email: string | null; roles: string[] };

/** Who uses the console and what the server lets them do (roles from the gateway's /auth/me). */
export type Session = { config: RuntimeConfig; user: User | null; logout: () => void };

export const SessionContext = createContext<Session | null>(null);

const RANK: Record<Role, number> = { viewer: 1, operator: 2, admin: 3 };

/**
 * True when the session may do what needs `role`. Without known roles (SVC_AUTH none, or an API
 * token whose role the console is not told) everything is shown and the server decides.
 */
export function useCan(role: Role): boolean {
  const session = useContext(SessionContext);
  const roles = session?.user?.roles;
  if (!roles) return true;
  return roles.some((r) => r in RANK && RANK[r as Role] >= RANK[role]);
}

/**
 * Whether the session may answer a wait whose `approval_roles` are these (null: any operator; else
 * a role at least one of them), and why not. Without known roles the form is offered and the
 * server decides (403 shown).
 */
export function useMayApprove(approvalRoles: string[] | null): { ok: true } | { ok: false; reason: string } {
  const session = useContext(SessionContext);
  const roles = session?.user?.roles;
  if (!roles) return { ok: true };
  const mine = roles.filter((r): r is Role => r in RANK);
  const you = `you are ${roles.join(', ') || 'without a role'}`;
  if (approvalRoles === null) {
    return mine.some((r) => RANK[r] >= RANK.operator) ? { ok: true } : { ok: false, reason: `Sending a signal needs the operator role; ${you}.` };
  }
  const meets = (needed: string) => roles.includes(needed) || (needed in RANK && mine.some((r) => RANK[r] >= RANK[needed as Role]));
  if (approvalRoles.some(meets)) return { ok: true };
  return { ok: false, reason: approvalRoles.length ? `This approval needs the role ${approvalRoles.join(' or ')}; ${you}.` : 'No role may answer this approval.' };
}

export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error('no session');
  return s;
}
