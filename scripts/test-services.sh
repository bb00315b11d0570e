#!/usr/bin/env bash
# Throwaway test servers on 127.0.0.1 for `npm test` (scripts/run-tests.mjs starts them once per
# run): Ceph RADOS Gateway (S3, Debian ceph 16.2 Pacific, 1 mon + 1 memstore OSD, no mgr),
# PostgreSQL 15 and Redis 7, all under one temp dir. Recipe and S3 gaps: docs in README.md
# ("Tests") and the spike notes this script was copied from.
#
#   test-services.sh start DIR              # installs missing Debian packages (root), starts all
#                                           # three, prints KEY=VALUE lines (also written to DIR/env)
#   test-services.sh stop DIR               # stops every process by the pid recorded in DIR/pids/
#                                           # (including extra gateways from rgw-start)
#   test-services.sh rgw-start DIR NAME [PORT]
#                                           # an extra radosgw on the same cluster, on PORT or a free
#                                           # 127.0.0.1 port; pid in DIR/pids/rgw-NAME.pid; prints
#                                           # S3_ENDPOINT=http://127.0.0.1:PORT once it answers
#   test-services.sh rgw-stop DIR NAME [SIGNAL]
#                                           # stops that gateway by its pid (SIGNAL: TERM, or KILL)
#
# DIR should be empty or absent (mktemp -d is fine). Nothing outside DIR is written, except the
# apt install itself. Every listener is bound to 127.0.0.1 on a port picked free at start.
# The S3/DB clients the tests call (awscli: use /usr/bin/aws, Debian's v2; rclone) are installed too.
# Knobs (env): SKIP_S3=1 SKIP_PG=1 SKIP_REDIS=1, SKIP_INSTALL=1, S3_MEM_BYTES (memstore size).
# Needs: Debian 12, node (picks the free ports). As root, PostgreSQL runs as user 'postgres'.
# In a harness:  T=$(mktemp -d); trap "test-services.sh stop $T" EXIT
#                test-services.sh start "$T" >/dev/null; set -a; . "$T/env"; set +a
# S3 clients: region us-east-1, and radosgwCompatible() from src/storage/s3/client.ts (path-style,
#   checksums only when required: Pacific has no aws-chunked trailers, stream bodies fail with 411).
set -Eeuo pipefail

MODE=${1:-}; DIR=${2:-}
usage() { echo "usage: $0 start|stop DIR | rgw-start DIR NAME [PORT] | rgw-stop DIR NAME [TERM|KILL]" >&2; exit 2; }
[ -n "$MODE" ] && [ -n "$DIR" ] || usage
case "$MODE" in start|stop|rgw-start|rgw-stop) ;; *) usage;; esac
DIR=$(mkdir -p "$DIR" && cd "$DIR" && pwd)
PIDS=$DIR/pids
log() { printf '[services %s] %s\n' "$(date +%T)" "$*" >&2; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.1f", b-a}'; }

# ---------------------------------------------------------------- stop
# expected command name for each pid file, so a recycled pid is never signalled
# (rgw-NAME: an extra gateway from rgw-start)
declare -A COMM=([rgw]=radosgw [osd]=ceph-osd [mon]=ceph-mon [redis]=redis-server [pg]=postgres)
comm_of() { case "$1" in rgw-*) echo radosgw;; *) echo "${COMM[$1]}";; esac; }
# alive = exists and is not a zombie (our daemons are re-parented to PID 1 once start exits,
# and a slow-reaping init leaves them as zombies for a while after they have exited), or is a
# zombie whose other threads are still exiting: a thread-group leader that dies first stays a
# zombie until they are gone, and the process's sockets close only with the last of them (CI: a
# gateway "stopped" by SIGKILL still accepted a connection on its port)
alive() {
  local st; st=$(sed 's/.*) //' /proc/"$1"/stat 2>/dev/null | cut -d' ' -f1)
  [ -n "$st" ] || return 1
  [ "$st" != Z ] && return 0
  [ "$(ls /proc/"$1"/task 2>/dev/null | wc -l)" -gt 1 ]
}
stop_one() {
  local name=$1 sig=$2 f=$PIDS/$1.pid pid comm want
  [ -f "$f" ] || return 0
  pid=$(cat "$f")
  if ! alive "$pid"; then rm -f "$f"; return 0; fi
  comm=$(cat /proc/"$pid"/comm 2>/dev/null || true)
  want=$(comm_of "$name")
  case "$comm" in "$want"*) ;; *) log "$name: pid $pid is '$comm', not $want; not touching it"; rm -f "$f"; return 0;; esac
  kill -"$sig" "$pid" 2>/dev/null || true
  for _ in $(seq 1 400); do alive "$pid" || break; sleep 0.05; done   # 20 s
  if alive "$pid"; then log "$name ($pid) ignored SIG$sig for 20 s: SIGKILL"; kill -KILL "$pid" 2>/dev/null || true; sleep 0.2; fi
  rm -f "$f"; log "stopped $name (pid $pid)"
}
if [ "$MODE" = stop ]; then
  # a start interrupted inside pg_ctl leaves a postmaster whose pid only PostgreSQL recorded
  if [ ! -f "$PIDS/pg.pid" ] && [ -f "$DIR/pg/data/postmaster.pid" ]; then mkdir -p "$PIDS"; head -1 "$DIR/pg/data/postmaster.pid" >"$PIDS/pg.pid"; fi
  for f in "$PIDS"/rgw-*.pid; do [ -e "$f" ] || continue; n=${f##*/}; stop_one "${n%.pid}" TERM; done
  stop_one rgw TERM; stop_one osd TERM; stop_one mon TERM
  stop_one redis TERM
  stop_one pg INT          # SIGINT = PostgreSQL "fast" shutdown
  exit 0
fi

# ---------------------------------------------------------------- extra gateways (fault tests)
valid_name() { [[ "$1" =~ ^[a-zA-Z0-9_]+$ ]] || { echo "rgw name must be [a-zA-Z0-9_]+, not '$1'" >&2; exit 2; }; }
free_port() { node -e 'const s=require("net").createServer(); s.listen(0,"127.0.0.1",()=>{console.log(s.address().port); s.close();});'; }
http_ok() {  # http_ok PORT -> true once GET / answers 200
  local line
  { exec 3<>"/dev/tcp/127.0.0.1/$1"; } 2>/dev/null || return 1
  printf 'GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
  IFS= read -r -t 5 line <&3 || true; exec 3>&- 3<&-
  [[ "$line" == *" 200 "* ]]
}
if [ "$MODE" = rgw-start ]; then
  NAME=${3:-}; PORT=${4:-}; [ -n "$NAME" ] || usage; valid_name "$NAME"
  C=$DIR/ceph; f=$PIDS/rgw-$NAME.pid
  [ -f "$C/ceph.conf" ] && [ -f "$PIDS/mon.pid" ] || { echo "no running cluster in $DIR (start it first)" >&2; exit 1; }
  if [ -f "$f" ] && alive "$(cat "$f")"; then echo "rgw-$NAME is already running (pid $(cat "$f"))" >&2; exit 1; fi
  [ -n "$PORT" ] || PORT=$(free_port)
  [[ "$PORT" =~ ^[0-9]+$ ]] || { echo "bad port '$PORT'" >&2; exit 2; }
  export CEPH_CONF=$C/ceph.conf
  # Its own ceph name (client.rgw.NAME): its own admin socket ($name.$pid.asok) and log file. The
  # [client.rgw.test] section does not apply to it, so its settings are given as --options here.
  t=$(now)
  setsid radosgw -n "client.rgw.$NAME" -f --rgw-frontends "beast endpoint=127.0.0.1:$PORT" \
    --rgw-dns-name localhost --rgw-thread-pool-size 64 --rgw-gc-obj-min-wait 30 --rgw-gc-processor-period 30 \
    >>"$C/log/rgw-$NAME.out" 2>&1 </dev/null &
  pid=$!; mkdir -p "$PIDS"; echo "$pid" >"$f"
  for _ in $(seq 1 300); do http_ok "$PORT" && break; alive "$pid" || break; sleep 0.1; done
  if ! http_ok "$PORT"; then
    log "rgw-$NAME did not answer on 127.0.0.1:$PORT; see $C/log/rgw-$NAME.out and $C/log/client.rgw.$NAME.log"
    tail -5 "$C/log/rgw-$NAME.out" >&2 || true
    stop_one "rgw-$NAME" KILL; exit 1
  fi
  log "rgw-$NAME (pid $pid) ready on 127.0.0.1:$PORT in $(since "$t") s"
  echo "S3_ENDPOINT=http://127.0.0.1:$PORT"
  exit 0
fi
if [ "$MODE" = rgw-stop ]; then
  NAME=${3:-}; SIG=${4:-TERM}; [ -n "$NAME" ] || usage; valid_name "$NAME"
  SIG=${SIG#SIG}; case "$SIG" in TERM|KILL|INT) ;; *) echo "signal must be TERM, INT or KILL" >&2; exit 2;; esac
  [ -f "$PIDS/rgw-$NAME.pid" ] || { echo "no pid file for rgw-$NAME in $PIDS" >&2; exit 1; }
  stop_one "rgw-$NAME" "$SIG"
  exit 0
fi
[ "$MODE" = start ] || usage
[ -z "$(ls -A "$PIDS" 2>/dev/null)" ] || { echo "$DIR already has running services (pids/); stop them first" >&2; exit 1; }

# ---------------------------------------------------------------- install
PKGS=()
[ -n "${SKIP_S3:-}" ]    || PKGS+=(ceph-mon ceph-osd radosgw ceph-common)
[ -n "${SKIP_PG:-}" ]    || PKGS+=(postgresql-15)
[ -n "${SKIP_REDIS:-}" ] || PKGS+=(redis-server)
# zbarimg (zbar-tools) reads back the QR code of a share link in test/browser/share-ui.test.ts
PKGS+=(zbar-tools)
# clients the tests call (not services, so always): Debian's awscli v2 (/usr/bin/aws), rclone,
# the WebDAV clients litmus (the standard test suite) and cadaver, Chromium for the browser
# tests, and nginx and Caddy for the reverse-proxy and cluster tests: on a fresh machine
# `npm test` skips nothing
PKGS+=(awscli rclone litmus cadaver chromium nginx caddy)
# text browsers for the basic HTML UI's test (test/clients/basic-text-browsers.test.ts)
PKGS+=(lynx w3m)
# the zip checkers of the folder-zip tests (test/clients/zip-tools.test.ts, test/slow/): Info-ZIP
# unzip, bsdtar, 7-Zip, Python's zipfile, and curl for the interrupted-and-resumed download
PKGS+=(unzip libarchive-tools 7zip python3 curl)
# a slow disk (a FUSE filesystem whose close takes seconds, test/helpers/slow-disk.py) for the
# aborted-upload test (test/routes/upload-abort.test.ts)
PKGS+=(fuse3 python3-fusepy)
# the SFTP clients of test/clients/sftp-*.test.ts: OpenSSH's sftp and scp, sshfs with rsync into it, restic (rclone is above)
PKGS+=(openssh-client sshfs restic rsync)
# the tools that draw PDF and video thumbnails (src/thumbnails/media-frame.ts), which the thumbnail
# tests also use to make their video (test/helpers/media.ts)
PKGS+=(poppler-utils ffmpeg)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ] && [ -z "${SKIP_INSTALL:-}" ]; then
  [ "$(id -u)" = 0 ] || { echo "missing packages ${missing[*]}; run as root or apt-get install them" >&2; exit 1; }
  t=$(now); log "installing ${missing[*]}"
  # keep the packages' init scripts from starting system-wide daemons on default ports
  made_policy=
  if [ ! -e /usr/sbin/policy-rc.d ]; then printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d; chmod 755 /usr/sbin/policy-rc.d; made_policy=1; fi
  export DEBIAN_FRONTEND=noninteractive
  # an install cut short earlier leaves dpkg refusing every later one until it is configured
  dpkg --configure -a >>"$DIR/apt.log" 2>&1 || true
  if ! apt-get install -y -q --no-install-recommends "${missing[@]}" >"$DIR/apt.log" 2>&1; then
    apt-get update -q >>"$DIR/apt.log" 2>&1
    apt-get install -y -q --no-install-recommends "${missing[@]}" >>"$DIR/apt.log" 2>&1 || { [ -n "$made_policy" ] && rm -f /usr/sbin/policy-rc.d; tail -20 "$DIR/apt.log" >&2; exit 1; }
  fi
  [ -n "$made_policy" ] && rm -f /usr/sbin/policy-rc.d
  log "installed in $(since "$t") s"
fi

mkdir -p "$PIDS"
# free ports: hold all listeners open at once so no two are the same, then release
read -r PORT_MON PORT_RGW PORT_PG PORT_REDIS < <(node -e '
  const net=require("net"); const ss=[...Array(4)].map(()=>net.createServer());
  Promise.all(ss.map(s=>new Promise(r=>s.listen(0,"127.0.0.1",()=>r(s.address().port)))))
    .then(ps=>{console.log(ps.join(" ")); ss.forEach(s=>s.close());});')
T_ALL=$(now)
spawn() {  # spawn NAME LOGFILE CMD...  (detached, pid recorded; the command must stay in the foreground)
  local name=$1 out=$2; shift 2
  setsid "$@" >"$out" 2>&1 </dev/null &
  echo $! >"$PIDS/$name.pid"
}
ENV_OUT=()

# ---------------------------------------------------------------- S3: Ceph mon + OSD + radosgw
start_s3() {
  local C=$DIR/ceph t fsid; t=$(now)
  mkdir -p "$C"/{mon,osd,run,log,crash}
  fsid=$(cat /proc/sys/kernel/random/uuid)
  S3_ACCESS_KEY=test$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
  S3_SECRET_KEY=$(od -An -N20 -tx1 /dev/urandom | tr -d ' \n')
  cat >"$C/ceph.conf" <<EOF
[global]
fsid = $fsid
mon host = [v2:127.0.0.1:$PORT_MON]
public addr = 127.0.0.1
public network = 127.0.0.0/8
ms bind ipv4 = true
ms bind ipv6 = false
# "auth none": without a session key, the daemons' default "secure" mon mode fails with -13
auth cluster required = none
auth service required = none
auth client required = none
ms mon client mode = crc
run dir = $C/run
admin socket = $C/run/\$name.\$pid.asok
log file = $C/log/\$name.log
crash dir = $C/crash
keyring = $C/keyring
mon cluster log file = $C/log/\$cluster.\$channel.log
osd crush chooseleaf type = 0
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
mon allow pool size one = true
mon allow pool delete = true
mon max pg per osd = 1000
mon warn on pool no redundancy = false
# commit monitor map changes quickly (pool creation); default 1 s per proposal
paxos propose interval = 0.05
paxos min wait = 0.01

[mon]
mon data = $C/mon
mon data avail crit = 0
mon data avail warn = 0

[osd]
osd data = $C/osd
osd objectstore = memstore
# memstore reports this as the device size (the data lives in the OSD's RAM); default 1 GiB
memstore device bytes = ${S3_MEM_BYTES:-8589934592}
osd class load list = *
osd class default list = *

[client.rgw.test]
rgw frontends = beast endpoint=127.0.0.1:$PORT_RGW
rgw dns name = localhost
rgw thread pool size = 64
# garbage-collect deleted object data soon (default waits 2 h), so memstore RAM is freed
rgw gc obj min wait = 30
rgw gc processor period = 30
EOF
  : >"$C/keyring"
  export CEPH_CONF=$C/ceph.conf
  monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$PORT_MON]" "$C/monmap" >"$C/log/setup.log" 2>&1
  ceph-mon --id a --mkfs --monmap "$C/monmap" --keyring /dev/null >>"$C/log/setup.log" 2>&1
  spawn mon "$C/log/mon.out" ceph-mon --id a -f
  # (timeout --foreground: stay in the script's process group, so a signal to the group ends the client too)
  local osd_id; osd_id=$(timeout --foreground 60 ceph osd create 2>>"$C/log/setup.log")
  timeout --foreground 60 ceph osd crush add "osd.$osd_id" 1 root=default >>"$C/log/setup.log" 2>&1
  ceph-osd --id "$osd_id" --mkfs >>"$C/log/setup.log" 2>&1
  spawn osd "$C/log/osd.out" ceph-osd --id "$osd_id" -f
  for _ in $(seq 1 300); do timeout --foreground 10 ceph osd stat 2>/dev/null | grep -q '1 up' && break; sleep 0.1; done
  # creates the RGW pools (.rgw.root, default.rgw.*) and the S3 user
  timeout --foreground 120 radosgw-admin user create --uid test --display-name test \
    --access-key "$S3_ACCESS_KEY" --secret-key "$S3_SECRET_KEY" >"$C/user.json" 2>>"$C/log/setup.log"
  spawn rgw "$C/log/rgw.out" radosgw -n client.rgw.test -f
  for _ in $(seq 1 600); do http_ok "$PORT_RGW" && break; sleep 0.1; done
  http_ok "$PORT_RGW" || { log "radosgw did not answer; see $C/log"; return 1; }
  log "s3 (radosgw) ready in $(since "$t") s"
  ENV_OUT+=("S3_ENDPOINT=http://127.0.0.1:$PORT_RGW" "S3_REGION=us-east-1" "S3_FORCE_PATH_STYLE=true"
            "S3_ACCESS_KEY=$S3_ACCESS_KEY" "S3_SECRET_KEY=$S3_SECRET_KEY"
            "AWS_ACCESS_KEY_ID=$S3_ACCESS_KEY" "AWS_SECRET_ACCESS_KEY=$S3_SECRET_KEY" "CEPH_CONF=$C/ceph.conf")
}

# ---------------------------------------------------------------- PostgreSQL 15
start_pg() {
  local P=$DIR/pg t bin as=() pw; t=$(now)
  bin=/usr/lib/postgresql/15/bin
  pw=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
  mkdir -p "$P"
  if [ "$(id -u)" = 0 ]; then
    # initdb/postgres refuse to run as root: run them as the 'postgres' user (made by postgresql-common)
    as=(runuser -u postgres --)
    chown postgres: "$P"; chmod 700 "$P"
    chmod o+x "$DIR"    # mktemp -d makes DIR 0700; postgres must be able to traverse it
    "${as[@]}" test -x "$P" || { log "user postgres cannot reach $P (a parent dir is not o+x)"; return 1; }
  fi
  printf '%s\n' "$pw" >"$P/pwfile"; [ "$(id -u)" = 0 ] && chown postgres: "$P/pwfile"
  mkdir -p "$P/sock"; [ "$(id -u)" = 0 ] && chown postgres: "$P/sock"
  "${as[@]}" "$bin/initdb" -D "$P/data" -U postgres --pwfile="$P/pwfile" -E UTF8 --locale=C.UTF-8 \
    --auth-local=trust --auth-host=scram-sha-256 --no-sync >"$P/initdb.log" 2>&1
  rm -f "$P/pwfile"
  # dynamic shared memory as files in the data dir: one that a stop had to kill leaves nothing in /dev/shm
  "${as[@]}" "$bin/pg_ctl" -D "$P/data" -l "$P/postgres.log" -w -t 60 start -o \
    "-c listen_addresses=127.0.0.1 -c port=$PORT_PG -c unix_socket_directories=$P/sock -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c dynamic_shared_memory_type=mmap" >"$P/pg_ctl.log" 2>&1
  head -1 "$P/data/postmaster.pid" >"$PIDS/pg.pid"
  "${as[@]}" "$bin/psql" -h "$P/sock" -p "$PORT_PG" -U postgres -d postgres -qAt -c 'CREATE DATABASE app' >/dev/null
  log "postgres ready in $(since "$t") s"
  ENV_OUT+=("DATABASE_URL=postgres://postgres:$pw@127.0.0.1:$PORT_PG/app" "PGSOCKET_DIR=$P/sock")
}

# ---------------------------------------------------------------- Redis 7
start_redis() {
  local R=$DIR/redis t; t=$(now)
  mkdir -p "$R"
  spawn redis "$R/redis.out" redis-server --bind 127.0.0.1 --port "$PORT_REDIS" --save '' --appendonly no \
    --dir "$R" --daemonize no --logfile "$R/redis.log" --protected-mode yes
  for _ in $(seq 1 100); do [ "$(redis-cli -h 127.0.0.1 -p "$PORT_REDIS" ping 2>/dev/null)" = PONG ] && break; sleep 0.05; done
  [ "$(redis-cli -h 127.0.0.1 -p "$PORT_REDIS" ping 2>/dev/null)" = PONG ] || { log "redis did not answer; see $R"; return 1; }
  log "redis ready in $(since "$t") s"
  ENV_OUT+=("REDIS_URL=redis://127.0.0.1:$PORT_REDIS/0")
}

trap 'log "start failed; stopping what was started"; "$0" stop "$DIR"' ERR
[ -n "${SKIP_REDIS:-}" ] || start_redis
[ -n "${SKIP_PG:-}" ]    || start_pg
[ -n "${SKIP_S3:-}" ]    || start_s3
trap - ERR
log "all started in $(since "$T_ALL") s; stop with: $0 stop $DIR"
printf '%s\n' "${ENV_OUT[@]}" >"$DIR/env"
printf '%s\n' "${ENV_OUT[@]}"
