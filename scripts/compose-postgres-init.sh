#!/bin/sh
# compose.yaml's PostgreSQL runs this once, when it initialises its data volume, as its superuser
# (POSTGRES_USER) on POSTGRES_DB: the service's own database user, `svc`, no superuser, owner of
# that database (so of the schema it creates: core), with CREATEROLE for the reader role
# its migrations make (migrations/0002, 0013). The server connects as `svc`, never as the superuser.
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" -v db="$POSTGRES_DB" <<'SQL'
CREATE ROLE svc LOGIN NOSUPERUSER CREATEROLE NOCREATEDB NOREPLICATION NOBYPASSRLS;
ALTER DATABASE :"db" OWNER TO svc;
SQL
# psql's \password sends the password's SCRAM secret, computed here, never the password: a
# statement's text may be logged. Without a terminal it reads the password (twice) from stdin;
# printf is the shell's own, so the password is on no command line.
printf '%s\n%s\n' "$SVC_DB_PASSWORD" "$SVC_DB_PASSWORD" | psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" -c '\password svc'
