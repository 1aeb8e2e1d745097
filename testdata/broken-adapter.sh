#!/bin/sh
# A broken lock-client adapter for tests, in another language than Go:
# it answers hello, grants every acquire and releases every release for
# $2 requests, then does what $1 says: exit (status 3, a line on stderr)
# or garbage (a line on stdout that is no JSON). Usage: MODE N
mode=$1 after=$2 n=0
while IFS= read -r line; do
  id=${line#*\"id\":}; id=${id%%[,\}]*}
  case $line in
  *'"type":"hello"'*)
    printf '{"type":"hello_ok","in_reply_to":%s,"protocol":1,"library":{"name":"broken-sh","version":"0"},"capabilities":{},"validity":{"method":"ttl"}}\n' "$id"
    continue ;;
  *'"type":"cancel"'*) continue ;;
  esac
  n=$((n + 1))
  if [ "$n" -gt "$after" ]; then
    case $mode in
    exit) echo "broken-adapter.sh: exiting after $after requests" >&2; exit 3 ;;
    garbage) echo "Traceback (most recent call last): $line" ;;
    esac
    continue
  fi
  case $line in
  *'"type":"acquire"'*) printf '{"type":"granted","in_reply_to":%s,"token":"t%s","validity_ms":900}\n' "$id" "$id" ;;
  *) printf '{"type":"released","in_reply_to":%s}\n' "$id" ;;
  esac
done
