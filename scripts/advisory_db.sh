#!/usr/bin/env bash
# Puts the RustSec advisory database where `cargo deny` (run from the repo
# root with deny.toml's `db-path`) finds it, from a git bundle snapshot, so
# the advisories check runs offline. Prints the snapshot's date and age:
# advisories published after it are not seen.
#
# Usage: scripts/advisory_db.sh DB_ROOT [BUNDLE]
#   BUNDLE defaults to $ENGRAM_ADVISORY_DB_BUNDLE, else the first that exists
#   of ../shared/data/rustsec-advisory-db.bundle (beside the checkout) and
#   /work/shared/data/rustsec-advisory-db.bundle.
#
# Where GitHub is reachable, the live database is used instead by deleting
# DB_ROOT and running `cargo deny check advisories` without --offline.
set -euo pipefail

root=${1:?usage: scripts/advisory_db.sh DB_ROOT [BUNDLE]}
bundle=${2:-${ENGRAM_ADVISORY_DB_BUNDLE:-}}
if [[ -z $bundle ]]; then
    here=$(cd "$(dirname "$0")/.." && pwd)
    for candidate in "$here/../shared/data/rustsec-advisory-db.bundle" \
        /work/shared/data/rustsec-advisory-db.bundle; do
        if [[ -f $candidate ]]; then
            bundle=$candidate
            break
        fi
    done
fi
if [[ -z $bundle || ! -f $bundle ]]; then
    echo "advisory-db: no snapshot found; set ENGRAM_ADVISORY_DB_BUNDLE to a git bundle of rustsec/advisory-db" >&2
    exit 2
fi

# cargo-deny names the clone of https://github.com/rustsec/advisory-db so.
db="$root/advisory-db-3157b0e258782691"
head=$(git bundle list-heads "$bundle" | awk '$2 == "HEAD" || $2 == "refs/heads/main" { print $1; exit }')
if [[ -z $head ]]; then
    echo "advisory-db: $bundle has no main branch" >&2
    exit 2
fi
if [[ "$(git -C "$db" rev-parse -q --verify HEAD 2>/dev/null || true)" != "$head" ]]; then
    rm -rf "$db"
    mkdir -p "$db"
    git -C "$db" init -q
    # The snapshot is cut from a shallow clone: declare its tip shallow, or
    # the fetch looks for parents the bundle does not hold.
    echo "$head" > "$db/.git/shallow"
    git -C "$db" fetch -q "$bundle" "$head:refs/heads/main"
    git -C "$db" -c advice.detachedHead=false checkout -q main
fi
date=$(git -C "$db" show -s --format=%cI HEAD)
age_days=$(( ($(date +%s) - $(git -C "$db" show -s --format=%ct HEAD)) / 86400 ))
echo "advisory-db: snapshot ${head:0:7} of $date ($age_days days old)"
