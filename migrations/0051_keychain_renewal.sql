-- Who is making (or renewing) a keychain entry right now: one row per cache key, taken by the
-- first worker that finds the entry missing or expired, so the others wait for its token instead
-- of each asking the token endpoint for one of their own (a stampede that wrote different tokens,
-- the last one winning). A lease, not a lock: a holder that dies frees the key when it expires.
-- No secret here: the holder's lease id only.
CREATE TABLE core.keychain_renewal (
  cache_key   text PRIMARY KEY,
  lease_id    uuid NOT NULL,
  expires_at  timestamptz NOT NULL
);
