# Sourced by the bench scripts that load a PostgreSQL server calibra made:
# managed_pg NAME SUBDIR makes a throwaway directory under /var/tmp
# (calibra-NAME-bench.XXXXXX, with SUBDIR owned by postgres for the
# server's files), builds calibra, lets it make its managed instance there,
# and starts that data directory with the settings calibra started it with
# (its postmaster.opts) on a socket of its own (no TCP). It sets DIR,
# CALIBRA, DATA, PGBIN, port, postmaster and DSN, defines as_pg, and
# removes everything at exit, whatever happens. PGBIN (environment) picks
# the server binaries (default: Debian's newest), e.g. PostgreSQL 18's
# under /opt/calibra.
managed_pg() {
	PGBIN=${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)}
	DIR=$(mktemp -d "/var/tmp/calibra-$1-bench.XXXXXX")
	chmod 700 "$DIR"
	mkdir -p "$DIR/path" "$DIR/runs" "$DIR/sock" "$DIR/$2"
	chmod 755 "$DIR" "$DIR/path"
	chown postgres "$DIR/sock" "$DIR/$2"
	CALIBRA=$DIR/calibra
	go build -o "$CALIBRA" ./cmd/calibra
	DATA=$DIR/path/calibra-pg
	trap managed_pg_stop EXIT INT TERM
	"$CALIBRA" oltp build --pg-bin "$PGBIN" --warehouses 1 --path "$DIR/path" --progress none --out "$DIR/runs/make" >/dev/null 2>"$DIR/calibra.err" || { tail -5 "$DIR/calibra.err" >&2; exit 1; }
	eval "set -- $(cat "$DATA/postmaster.opts")"
	shift
	opts=""
	for a in "$@"; do
		case "$a" in unix_socket_directories=*) a="unix_socket_directories=$DIR/sock" ;; esac
		opts="$opts '$a'"
	done
	as_pg "$PGBIN/pg_ctl" -D "$DATA" -l "$DIR/sock/server.log" -o "$opts" -w start >/dev/null
	port=$(sed -n 's/.*"port=\([0-9]*\)".*/\1/p' "$DATA/postmaster.opts")
	postmaster=$(head -1 "$DATA/postmaster.pid")
	DSN="postgres://calibra@/calibra?host=$DIR/sock&port=$port"
}

as_pg() { runuser -u postgres -- "$@"; }

managed_pg_stop() {
	[ -f "$DATA/postmaster.pid" ] && as_pg "$PGBIN/pg_ctl" -D "$DATA" -m fast stop >/dev/null 2>&1 || true
	"$CALIBRA" clean --path "$DIR/path" >/dev/null 2>&1 || true
	rm -rf "$DIR"
}
