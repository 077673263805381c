// Browser sessions, held in this process (a restart logs everyone out; see docs/gateway.md). The
// cookie carries only a random id; what the session knows stays here.
import { randomBytes } from 'node:crypto';
import type { Role } from '../auth/roles.ts';

export type Session = {
  sub: string;
  name: string | null;
  email: string | null;
  role: Role | null;
  roles: string[];
  /** Playbook path patterns the person may start; null: not restricted. */
  paths: string[] | null;
  /** The provider's ID token, kept for its logout (`id_token_hint`); never sent to the browser. */
  idToken: string | undefined;
  createdAt: number;
  expiresAt: number;
};

/** A login in progress: what the callback checks (PKCE verifier, state, nonce) and where to go after. */
export type PendingLogin = { codeVerifier: string; state: string; nonce: string; returnTo: string; origin: string; expiresAt: number };

/** How long a login may take at the provider, in ms. */
export const LOGIN_TTL_MS = 10 * 60_000;
/** Bounds on what the maps hold, so a flood of logins cannot exhaust memory. */
const MAX_PENDING_LOGINS = 10_000;
const MAX_SESSIONS = 100_000;

const newId = (): string => randomBytes(32).toString('base64url');

export class SessionStore {
  readonly #sessions = new Map<string, Session>();
  readonly #pending = new Map<string, PendingLogin>();

  readonly #idleMs: number;
  readonly #maxMs: number;
  readonly #now: () => number;

  constructor(idleMs: number, maxMs: number, now: () => number = Date.now) {
    this.#idleMs = idleMs;
    this.#maxMs = maxMs;
    this.#now = now;
  }

  /** Starts a session; returns its id (the cookie value). */
  create(fields: Omit<Session, 'createdAt' | 'expiresAt'>): string {
    this.#sweep(this.#sessions, MAX_SESSIONS);
    const id = newId();
    const t = this.#now();
    this.#sessions.set(id, { ...fields, createdAt: t, expiresAt: Math.min(t + this.#idleMs, t + this.#maxMs) });
    return id;
  }

  /**
   * The live session of `id`, renewed (its idle expiry moved forward, never past createdAt +
   * maxMs), or undefined when unknown or expired (then forgotten).
   */
  touch(id: string | undefined): Session | undefined {
    if (!id) return undefined;
    const s = this.#sessions.get(id);
    if (!s) return undefined;
    const t = this.#now();
    if (s.expiresAt <= t) {
      this.#sessions.delete(id);
      return undefined;
    }
    s.expiresAt = Math.min(t + this.#idleMs, s.createdAt + this.#maxMs);
    return s;
  }

  /** Ends a session server-side; returns it (for the provider's logout) when it existed. */
  end(id: string | undefined): Session | undefined {
    if (!id) return undefined;
    const s = this.#sessions.get(id);
    this.#sessions.delete(id);
    return s;
  }

  /** Remembers a login in progress; returns its id (the login cookie's value). */
  beginLogin(login: Omit<PendingLogin, 'expiresAt'>): string {
    this.#sweep(this.#pending, MAX_PENDING_LOGINS);
    const id = newId();
    this.#pending.set(id, { ...login, expiresAt: this.#now() + LOGIN_TTL_MS });
    return id;
  }

  /** Takes (once) the login in progress of `id`, unless unknown or expired. */
  takeLogin(id: string | undefined): PendingLogin | undefined {
    if (!id) return undefined;
    const p = this.#pending.get(id);
    this.#pending.delete(id);
    return p && p.expiresAt > this.#now() ? p : undefined;
  }

  get size(): number {
    return this.#sessions.size;
  }

  // Drops expired entries when the map is full; when still full, the oldest (Map order).
  #sweep<T extends { expiresAt: number }>(map: Map<string, T>, max: number): void {
    if (map.size < max) return;
    const t = this.#now();
    for (const [k, v] of map) if (v.expiresAt <= t) map.delete(k);
    for (const k of map.keys()) {
      if (map.size < max) break;
      map.delete(k);
    }
  }
}
