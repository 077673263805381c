// Browser sessions and logins in progress, kept in PostgreSQL and shared by every gateway on the
// database (docs/gateway.md, "Sessions"): another gateway behind the load balancer, or this one
// restarted, knows them. The cookie carries only a random id, which is the secret: rows are found
// by its SHA-256, and what they keep that must stay secret (the provider's ID token, a login's
// PKCE verifier) is sealed under a key derived from the id, so the table alone opens nothing.
// Nothing is cached here: each request asks the database, so a logout or a revocation counts at
// once on every gateway.
import { createHash, hkdfSync, randomBytes } from 'node:crypto';
import { isRole, type Role } from '../auth/roles.ts';
import { createKeyring, type Keyring } from '../crypto/keyring.ts';
import { gatewaySessionAad, open, seal } from '../crypto/seal.ts';
import {
  deleteGatewaySession,
  gatewaySessionIsLive,
  insertGatewayLogin,
  insertGatewaySession,
  takeGatewayLogin,
  useGatewaySession,
  type GatewaySessionRow,
} from '../db/gateway-session.repo.ts';
import type { Queryable } from '../db/queryable.ts';

export type Session = {
  sub: string;
  name: string | null;
  email: string | null;
  role: Role | null;
  /** Playbook path patterns the person may start; null: not restricted. */
  paths: string[] | null;
};

/** A session as login starts it: with the provider's ID token, kept (sealed) for its logout's `id_token_hint`. */
export type NewSession = Session & { idToken: string | undefined };

/** A login in progress: what the callback checks (PKCE verifier, state, nonce) and where to go after. */
export type PendingLogin = { codeVerifier: string; state: string; nonce: string; returnTo: string; origin: string };

/** How long a login may take at the provider, in ms. */
export const LOGIN_TTL_MS = 10 * 60_000;
/** A session in use has its row written at most once per this long (or per a tenth of its idle time, when shorter). */
export const SESSION_RENEW_STEP_MS = 60_000;

/** Ids are 256 random bits, base64url: 43 characters. Anything else a cookie holds is not one (and costs no query). */
const ID_PATTERN = /^[A-Za-z0-9_-]{43}$/;
const newId = (): string => randomBytes(32).toString('base64url');

/** The row key of a cookie's value: its SHA-256, hex. */
export const sessionIdHash = (id: string): string => createHash('sha256').update(id).digest('hex');

type Kind = 'session' | 'login';

// The key that seals what a row keeps: derived from the cookie's value, which only the browser holds.
const keyringOf = (id: string, kind: Kind): Keyring => createKeyring(Buffer.from(hkdfSync('sha256', id, '', `svc gateway ${kind}`, 32)), []);

function opened(id: string, kind: Kind, idHash: string, sealed: string): unknown {
  try {
    return open(keyringOf(id, kind), sealed, gatewaySessionAad(kind, idHash));
  } catch {
    return undefined; // not ours (a row written otherwise): as good as none
  }
}

const sessionOf = (row: GatewaySessionRow): Session => ({
  sub: row.sub,
  name: row.name,
  email: row.email,
  role: isRole(row.role) ? row.role : null,
  paths: row.paths,
});

export class SessionStore {
  readonly #db: Queryable;
  readonly #idleMs: number;
  readonly #maxMs: number;

  constructor(db: Queryable, idleMs: number, maxMs: number) {
    this.#db = db;
    this.#idleMs = idleMs;
    this.#maxMs = maxMs;
  }

  /** Starts a session; returns its id (the cookie value). */
  async create(fields: NewSession): Promise<string> {
    const id = newId();
    const idHash = sessionIdHash(id);
    const { idToken, ...session } = fields;
    const sealed = idToken === undefined ? null : seal(keyringOf(id, 'session'), idToken, gatewaySessionAad('session', idHash));
    await insertGatewaySession(this.#db, { ...session, idHash, idToken: sealed, idleMs: this.#idleMs, maxMs: this.#maxMs });
    return id;
  }

  /**
   * The live session of `id`, renewed (its idle expiry moved forward, never past its maximum
   * age), or undefined when unknown, expired or ended.
   */
  async touch(id: string | undefined): Promise<Session | undefined> {
    if (!id || !ID_PATTERN.test(id)) return undefined;
    const row = await useGatewaySession(this.#db, sessionIdHash(id), this.#idleMs, Math.min(SESSION_RENEW_STEP_MS, this.#idleMs / 10));
    return row ? sessionOf(row) : undefined;
  }

  /** True while the session of `id` is live (not logged out, revoked or expired); it is not renewed. */
  async isLive(id: string): Promise<boolean> {
    return ID_PATTERN.test(id) && gatewaySessionIsLive(this.#db, sessionIdHash(id));
  }

  /** Ends a session on every gateway; its subject and ID token (for the provider's logout) when it existed. */
  async end(id: string | undefined): Promise<{ sub: string; idToken: string | undefined } | undefined> {
    if (!id || !ID_PATTERN.test(id)) return undefined;
    const idHash = sessionIdHash(id);
    const row = await deleteGatewaySession(this.#db, idHash);
    if (!row) return undefined;
    const idToken = row.id_token === null ? undefined : opened(id, 'session', idHash, row.id_token);
    return { sub: row.sub, idToken: typeof idToken === 'string' ? idToken : undefined };
  }

  /** Remembers a login in progress; returns its id (the login cookie's value). */
  async beginLogin(login: PendingLogin): Promise<string> {
    const id = newId();
    const idHash = sessionIdHash(id);
    await insertGatewayLogin(this.#db, idHash, seal(keyringOf(id, 'login'), login, gatewaySessionAad('login', idHash)), LOGIN_TTL_MS);
    return id;
  }

  /** Takes (once, on any gateway) the login in progress of `id`, unless unknown or expired. */
  async takeLogin(id: string | undefined): Promise<PendingLogin | undefined> {
    if (!id || !ID_PATTERN.test(id)) return undefined;
    const idHash = sessionIdHash(id);
    const sealed = await takeGatewayLogin(this.#db, idHash);
    return sealed === undefined ? undefined : (opened(id, 'login', idHash, sealed) as PendingLogin | undefined);
  }
}
