-- A retry (POST /api/executions/{id}/retry) names the execution it retries in its
-- `execution.started` context (`retry_of`); the old execution's `retried_as` is read through this
-- small partial index (only retries' start events are in it).
CREATE INDEX event_retry_of_idx ON core.event ((context->>'retry_of'))
  WHERE event_type = 'execution.started' AND context ? 'retry_of';
