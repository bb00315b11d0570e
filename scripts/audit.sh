#!/usr/bin/env bash
# npm audit policy (docs/security.md "Dependencies"): the production dependency
# tree must have no known vulnerability rated high or critical. Dev-only tools
# (build, lint, test) never run in production; they are reported, not failed on.
#
# Exit codes: 0 clean; 1 a high or critical advisory in production
# dependencies; 2 no advisory source could be asked — with --allow-unavailable
# that is a loud warning and exit 0, never a silent pass.
#
# The one advisory source: the registry's audit endpoint (npm audit). Where it is
# missing, no other source is reachable from this project's machines (checked
# 2026-11-26, docs/security.md "Dependencies"):
# - the registry answers 405 to POST /-/npm/v1/security/advisories/bulk and to
#   the older /-/npm/v1/security/audits/quick;
# - OSV (osv.dev) and the GitHub Advisory Database are other hosts, and these
#   machines reach the package registries only;
# - no maintained npm package ships OSV data: @renovatebot/osv-offline downloads
#   its database from GitHub releases at run time, and @renovatebot/osv-offline-db
#   is only the code that reads it.
set -uo pipefail
cd "$(dirname "$0")/.."
allow_unavailable=0
[ "${1:-}" = "--allow-unavailable" ] && allow_unavailable=1

out=$(npm audit --omit=dev --audit-level=high 2>&1)
code=$?
printf '%s\n' "$out" | grep -v '^npm warn Unknown user config'
if [ $code -ne 0 ] && printf '%s' "$out" | grep -qiE 'audit endpoint returned an error|405 Method Not Allowed|ENOTFOUND|ECONNREFUSED|ETIMEDOUT|EAI_AGAIN|network'; then
  registry=$(npm config get registry 2>/dev/null)
  echo "audit: WARNING: production dependencies were NOT audited: the registry ($registry) has no audit endpoint" >&2
  echo "audit: or could not be reached, and no other advisory source is reachable from here (see the head of $0)." >&2
  [ $allow_unavailable -eq 1 ] && exit 0
  exit 2
fi
if [ $code -ne 0 ]; then
  echo "audit: FAIL: a high or critical advisory affects a production dependency (see above)." >&2
  exit 1
fi
echo "audit: production dependencies have no high or critical advisory."
echo "audit: the whole tree, dev tools included, for information:"
npm audit --audit-level=none 2>&1 | grep -v '^npm warn Unknown user config' || true
exit 0
