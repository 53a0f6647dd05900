# shellcheck shell=bash
# Shared helpers for deploy/local/{up,down,status,env,reset}.
#
# Runs real local services as plain processes bound to 127.0.0.1:
#   kafka          Apache Kafka (KRaft, combined broker+controller), jars from Maven Central
#   postgres       PostgreSQL from Debian's packages, a cluster owned by these scripts
#   elasticsearch  Elasticsearch integ-test-zip from Maven Central (+ a tiny local plugin
#                  that provides the `english` analyzer, see es-analysis-english/)
#   clickhouse     a stand-in for ClickHouse's HTTP interface (clickhouse/server.mjs, Node)
#                  that runs every statement on the ClickHouse engine embedded in the npm
#                  package `chdb` (pinned by clickhouse/package-lock.json)
#
# Everything a service writes lives under $LOCAL_DIR (data/, logs/, run/, conf/, opt/, tmp/);
# downloads live under $CACHE_DIR so fresh clones (CI) start fast.

set -euo pipefail

# ---------------------------------------------------------------------------------------------
# Layout and pinned versions
# ---------------------------------------------------------------------------------------------
DEPLOY_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$DEPLOY_DIR/../.." && pwd)"

LOCAL_DIR="${ERRATA_LOCAL_DIR:-$REPO_ROOT/.local}"
CACHE_DIR="${ERRATA_CACHE_DIR:-${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}/.cache/errata}"
DATA_DIR="$LOCAL_DIR/data"
LOG_DIR="$LOCAL_DIR/logs"
RUN_DIR="$LOCAL_DIR/run"
CONF_DIR="$LOCAL_DIR/conf"
OPT_DIR="$LOCAL_DIR/opt"
TMP_DIR="$LOCAL_DIR/tmp"
# Dedicated Maven repository so the whole download cache is one directory.
M2_REPO="$CACHE_DIR/m2"

# Kafka 4.4.0 is the newest kafka_2.13 on Maven Central, but its dependency
# org.apache.kafka:kafka-tools-api:4.4.0 is not served there. That jar only holds decoders for
# the console tools (the broker never references it), so it is excluded in kafka_install.
KAFKA_VERSION="4.4.0"
KAFKA_LOG4J_VERSION="2.25.5"            # log4j-slf4j-impl binding, same version kafka brings in
KAFKA_CLUSTER_ID="SFoEOJHXRKiA0S65kUVnKw" # fixed, generated once with `StorageTool random-uuid`
ES_VERSION="8.19.21"                    # newest 8.x integ-test-zip on Maven Central

KAFKA_HOST=127.0.0.1
KAFKA_PORT=19092
KAFKA_CONTROLLER_PORT=19093
PG_HOST=127.0.0.1
PG_PORT=15432
PG_USER=errata
PG_PASSWORD=errata
PG_DB=errata
ES_HOST=127.0.0.1
ES_HTTP_PORT=19200
ES_TRANSPORT_PORT=19300
CH_HOST=127.0.0.1
CLICKHOUSE_HTTP_PORT=18123

KAFKA_START_TIMEOUT="${ERRATA_KAFKA_TIMEOUT:-60}"
PG_START_TIMEOUT="${ERRATA_POSTGRES_TIMEOUT:-60}"
ES_START_TIMEOUT="${ERRATA_ES_TIMEOUT:-120}"
CH_START_TIMEOUT="${ERRATA_CLICKHOUSE_TIMEOUT:-60}"
STOP_TIMEOUT="${ERRATA_STOP_TIMEOUT:-60}"

# Order matters: `up` starts in this order, `down` stops in reverse.
ALL_SERVICES=(kafka postgres elasticsearch clickhouse)

# Postgres and Elasticsearch refuse to run as root: as root they run as this system user.
SERVICE_USER="${ERRATA_SERVICE_USER:-errata}"

# ---------------------------------------------------------------------------------------------
# Small utilities
# ---------------------------------------------------------------------------------------------
log()  { printf '[local] %s\n' "$*" >&2; }
die()  { printf '[local] ERROR: %s\n' "$*" >&2; exit 1; }

is_root() { [[ "$(id -u)" == 0 ]]; }

# Run a command as the unprivileged service user (or as ourselves when not root).
as_service_user() {
  if is_root; then
    runuser -u "$SERVICE_USER" -- "$@"
  else
    "$@"
  fi
}

# Install Debian packages, only those whose check command is missing.
# usage: ensure_apt_packages pkg1 pkg2 ...
ensure_apt_packages() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  ((${#missing[@]} == 0)) && return 0
  is_root || die "need Debian packages: ${missing[*]} (run as root or install them)"
  log "installing Debian packages: ${missing[*]}"
  local out
  if ! out="$(export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq 2>&1 && apt-get install -y -qq --no-install-recommends "${missing[@]}" 2>&1)"; then
    printf '%s\n' "$out" >&2
    die "apt-get install ${missing[*]} failed"
  fi
}

ensure_base_tools() {
  local need=()
  command -v curl >/dev/null || need+=(curl)
  command -v unzip >/dev/null || need+=(unzip)
  command -v java >/dev/null || need+=(openjdk-17-jre-headless)
  command -v javac >/dev/null || need+=(openjdk-17-jdk-headless)
  command -v mvn >/dev/null || need+=(maven)
  ((${#need[@]} == 0)) || ensure_apt_packages "${need[@]}"
}

# JAVA_HOME of the machine's default `java` (OpenJDK 17 here); override with ERRATA_JAVA_HOME.
java_home() {
  if [[ -n "${ERRATA_JAVA_HOME:-}" ]]; then echo "$ERRATA_JAVA_HOME"; return; fi
  local j
  j="$(readlink -f "$(command -v java)")"
  dirname "$(dirname "$j")"
}

ensure_service_user() {
  is_root || return 0
  id -u "$SERVICE_USER" >/dev/null 2>&1 && return 0
  log "creating system user $SERVICE_USER"
  useradd --system --user-group --no-create-home --home-dir /nonexistent \
    --shell /usr/sbin/nologin "$SERVICE_USER"
}

# The service user must be able to reach $LOCAL_DIR. When a parent directory blocks it (e.g. a
# clone under /root, mode 700), grant that user traverse-only access (ACL "--x") on that parent.
ensure_service_user_traverse() {
  is_root || return 0
  as_service_user test -x "$LOCAL_DIR" && return 0
  local d="$LOCAL_DIR"
  local blocked=()
  while [[ "$d" != / ]]; do
    d="$(dirname "$d")"
    as_service_user test -x "$d" || blocked+=("$d")
  done
  command -v setfacl >/dev/null || ensure_apt_packages acl
  local i
  for ((i = ${#blocked[@]} - 1; i >= 0; i--)); do
    as_service_user test -x "${blocked[i]}" && continue
    log "granting $SERVICE_USER traverse-only access (ACL u:$SERVICE_USER:--x) to ${blocked[i]}"
    setfacl -m "u:$SERVICE_USER:--x" "${blocked[i]}"
  done
  as_service_user test -x "$LOCAL_DIR" \
    || die "user $SERVICE_USER cannot reach $LOCAL_DIR; set ERRATA_LOCAL_DIR elsewhere"
}

check_service_user_access() {
  is_root || return 0
  ensure_service_user_traverse
  as_service_user test -w "$1" || die "user $SERVICE_USER cannot write $1"
}

# Serialise up/down/reset so that concurrent callers (make -j, parallel CI steps) do not race.
# Daemons are started with `9>&-` so that they do not inherit (and keep holding) the lock.
take_lock() {
  mkdir -p "$RUN_DIR"
  exec 9>"$RUN_DIR/.lock"
  flock -w 600 9 || die "could not lock $RUN_DIR/.lock within 600s"
}

ensure_dirs() {
  mkdir -p "$DATA_DIR" "$LOG_DIR" "$RUN_DIR" "$CONF_DIR" "$OPT_DIR" "$TMP_DIR" "$CACHE_DIR"
}

# Directories a service running as $SERVICE_USER writes into.
own_by_service_user() {
  is_root || return 0
  chown "$SERVICE_USER:$SERVICE_USER" "$@"
}

port_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

pid_alive() { [[ -n "${1:-}" ]] && kill -0 "$1" 2>/dev/null; }

# True if pid is alive and its command line contains every given substring (i.e. it is ours).
pid_matches() {
  local pid="$1"; shift
  pid_alive "$pid" || return 1
  local cmd
  cmd="$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" || return 1
  local s
  for s in "$@"; do [[ "$cmd" == *"$s"* ]] || return 1; done
}

read_pidfile() {
  if [[ -s "$1" ]]; then head -n1 "$1" | tr -dc '0-9'; fi
}

# Gracefully stop a pid (TERM), then KILL after $STOP_TIMEOUT seconds.
stop_pid() {
  local pid="$1" name="$2" i
  pid_alive "$pid" || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < STOP_TIMEOUT * 5; i++)); do
    pid_alive "$pid" || return 0
    sleep 0.2
  done
  log "$name (pid $pid) did not stop within ${STOP_TIMEOUT}s; killing"
  kill -KILL "$pid" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do pid_alive "$pid" || return 0; sleep 0.1; done
}

# Run mvn against the cache's dedicated local repository; its output is shown only on failure.
mvn_cached() {
  local out
  if ! out="$(mvn -B -q -Dstyle.color=never -Dmaven.repo.local="$M2_REPO" "$@" 2>&1)"; then
    printf '%s\n' "$out" >&2
    return 1
  fi
}

# Wait until "<svc>_healthy" succeeds; on timeout or early death print the log tail and fail.
wait_healthy() {
  local svc="$1" timeout="$2" start=$SECONDS
  while ((SECONDS - start < timeout)); do
    if "${svc}_healthy"; then return 0; fi
    if ! pid_alive "$("${svc}_pid")"; then
      log "$svc exited during startup"
      show_log_tail "$svc"
      return 1
    fi
    sleep 0.5
  done
  log "$svc not healthy after ${timeout}s"
  show_log_tail "$svc"
  return 1
}

show_log_tail() {
  local svc="$1" f
  for f in $("${svc}_logs"); do
    [[ -f "$f" ]] || continue
    printf -- '----- last 50 lines of %s -----\n' "$f" >&2
    tail -n 50 "$f" >&2
  done
}

# Validate service names into the global array SERVICES; with none, all services.
resolve_services() {
  SERVICES=()
  if (($# == 0)); then
    SERVICES=("${ALL_SERVICES[@]}")
    return
  fi
  local s
  for s in "$@"; do
    case "$s" in
      kafka | postgres | elasticsearch | clickhouse) SERVICES+=("$s") ;;
      *) die "unknown service '$s' (known: ${ALL_SERVICES[*]})" ;;
    esac
  done
}

# ---------------------------------------------------------------------------------------------
# Kafka
# ---------------------------------------------------------------------------------------------
KAFKA_LIBS="$CACHE_DIR/kafka-$KAFKA_VERSION/libs"
KAFKA_DATA="$DATA_DIR/kafka"
KAFKA_CONF="$CONF_DIR/kafka"
KAFKA_PIDFILE="$RUN_DIR/kafka.pid"
KAFKA_LOG="$LOG_DIR/kafka.log"
KAFKA_STDOUT="$LOG_DIR/kafka.stdout.log"

kafka_url()  { echo "$KAFKA_HOST:$KAFKA_PORT"; }
kafka_logs() { echo "$KAFKA_LOG $KAFKA_STDOUT"; }

kafka_install() {
  command -v kcat >/dev/null || ensure_apt_packages kcat
  [[ -f "$KAFKA_LIBS/.complete" ]] && return 0
  ensure_base_tools
  log "resolving kafka_2.13:$KAFKA_VERSION from Maven Central into $KAFKA_LIBS"
  local build="$CACHE_DIR/kafka-$KAFKA_VERSION/resolve"
  rm -rf "$KAFKA_LIBS" "$build"
  mkdir -p "$build"
  cat >"$build/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>errata.local</groupId>
  <artifactId>kafka-runtime</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.kafka</groupId>
      <artifactId>kafka_2.13</artifactId>
      <version>$KAFKA_VERSION</version>
      <exclusions>
        <!-- console-tool decoders only; 4.4.0 is not served on Maven Central -->
        <exclusion><groupId>org.apache.kafka</groupId><artifactId>kafka-tools-api</artifactId></exclusion>
      </exclusions>
    </dependency>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-slf4j-impl</artifactId>
      <version>$KAFKA_LOG4J_VERSION</version>
    </dependency>
  </dependencies>
</project>
EOF
  (cd "$build" && mvn_cached dependency:copy-dependencies -DincludeScope=runtime \
    -DoutputDirectory="$KAFKA_LIBS") || die "maven could not resolve Kafka $KAFKA_VERSION"
  touch "$KAFKA_LIBS/.complete"
}

kafka_pid() {
  local pid
  pid="$(read_pidfile "$KAFKA_PIDFILE")"
  if pid_matches "$pid" kafka.Kafka "$KAFKA_CONF/server.properties"; then echo "$pid"; fi
}

kafka_healthy() {
  [[ -n "$(kafka_pid)" ]] || return 1
  port_open "$KAFKA_HOST" "$KAFKA_PORT" || return 1
  # A real Metadata request; the broker must list itself.
  kcat -b "$(kafka_url)" -L -m 3 2>/dev/null | grep -q "broker 1 at $KAFKA_HOST:$KAFKA_PORT"
}

kafka_write_config() {
  mkdir -p "$KAFKA_CONF" "$KAFKA_DATA"
  cat >"$KAFKA_CONF/server.properties" <<EOF
# Generated by deploy/local (rewritten on every start; edit lib.sh instead).
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@$KAFKA_HOST:$KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://$KAFKA_HOST:$KAFKA_PORT,CONTROLLER://$KAFKA_HOST:$KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://$KAFKA_HOST:$KAFKA_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$KAFKA_DATA
num.partitions=3
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=3
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
auto.create.topics.enable=false
log.retention.ms=-1
log.retention.bytes=-1
message.max.bytes=16777216
replica.fetch.max.bytes=16777216
socket.request.max.bytes=104857600
group.initial.rebalance.delay.ms=0
num.network.threads=3
num.io.threads=4
EOF
  cat >"$KAFKA_CONF/log4j2.properties" <<EOF
# Generated by deploy/local.
status = warn
# Keep logging alive while the broker's own shutdown hook runs.
shutdownHook = disable
appender.file.type = RollingFile
appender.file.name = file
appender.file.fileName = $KAFKA_LOG
appender.file.filePattern = $KAFKA_LOG.%i
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
appender.file.policies.type = Policies
appender.file.policies.size.type = SizeBasedTriggeringPolicy
appender.file.policies.size.size = 50MB
appender.file.strategy.type = DefaultRolloverStrategy
appender.file.strategy.max = 5
rootLogger.level = info
rootLogger.appenderRef.file.ref = file
logger.controller.name = org.apache.kafka.controller
logger.controller.level = info
logger.request.name = kafka.request.logger
logger.request.level = warn
EOF
}

kafka_java() {
  "$(java_home)/bin/java" -cp "$KAFKA_LIBS/*" \
    -Dlog4j2.configurationFile="$KAFKA_CONF/log4j2.properties" \
    -Djava.io.tmpdir="$TMP_DIR" "$@"
}

kafka_start() {
  kafka_write_config
  if [[ ! -f "$KAFKA_DATA/meta.properties" ]]; then
    log "formatting Kafka storage (cluster id $KAFKA_CLUSTER_ID)"
    kafka_java -Xmx256m kafka.tools.StorageTool format --ignore-formatted \
      -t "$KAFKA_CLUSTER_ID" -c "$KAFKA_CONF/server.properties" >>"$KAFKA_STDOUT" 2>&1 \
      || { show_log_tail kafka; die "kafka storage format failed"; }
  fi
  port_open "$KAFKA_HOST" "$KAFKA_PORT" && die "port $KAFKA_PORT is in use by another process"
  port_open "$KAFKA_HOST" "$KAFKA_CONTROLLER_PORT" && die "port $KAFKA_CONTROLLER_PORT is in use by another process"
  log "starting kafka $KAFKA_VERSION"
  # setsid: own session, so the broker survives the calling shell and its Ctrl-C.
  setsid "$(java_home)/bin/java" -Xms512m -Xmx1g -XX:+UseG1GC -XX:MaxGCPauseMillis=20 \
    -Djava.awt.headless=true -Djava.io.tmpdir="$TMP_DIR" \
    -Dlog4j2.configurationFile="$KAFKA_CONF/log4j2.properties" \
    -Dkafka.logs.dir="$LOG_DIR" \
    -cp "$KAFKA_LIBS/*" kafka.Kafka "$KAFKA_CONF/server.properties" \
    </dev/null >>"$KAFKA_STDOUT" 2>&1 9>&- &
  echo $! >"$KAFKA_PIDFILE"
  # Until the forked shell has exec'd java, its command line is not yet recognisable as ours.
  local pid=$! i
  for ((i = 0; i < 50; i++)); do
    if [[ -n "$(kafka_pid)" ]] || ! pid_alive "$pid"; then break; fi
    sleep 0.1
  done
}

kafka_stop() {
  local pid
  pid="$(kafka_pid)"
  if [[ -n "$pid" ]]; then
    log "stopping kafka (pid $pid)"
    stop_pid "$pid" kafka
  fi
  rm -f "$KAFKA_PIDFILE"
}

# ---------------------------------------------------------------------------------------------
# PostgreSQL (Debian packages; our own cluster in $DATA_DIR/postgres)
# ---------------------------------------------------------------------------------------------
PG_DATA="$DATA_DIR/postgres"
PG_SOCKET_DIR="$RUN_DIR/postgres"
PG_PIDFILE="$RUN_DIR/postgres.pid"
PG_LOG="$LOG_DIR/postgres.log"

postgres_url()  { echo "postgres://$PG_USER:$PG_PASSWORD@$PG_HOST:$PG_PORT/$PG_DB?sslmode=disable"; }
postgres_logs() { echo "$PG_LOG"; }

# Newest /usr/lib/postgresql/<ver>/bin that has a server.
pg_bindir() {
  local d
  d="$(find /usr/lib/postgresql -mindepth 3 -maxdepth 3 -path '*/bin/pg_ctl' 2>/dev/null \
    | sort -V | tail -n1)"
  if [[ -n "$d" ]]; then dirname "$d"; fi
}

postgres_install() {
  if [[ -z "$(pg_bindir)" ]] || ! command -v psql >/dev/null || ! command -v pg_isready >/dev/null; then
    # Note: Debian's package also creates its default cluster (port 5432); we never use it.
    ensure_apt_packages postgresql postgresql-client
  fi
  [[ -n "$(pg_bindir)" ]] || die "postgres server binaries not found under /usr/lib/postgresql"
  ensure_service_user
}

postgres_pid() {
  local pid
  pid="$(read_pidfile "$PG_DATA/postmaster.pid")"
  if pid_matches "$pid" postgres "$PG_DATA"; then echo "$pid"; fi
}

postgres_healthy() {
  [[ -n "$(postgres_pid)" ]] || return 1
  pg_isready -q -h "$PG_HOST" -p "$PG_PORT" -t 2 || return 1
  [[ "$(PGPASSWORD="$PG_PASSWORD" PGCONNECT_TIMEOUT=3 psql -X -q -At -h "$PG_HOST" -p "$PG_PORT" \
    -U "$PG_USER" -d "$PG_DB" -c 'SELECT 1' 2>/dev/null)" == 1 ]]
}

postgres_write_config() {
  cat >"$PG_DATA/errata-local.conf" <<EOF
# Generated by deploy/local (rewritten on every start; edit lib.sh instead).
listen_addresses = '$PG_HOST'
port = $PG_PORT
unix_socket_directories = '$PG_SOCKET_DIR'
max_connections = 200
shared_buffers = 256MB
fsync = on
synchronous_commit = on
full_page_writes = on
# Projections write in bulk (catch-up, replay): with the default 1GB of WAL
# between checkpoints, a catch-up of 1M events checkpointed back to back,
# and every first touch of a page after a checkpoint writes the whole page
# to the WAL again. More WAL between checkpoints, compressed page images.
max_wal_size = 4GB
wal_compression = lz4
logging_collector = off
log_line_prefix = '%m [%p] %q%u@%d '
log_min_duration_statement = -1
timezone = 'UTC'
EOF
  own_by_service_user "$PG_DATA/errata-local.conf"
}

postgres_start() {
  local bin
  bin="$(pg_bindir)"
  mkdir -p "$PG_DATA" "$PG_SOCKET_DIR"
  touch "$PG_LOG"
  own_by_service_user "$PG_DATA" "$PG_SOCKET_DIR" "$PG_LOG"
  chmod 700 "$PG_DATA"
  check_service_user_access "$PG_DATA"
  local fresh=0
  if [[ ! -f "$PG_DATA/PG_VERSION" ]]; then
    log "initdb $PG_DATA"
    local pwfile="$TMP_DIR/pgpass.$$"
    printf '%s\n' "$PG_PASSWORD" >"$pwfile"
    own_by_service_user "$pwfile"
    as_service_user "$bin/initdb" -D "$PG_DATA" -U "$PG_USER" --pwfile="$pwfile" \
      -E UTF8 --locale=C.UTF-8 --auth-local=trust --auth-host=scram-sha-256 \
      >>"$PG_LOG" 2>&1 || { rm -f "$pwfile"; show_log_tail postgres; die "initdb failed"; }
    rm -f "$pwfile"
    echo "include_if_exists = 'errata-local.conf'" >>"$PG_DATA/postgresql.conf"
    fresh=1
  fi
  postgres_write_config
  port_open "$PG_HOST" "$PG_PORT" && die "port $PG_PORT is in use by another process"
  log "starting postgres ($bin)"
  # pg_ctl removes a stale postmaster.pid itself.
  as_service_user "$bin/pg_ctl" -D "$PG_DATA" -l "$PG_LOG" -s -w -t "$PG_START_TIMEOUT" start 9>&- \
    || { show_log_tail postgres; die "postgres failed to start"; }
  postgres_pid >"$PG_PIDFILE"
  # Role and database (idempotent). The bootstrap superuser is already $PG_USER.
  local psql=(psql -X -q -v ON_ERROR_STOP=1 -h "$PG_SOCKET_DIR" -p "$PG_PORT" -U "$PG_USER" -d postgres)
  as_service_user "${psql[@]}" -c "ALTER ROLE $PG_USER WITH LOGIN SUPERUSER PASSWORD '$PG_PASSWORD'" >/dev/null
  if [[ "$(as_service_user "${psql[@]}" -At -c "SELECT 1 FROM pg_database WHERE datname = '$PG_DB'")" != 1 ]]; then
    as_service_user "${psql[@]}" -c "CREATE DATABASE $PG_DB OWNER $PG_USER" >/dev/null
  fi
  ((fresh)) && log "postgres cluster initialised"
  return 0
}

postgres_stop() {
  local bin pid
  pid="$(postgres_pid)"
  if [[ -n "$pid" ]]; then
    bin="$(pg_bindir)"
    log "stopping postgres (pid $pid)"
    as_service_user "$bin/pg_ctl" -D "$PG_DATA" -s -m fast -w -t "$STOP_TIMEOUT" stop \
      || { log "fast shutdown timed out; killing"; stop_pid "$pid" postgres; }
  fi
  rm -f "$PG_PIDFILE"
}

# ---------------------------------------------------------------------------------------------
# Elasticsearch
# ---------------------------------------------------------------------------------------------
ES_ARTIFACT="org.elasticsearch.distribution.integ-test-zip:elasticsearch:$ES_VERSION:zip"
ES_ZIP="$M2_REPO/org/elasticsearch/distribution/integ-test-zip/elasticsearch/$ES_VERSION/elasticsearch-$ES_VERSION.zip"
ES_HOME="$OPT_DIR/elasticsearch-$ES_VERSION"
ES_CONF="$CONF_DIR/elasticsearch"
ES_DATA="$DATA_DIR/elasticsearch"
ES_LOGDIR="$LOG_DIR/elasticsearch"
ES_TMP="$TMP_DIR/elasticsearch"
ES_PIDFILE="$RUN_DIR/elasticsearch.pid"
ES_CLUSTER=errata-local
ES_PLUGIN_SRC="$DEPLOY_DIR/es-analysis-english"

elasticsearch_url()  { echo "http://$ES_HOST:$ES_HTTP_PORT"; }
elasticsearch_logs() { echo "$ES_LOGDIR/$ES_CLUSTER.log $ES_LOGDIR/startup.log"; }

# Build the analysis-english plugin against this ES version's own jars (cached by source hash).
es_plugin_dir() {
  local hash
  hash="$(cat "$ES_PLUGIN_SRC"/src/*.java "$ES_PLUGIN_SRC/plugin-descriptor.properties" | sha256sum | cut -c1-12)"
  echo "$CACHE_DIR/elasticsearch/analysis-english-$ES_VERSION-$hash"
}

es_build_plugin() {
  local out="$1" build="$1.build"
  [[ -f "$out/.complete" ]] && return 0
  log "building the analysis-english plugin for Elasticsearch $ES_VERSION"
  rm -rf "$out" "$build"
  mkdir -p "$build/classes" "$out"
  [[ -x "$(java_home)/bin/javac" ]] || ensure_apt_packages openjdk-17-jdk-headless
  "$(java_home)/bin/javac" --release 17 -nowarn -cp "$ES_HOME/lib/*" -d "$build/classes" \
    "$ES_PLUGIN_SRC"/src/*.java || die "compiling the analysis-english plugin failed"
  "$(java_home)/bin/jar" --create --file "$out/errata-analysis-english.jar" -C "$build/classes" .
  sed "s/@ES_VERSION@/$ES_VERSION/g" "$ES_PLUGIN_SRC/plugin-descriptor.properties" \
    >"$out/plugin-descriptor.properties"
  rm -rf "$build"
  touch "$out/.complete"
}

elasticsearch_install() {
  ensure_service_user
  if [[ ! -f "$ES_ZIP" ]]; then
    ensure_base_tools
    log "fetching $ES_ARTIFACT from Maven Central"
    mkdir -p "$CACHE_DIR"
    (cd "$CACHE_DIR" && mvn_cached dependency:get -Dartifact="$ES_ARTIFACT" -Dtransitive=false) \
      || die "maven could not fetch Elasticsearch $ES_VERSION"
    [[ -f "$ES_ZIP" ]] || die "expected $ES_ZIP after the download"
  fi
  if [[ ! -f "$ES_HOME/.complete" ]]; then
    command -v unzip >/dev/null || ensure_apt_packages unzip
    log "unpacking Elasticsearch into $ES_HOME"
    rm -rf "$ES_HOME" "$ES_HOME.tmp"
    mkdir -p "$ES_HOME.tmp"
    unzip -q "$ES_ZIP" -d "$ES_HOME.tmp"
    mv "$ES_HOME.tmp/elasticsearch-$ES_VERSION" "$ES_HOME"
    rmdir "$ES_HOME.tmp"
    touch "$ES_HOME/.complete"
  fi
  # The integ-test-zip has no analysis-common module, hence no `english` analyzer: add ours.
  local plugin
  plugin="$(es_plugin_dir)"
  es_build_plugin "$plugin"
  if ! cmp -s "$plugin/errata-analysis-english.jar" "$ES_HOME/plugins/analysis-english/errata-analysis-english.jar"; then
    rm -rf "$ES_HOME/plugins/analysis-english"
    mkdir -p "$ES_HOME/plugins/analysis-english"
    cp "$plugin/errata-analysis-english.jar" "$plugin/plugin-descriptor.properties" \
      "$ES_HOME/plugins/analysis-english/"
  fi
}

elasticsearch_pid() {
  local pid
  pid="$(read_pidfile "$ES_PIDFILE")"
  if pid_matches "$pid" org.elasticsearch "$ES_HOME"; then echo "$pid"; fi
}

elasticsearch_healthy() {
  [[ -n "$(elasticsearch_pid)" ]] || return 1
  curl -fsS -o /dev/null --max-time 5 \
    "$(elasticsearch_url)/_cluster/health?wait_for_status=yellow&timeout=2s"
}

elasticsearch_write_config() {
  mkdir -p "$ES_CONF/jvm.options.d" "$ES_DATA" "$ES_LOGDIR" "$ES_TMP"
  # Copy the distribution's config once (ES keeps its keystore here), then overwrite ours.
  cp -rn "$ES_HOME/config/." "$ES_CONF/"
  cat >"$ES_CONF/elasticsearch.yml" <<EOF
# Generated by deploy/local (rewritten on every start; edit lib.sh instead).
cluster.name: $ES_CLUSTER
node.name: ${ES_CLUSTER}-1
path.data: $ES_DATA
path.logs: $ES_LOGDIR
network.host: $ES_HOST
http.port: $ES_HTTP_PORT
transport.port: $ES_TRANSPORT_PORT
discovery.type: single-node
xpack.security.enabled: false
cluster.routing.allocation.disk.threshold_enabled: false
action.destructive_requires_name: false
EOF
  cat >"$ES_CONF/jvm.options.d/errata-local.options" <<EOF
-Xms512m
-Xmx512m
-XX:ErrorFile=$ES_LOGDIR/hs_err_pid%p.log
-XX:HeapDumpPath=$ES_LOGDIR
EOF
  # The stock jvm.options writes gc.log relative to the cwd: pin it to our log dir.
  sed -i -E "s#(-Xlog:gc[^:]*:)file=[^:]*gc\.log#\1file=$ES_LOGDIR/gc.log#" "$ES_CONF/jvm.options"
  own_by_service_user -R "$ES_CONF" "$ES_DATA" "$ES_LOGDIR" "$ES_TMP"
}

elasticsearch_start() {
  elasticsearch_write_config
  check_service_user_access "$ES_DATA"
  as_service_user test -r "$ES_HOME/lib" || die "user $SERVICE_USER cannot read $ES_HOME"
  port_open "$ES_HOST" "$ES_HTTP_PORT" && die "port $ES_HTTP_PORT is in use by another process"
  port_open "$ES_HOST" "$ES_TRANSPORT_PORT" && die "port $ES_TRANSPORT_PORT is in use by another process"
  log "starting elasticsearch $ES_VERSION (java: $(java_home))"
  rm -f "$ES_PIDFILE"
  touch "$ES_PIDFILE"
  : >"$ES_LOGDIR/startup.log"
  own_by_service_user "$ES_PIDFILE" "$ES_LOGDIR/startup.log"
  # -d daemonizes once the node has started; -p writes the server JVM's pid.
  (cd "$ES_LOGDIR" && as_service_user env ES_JAVA_HOME="$(java_home)" ES_PATH_CONF="$ES_CONF" \
    ES_TMPDIR="$ES_TMP" "$ES_HOME/bin/elasticsearch" -d -p "$ES_PIDFILE" \
    </dev/null >>"$ES_LOGDIR/startup.log" 2>&1 9>&-) || {
    show_log_tail elasticsearch
    die "elasticsearch failed to start"
  }
}

elasticsearch_stop() {
  local pid
  pid="$(elasticsearch_pid)"
  if [[ -n "$pid" ]]; then
    log "stopping elasticsearch (pid $pid)"
    stop_pid "$pid" elasticsearch
  fi
  rm -f "$ES_PIDFILE"
}

# ---------------------------------------------------------------------------------------------
# ClickHouse stand-in: ClickHouse's HTTP interface served by clickhouse/server.mjs, every
# statement executed by the ClickHouse engine embedded in the npm package `chdb`.
# ---------------------------------------------------------------------------------------------
CH_SRC="$DEPLOY_DIR/clickhouse"
CH_SERVER="$CH_SRC/server.mjs"
CH_DATA="$DATA_DIR/clickhouse"
CH_TMP="$TMP_DIR/clickhouse"
CH_LOG="$LOG_DIR/clickhouse.log"
CH_STDOUT="$LOG_DIR/clickhouse.stdout.log"
CH_PIDFILE="$RUN_DIR/clickhouse.pid"

clickhouse_url()  { echo "http://$CH_HOST:$CLICKHOUSE_HTTP_PORT"; }
clickhouse_logs() { echo "$CH_LOG $CH_STDOUT"; }

# node_modules for the pinned lockfile, one directory per lockfile content.
clickhouse_modules_dir() {
  local hash
  hash="$(cat "$CH_SRC/package.json" "$CH_SRC/package-lock.json" | sha256sum | cut -c1-12)"
  echo "$CACHE_DIR/clickhouse/chdb-$hash"
}

ensure_node() {
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    ensure_apt_packages nodejs npm
  fi
  local major
  major="$(node -p 'process.versions.node.split(".")[0]')"
  ((major >= 18)) || die "the ClickHouse stand-in needs Node >= 18 (found $(node --version))"
}

clickhouse_install() {
  command -v curl >/dev/null || ensure_apt_packages curl
  ensure_node
  local dir
  dir="$(clickhouse_modules_dir)"
  [[ -f "$dir/.complete" ]] && return 0
  log "installing chdb from the npm registry (npm ci, deploy/local/clickhouse/package-lock.json) into $dir"
  rm -rf "$dir" "$dir.tmp"
  mkdir -p "$dir.tmp"
  cp "$CH_SRC/package.json" "$CH_SRC/package-lock.json" "$dir.tmp/"
  local out
  # chdb's own install script is a no-op; its engine comes as the prebuilt optional
  # dependency @chdb/lib-<platform> from the same registry, so no script has to run.
  if ! out="$(cd "$dir.tmp" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error 2>&1)"; then
    printf '%s\n' "$out" >&2
    die "npm ci for the ClickHouse stand-in failed"
  fi
  (cd "$dir.tmp" && node -e 'require("chdb")') || die "chdb does not load on this machine (needs Linux x86-64 with glibc)"
  mv "$dir.tmp" "$dir"
  touch "$dir/.complete"
}

clickhouse_pid() {
  local pid
  pid="$(read_pidfile "$CH_PIDFILE")"
  if pid_matches "$pid" node "$CH_SERVER"; then echo "$pid"; fi
}

clickhouse_healthy() {
  [[ -n "$(clickhouse_pid)" ]] || return 1
  # A real statement on the engine, not just the HTTP layer (/ping).
  [[ "$(curl -fsS --max-time 5 "$(clickhouse_url)/?query=SELECT%201" 2>/dev/null)" == 1 ]]
}

clickhouse_start() {
  mkdir -p "$CH_DATA" "$CH_TMP"
  port_open "$CH_HOST" "$CLICKHOUSE_HTTP_PORT" && die "port $CLICKHOUSE_HTTP_PORT is in use by another process"
  log "starting the clickhouse stand-in (chdb, node $(node --version))"
  # setsid: own session, so the server survives the calling shell and its Ctrl-C.
  CH_STANDIN_HOST="$CH_HOST" CH_STANDIN_PORT="$CLICKHOUSE_HTTP_PORT" CH_STANDIN_DATA="$CH_DATA" \
    CH_STANDIN_TMP="$CH_TMP" CH_STANDIN_LOG="$CH_LOG" CH_STANDIN_MODULES="$(clickhouse_modules_dir)" \
    setsid node "$CH_SERVER" </dev/null >>"$CH_STDOUT" 2>&1 9>&- &
  echo $! >"$CH_PIDFILE"
  local pid=$! i
  for ((i = 0; i < 50; i++)); do
    if [[ -n "$(clickhouse_pid)" ]] || ! pid_alive "$pid"; then break; fi
    sleep 0.1
  done
}

clickhouse_stop() {
  local pid
  pid="$(clickhouse_pid)"
  if [[ -n "$pid" ]]; then
    log "stopping clickhouse (pid $pid)"
    stop_pid "$pid" clickhouse
  fi
  rm -f "$CH_PIDFILE"
}

clickhouse_timeout()    { echo "$CH_START_TIMEOUT"; }
elasticsearch_timeout() { echo "$ES_START_TIMEOUT"; }
kafka_timeout()         { echo "$KAFKA_START_TIMEOUT"; }
postgres_timeout()      { echo "$PG_START_TIMEOUT"; }
