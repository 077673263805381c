-- Labels given at start (POST /api/run/playbook {labels}), kept in the execution.started
-- context like its trigger and requester, and filtered on by GET /api/executions?label=key:value
-- through this index (only started events with labels are in it).
CREATE INDEX event_started_labels_idx ON core.event USING gin ((context -> 'labels') jsonb_path_ops)
  WHERE event_type = 'execution.started' AND context ? 'labels';
