-- Why a NATS trigger is not consuming (its credential, server or stream), as a server last found
-- it, and since when; NULL while it consumes. The listing shows it (GET /api/triggers,
-- svc triggers list): a subscription that cannot start otherwise looks active with no fires, its
-- reason in the servers' logs only. Written by src/triggers/nats-subscriptions.ts on a change only.
ALTER TABLE core.trigger ADD COLUMN subscription_problem text, ADD COLUMN subscription_problem_at timestamptz;
