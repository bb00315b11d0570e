#!/bin/sh
# Container entrypoint for File Cloud (also runs outside Docker: FILE_CLOUD_HOME
# points at the installation, /app in the image).
#   (no arguments) / serve [options]   → the server
#   --port 9000 …                      → options alone mean "serve with these options"
#   user add alice …                   → a user command on the same data dir
#   anything else (sh, node …)         → run as given
set -eu
home="${FILE_CLOUD_HOME:-/app}"
data="${FILE_CLOUD_DATA_DIR:-/data}"

if [ "$#" -eq 0 ]; then set -- serve; fi
case "$1" in
  -*) set -- serve "$@" ;;
esac

case "$1" in
  serve|user)
    # Fail with one clear line when the volume is not writable (a host directory
    # owned by another uid is the usual cause), instead of a stack trace later.
    if ! mkdir -p "$data" 2>/dev/null || [ ! -w "$data" ]; then
      echo "file-cloud: data directory $data is not writable by uid $(id -u); chown it to $(id -u):$(id -g) or mount a named volume" >&2
      exit 1
    fi
    exec node "$home/bin/file-cloud.js" "$@"
    ;;
  *)
    exec "$@"
    ;;
esac
