#!/usr/bin/env bash
# The monitoring files the packages install (resources/monitoring), checked by promtool:
# the alert rules parse (check rules) and fire as their tests say (test rules), and every
# query of the Grafana dashboard is valid PromQL (checked as recording rules, with
# Grafana's $__rate_interval read as 5m). That every metric they name is exported by a
# running server is tests/tst_monitoring.cpp. Exit 77 (skipped) without promtool on a
# developer machine; under CI (CI set) that is a failure.
set -euo pipefail
cd "$(dirname "$0")/../resources/monitoring"
if ! command -v promtool >/dev/null; then
  echo "promtool is not installed (Debian: prometheus; scripts/install-deps.sh)" >&2
  [ -n "${CI:-}" ] && exit 1
  exit 77
fi
promtool check rules flashstock.rules.yml
promtool test rules flashstock.rules.test.yml

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# One recording rule per dashboard query; jq writes them as JSON strings, valid YAML.
{
  echo "groups:"
  echo "  - name: dashboard"
  echo "    rules:"
  jq -r '[.. | objects | select(has("expr")) | .expr] | to_entries[]
         | "      - record: dashboard:query_\(.key)\n        expr: \(.value | gsub("\\$__rate_interval"; "5m") | tojson)"' \
    flashstock-dashboard.json
} >"$work/dashboard.rules.yml"
queries=$(jq '[.. | objects | select(has("expr"))] | length' flashstock-dashboard.json)
[ "$queries" -gt 0 ] || { echo "the dashboard has no query" >&2; exit 1; }
echo "dashboard: $queries queries"
promtool check rules "$work/dashboard.rules.yml"
