-- An optional lifetime for API tokens (`svc token create --expires-in|--expires-at`): past
-- expires_at a token is refused as a revoked one is (src/api/api-token-cache.ts). NULL is never,
-- so every token made before this keeps working as it did. The CHECK keeps a lifetime positive;
-- rows without one pass it, so adding the column rewrites and refuses nothing.
ALTER TABLE core.api_token
  ADD COLUMN expires_at timestamptz,
  ADD CONSTRAINT api_token_expires_after_creation CHECK (expires_at IS NULL OR expires_at > created_at);
