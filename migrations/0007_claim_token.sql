-- The request that claimed a command (a worker's report with claim-ahead, or its long-poll claim).
-- A server can commit a claim and die before its answer reaches the worker; the worker sends the
-- request again with the same token and gets those commands back instead of leaving them claimed
-- by nobody who knows it. Not indexed: looked up by worker_id among its few claimed commands.
ALTER TABLE core.command ADD COLUMN claim_token text;
