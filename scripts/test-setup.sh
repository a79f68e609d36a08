#!/usr/bin/env bash
# Installs the Debian packages the tests need when they are missing (run by scripts/test.sh before
# the tests). As root: apt-get install. Not root: installs nothing and says so; the tests that
# need a missing package then skip with the reason (under CI, any truthy CI, they fail instead); this
# script itself never fails the run.
#
# Needed packages, one check each (add a line for a new one):
#   postgresql  throwaway PostgreSQL servers for the authentication store tests (test/auth/postgres.test.ts)
#   redis-server  throwaway Redis servers for the cluster coordination tests (test/store/coordination/)
#   git         `git http-backend` and git plumbing for the git backend tests (test/sources/git*.test.ts)
#   docker-registry  the CNCF distribution registry for the OCI backend and `vexil bundle` tests
#   openssl     a certificate for the registry's token service (test/sources/oci-registry-client.test.ts)
#   chromium    headless browser for the CORS and browser-SDK tests (test/support/browser.ts; driven by playwright-core)
set -uo pipefail

missing=()
have_postgresql() { compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null && id -u postgres >/dev/null 2>&1; }
have_postgresql || missing+=(postgresql)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v git >/dev/null 2>&1 && [ -x "$(git --exec-path 2>/dev/null)/git-http-backend" ] || missing+=(git)
command -v docker-registry >/dev/null 2>&1 || missing+=(docker-registry)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
[ -x /usr/bin/chromium ] || missing+=(chromium)

[ ${#missing[@]} -eq 0 ] && exit 0

# Never fails the run itself: the tests that need a missing package report it (skip, or fail under CI).
fail_or_warn() {
  echo "test setup: $1; the tests that need them will skip (fail under CI)" >&2
  exit 0
}

if [ "$(id -u)" != "0" ]; then
  fail_or_warn "not root, cannot install the missing Debian packages: ${missing[*]}"
fi
if ! command -v apt-get >/dev/null; then
  fail_or_warn "no apt-get, cannot install the missing packages: ${missing[*]}"
fi
echo "test setup: installing ${missing[*]}" >&2
if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >&2; then
  fail_or_warn "apt-get could not install ${missing[*]}"
fi
exit 0
