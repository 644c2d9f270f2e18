#!/bin/sh
# The sentiment service's busybox twin (for the docker runner's busybox image, which has no
# Node): a word-list score of ?text=… or of a POSTed {"text": "…"}, as JSON like server.mjs's.
# Positive words count +1, negative ones -1; the sum is the sentiment.
if [ "$REQUEST_METHOD" = POST ]; then
  body=$(head -c "${CONTENT_LENGTH:-0}")
  text=$(printf '%s' "$body" | sed -n 's/.*"text"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p')
else
  text=$(printf '%s' "$QUERY_STRING" | sed -n 's/^\(.*&\)\{0,1\}text=\([^&]*\).*/\2/p')
  # %XX and + as the query writes them
  text=$(printf '%b' "$(printf '%s' "$text" | sed 's/+/ /g; s/%\([0-9A-Fa-f][0-9A-Fa-f]\)/\\x\1/g')")
fi
score=$(printf '%s\n' "$text" | tr 'A-Z' 'a-z' | tr -c 'a-z\n' ' ' | tr ' ' '\n' | awk '
  /^(love|lovely|great|good|fast|excellent|happy|nice|wonderful)$/ { s++ }
  /^(hate|terrible|bad|awful|slow|sad|horrible|poor)$/ { s-- }
  END { print s + 0 }')
printf 'Content-Type: application/json\r\n\r\n'
printf '{"text":"%s","sentiment":%s,"replica":"%s"}\n' "$(printf '%s' "$text" | tr -d '"\\')" "$score" "${IDLEGRID_JOB_ID:-unknown}"
