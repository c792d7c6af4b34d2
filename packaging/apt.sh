# Sourced by .ci/run, packaging/build.sh and packaging/smoke.sh: one way to apt-get install what a build or a test
# run needs on a fresh Debian machine (run as root).
#
#   apt_install PKG...     returns 0 when every package is installed, 1 otherwise (the reason is printed to stderr)
#
# A fresh machine can come up with dpkg half-done (seen on CI: "E: dpkg was interrupted, you must manually run
# 'dpkg --configure -a'", man-db left half configured), or with its package lists missing or stale. apt_install tries
# the plain install first (quiet, fast when the lists are good), then finishes dpkg's interrupted work
# (dpkg --configure -a), refreshes the lists (apt-get update) and tries again. A lock held by another apt process is
# waited for (up to 300 s) instead of failing at once.

apt_install() {
  [ "$#" -gt 0 ] || return 0
  local log rc
  log=$(mktemp /tmp/liyuan-apt.XXXXXX)
  export DEBIAN_FRONTEND=noninteractive
  local apt=(apt-get -y -qq -o DPkg::Lock::Timeout=300 --no-install-recommends)
  if "${apt[@]}" install "$@" >"$log" 2>&1; then
    rm -f "$log"
    return 0
  fi
  if grep -q "dpkg was interrupted" "$log" || [ -n "$(dpkg --audit 2>/dev/null)" ]; then
    echo "apt.sh: dpkg was left half-done on this machine; finishing it (dpkg --configure -a)" >&2
    dpkg --force-confdef --force-confold --configure -a >>"$log" 2>&1 || true
  fi
  apt-get -qq -o DPkg::Lock::Timeout=300 update >>"$log" 2>&1 || true
  "${apt[@]}" install "$@" >>"$log" 2>&1 && rc=0 || rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "apt.sh: apt-get install $* failed (exit $rc); its last words:" >&2
    tail -n 5 "$log" | sed 's/^/    /' >&2
  fi
  rm -f "$log"
  return "$rc"
}
