#!/bin/sh
# First start: a cluster owned by POSTGRES_USER with database POSTGRES_DB, trusting the network
# (compose.yaml publishes no database port). Then PostgreSQL in the foreground.
set -e
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    initdb -U "$POSTGRES_USER" --auth=trust -D "$PGDATA" >/dev/null
    echo "host all all 0.0.0.0/0 trust" >> "$PGDATA/pg_hba.conf"
    pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
    createdb -U "$POSTGRES_USER" "$POSTGRES_DB"
    pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
fi
exec postgres -D "$PGDATA" -c listen_addresses='*'
