-- The worker report that last moved a command (its request's report_id), so that the same report
-- sent again after its answer was lost is recognised and stored once, not a second time as a late
-- report of the same attempt (actors/route-report.ts). Null: moved by no report that named itself.
-- A column without a default: no table rewrite.
ALTER TABLE core.command ADD COLUMN report_id text;
