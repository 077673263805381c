-- Sessions of `svc gateway` (docs/gateway.md, "Sessions"), shared by every gateway on this database:
-- a browser signed in through one is signed in at all of them, and through a gateway's restart.
-- The cookie's value is the secret and is never stored: a row is found by its SHA-256 (the value
-- holds 256 random bits, so a fast hash is safe). What a row keeps that the provider issued (the
-- ID token, for the logout's `id_token_hint`) is sealed (src/crypto/seal.ts) with a key derived
-- from the cookie's value, so the table alone opens nothing. Expiry is on the database's clock:
-- `expires_at` (idle; moved forward by use, never past `max_expires_at`, the absolute end).
-- Written by the gateways (src/db/gateway-session.repo.ts), which need only these two tables
-- (docs/gateway.md gives the grants); the SQL reader role gets no grant on them.
CREATE TABLE core.gateway_session (
  id_hash         text PRIMARY KEY CHECK (id_hash ~ '^[0-9a-f]{64}$'),
  sub             text NOT NULL,
  name            text,
  email           text,
  role            text CHECK (role IN ('viewer', 'operator', 'admin')),
  -- Playbook path patterns the person may start; NULL: not restricted.
  paths           text[],
  id_token        text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  expires_at      timestamptz NOT NULL,
  max_expires_at  timestamptz NOT NULL,
  CHECK (expires_at <= max_expires_at)
);
-- Revocation of a person's sessions (`svc gateway revoke SUB`), and the sweep of expired rows.
CREATE INDEX gateway_session_sub ON core.gateway_session (sub);
CREATE INDEX gateway_session_expires ON core.gateway_session (expires_at);

-- Logins in progress (/auth/login to /auth/callback, which may reach another gateway): the whole
-- pending login (PKCE verifier, state, nonce, return address, origin) sealed with a key derived
-- from the login cookie's value, found by its SHA-256; taken once.
CREATE TABLE core.gateway_login (
  id_hash     text PRIMARY KEY CHECK (id_hash ~ '^[0-9a-f]{64}$'),
  sealed      text NOT NULL,
  expires_at  timestamptz NOT NULL
);
CREATE INDEX gateway_login_expires ON core.gateway_login (expires_at);
