-- A rate's period is at least a millisecond (src/api/limits.ts): a period near zero (1e-306 s)
-- overflowed float8 in the claim's refill (elapsed * rate_limit / period_seconds), and that one
-- statement hands out every command, so no worker claimed anything. A limit stored before the
-- API refused such a period gets the shortest one it takes now; the table refuses it from here on.
UPDATE core.flow_limit SET period_seconds = 0.001, updated_at = now() WHERE period_seconds < 0.001;
ALTER TABLE core.flow_limit ADD CONSTRAINT flow_limit_period_floor CHECK (period_seconds >= 0.001);
