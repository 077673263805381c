-- API tokens of SVC_AUTH=token (`svc token create|list|revoke`). Only the SHA-256 of a token is
-- stored (a token holds 256 random bits, so a fast hash is safe and costs nothing per request);
-- `prefix`, its first characters, tells tokens apart in listings. A revoked token keeps its row,
-- so a listing says when it stopped working, and its name stays taken. The SQL reader role of
-- POST /api/postgres/execute gets no grant on this table.
CREATE TABLE core.api_token (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name          text NOT NULL UNIQUE CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$'),
  role          text NOT NULL CHECK (role IN ('viewer', 'operator', 'admin')),
  hash          text NOT NULL UNIQUE CHECK (hash ~ '^[0-9a-f]{64}$'),
  prefix        text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_used_at  timestamptz,
  revoked_at    timestamptz
);
