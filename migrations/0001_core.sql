-- The core schema: catalog, event log, execution projection, commands, credentials, keychain,
-- resources, runtimes (workers and leases) and transient per-execution data.

CREATE SCHEMA IF NOT EXISTS core;

CREATE TABLE core.catalog (
  catalog_id  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  path        text NOT NULL CHECK (path <> ''),
  version     integer NOT NULL CHECK (version > 0),
  kind        text NOT NULL DEFAULT 'playbook',
  content     text NOT NULL,
  payload     jsonb NOT NULL,           -- the parsed, normalized playbook
  created_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (path, version)
);
CREATE INDEX catalog_kind_idx ON core.catalog (kind, path);

CREATE SEQUENCE core.execution_id_seq AS bigint;

-- Projection of the event log plus the machine snapshot it was folded into.
CREATE TABLE core.execution (
  execution_id        bigint PRIMARY KEY,
  catalog_id          bigint NOT NULL REFERENCES core.catalog (catalog_id),
  path                text NOT NULL,
  parent_execution_id bigint REFERENCES core.execution (execution_id),
  root_execution_id   bigint NOT NULL,
  parent_command_id   bigint,
  status              text NOT NULL DEFAULT 'running'
                      CHECK (status IN ('running', 'completed', 'failed', 'cancelled')),
  progress            numeric(5, 2) NOT NULL DEFAULT 0 CHECK (progress BETWEEN 0 AND 100),
  result              jsonb,
  error               jsonb,
  snapshot            jsonb,            -- execution machine snapshot, folded through snapshot_event_id
  machine_version     integer NOT NULL DEFAULT 0,
  snapshot_event_id   bigint NOT NULL DEFAULT 0,
  last_event_id       bigint NOT NULL DEFAULT 0,
  started_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now(),
  finished_at         timestamptz
);
CREATE INDEX execution_status_idx ON core.execution (status, started_at);
CREATE INDEX execution_path_idx ON core.execution (path, execution_id DESC);
CREATE INDEX execution_parent_idx ON core.execution (parent_execution_id) WHERE parent_execution_id IS NOT NULL;

-- The append-only event log. event_id increases per execution.
CREATE TABLE core.event (
  execution_id  bigint NOT NULL,
  event_id      bigint NOT NULL,
  catalog_id    bigint NOT NULL,
  event_type    text NOT NULL,
  status        text NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'cancelled')),
  step          text,
  command_id    bigint,
  worker_id     text,
  context       jsonb,
  result        jsonb,
  error         jsonb,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (execution_id, event_id)
);
CREATE INDEX event_type_idx ON core.event (event_type, created_at);

CREATE TABLE core.command (
  command_id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  execution_id      bigint NOT NULL REFERENCES core.execution (execution_id),
  catalog_id        bigint NOT NULL,
  seq               integer NOT NULL,     -- the machine's own number for the command
  step              text NOT NULL,
  loop_index        integer,
  status            text NOT NULL DEFAULT 'PENDING'
                    CHECK (status IN ('PENDING', 'CLAIMED', 'RUNNING', 'WAITING', 'COMPLETED', 'FAILED', 'CANCELLED')),
  attempt           integer NOT NULL DEFAULT 0,   -- claim generation: fences reports from stale claims
  worker_id         text,
  input             jsonb NOT NULL,              -- tasks and rendered context
  claimed_at        timestamptz,
  heartbeat_at      timestamptz,
  published_at      timestamptz NOT NULL DEFAULT now(),
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  UNIQUE (execution_id, seq)
);
CREATE INDEX command_pending_idx ON core.command (command_id) WHERE status = 'PENDING';
CREATE INDEX command_active_idx ON core.command (claimed_at) WHERE status IN ('CLAIMED', 'RUNNING');

CREATE TABLE core.credential (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name            text NOT NULL UNIQUE,
  type            text NOT NULL,
  data_encrypted  text NOT NULL,
  schema          jsonb,
  meta            jsonb,
  tags            text[] NOT NULL DEFAULT '{}',
  description     text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX credential_tags_idx ON core.credential USING gin (tags);
CREATE INDEX credential_type_idx ON core.credential (type);

CREATE TABLE core.keychain (
  cache_key            text PRIMARY KEY,
  keychain_name        text NOT NULL,
  catalog_id           bigint NOT NULL REFERENCES core.catalog (catalog_id),
  credential_type      text NOT NULL,
  cache_type           text NOT NULL CHECK (cache_type IN ('secret', 'token')),
  scope_type           text NOT NULL CHECK (scope_type IN ('local', 'global', 'shared')),
  execution_id         bigint,
  parent_execution_id  bigint,
  data_encrypted       text NOT NULL,
  schema               jsonb,
  expires_at           timestamptz NOT NULL,
  created_at           timestamptz NOT NULL DEFAULT now(),
  accessed_at          timestamptz NOT NULL DEFAULT now(),
  access_count         integer NOT NULL DEFAULT 0,
  auto_renew           boolean NOT NULL DEFAULT false,
  renew_config         jsonb
);
CREATE INDEX keychain_name_catalog_idx ON core.keychain (keychain_name, catalog_id);
CREATE INDEX keychain_execution_idx ON core.keychain (execution_id);
CREATE INDEX keychain_renew_idx ON core.keychain (expires_at) WHERE auto_renew;

-- Registered executable resources (agents, tool servers).
CREATE TABLE core.resource (
  resource_id  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  kind         text NOT NULL,
  name         text NOT NULL,
  catalog_id   bigint REFERENCES core.catalog (catalog_id),
  config       jsonb NOT NULL DEFAULT '{}',
  status       text NOT NULL DEFAULT 'registered',
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  UNIQUE (kind, name)
);

-- Worker pools, servers and leases (the reaper's lease is a row of kind 'lease').
CREATE TABLE core.runtime (
  runtime_id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  kind              text NOT NULL CHECK (kind IN ('worker_pool', 'server', 'lease')),
  name              text NOT NULL,
  status            text NOT NULL DEFAULT 'ready' CHECK (status IN ('ready', 'draining', 'stopped', 'held')),
  capacity          integer,
  labels            jsonb NOT NULL DEFAULT '{}',
  holder            text,
  heartbeat_at      timestamptz NOT NULL DEFAULT now(),
  lease_expires_at  timestamptz,
  created_at        timestamptz NOT NULL DEFAULT now(),
  UNIQUE (kind, name)
);

-- Short-lived per-execution values (never secrets), removed with their execution.
CREATE TABLE core.transient (
  execution_id  bigint NOT NULL,
  key           text NOT NULL,
  value         jsonb,
  expires_at    timestamptz,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (execution_id, key)
);
