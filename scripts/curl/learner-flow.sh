#!/usr/bin/env bash
# A learner signs in, opens a lesson, takes its quiz; a teacher then downloads the activity log that holds the result.
# Needs only curl (and unzip to look inside the ZIP). Run against `make run`:  bash scripts/curl/learner-flow.sh
# The ids are those of the demo data (make seed-demo).
set -euo pipefail
BASE=${CLASSROOM_URL:-http://127.0.0.1:3001}
OUT=${OUT:-studentlog.zip}

LESSON=d0000000-0000-4000-8000-000000000008
QUIZ=d0000000-0000-4000-8000-000000000140
Q1=d0000000-0000-4000-8000-000000000150; LQ1=d0000000-0000-4000-8000-000000000170
Q2=d0000000-0000-4000-8000-000000000151; LQ2=d0000000-0000-4000-8000-000000000171
Q3=d0000000-0000-4000-8000-000000000152; LQ3=d0000000-0000-4000-8000-000000000172

token_of() { sed -n 's/.*"accessToken":"\([^"]*\)".*/\1/p'; }

echo "== 1. the learner signs in"
LEARNER=$(curl -fsS -X POST "$BASE/auth/login" -H 'Content-Type: application/json' \
  -d '{"studentusername":"demo.student","studentpassword":"demo"}' | token_of)
[ -n "$LEARNER" ] || { echo "sign-in failed" >&2; exit 1; }

echo "== 2. the learner opens the lesson and its quiz"
curl -fsS "$BASE/lesson/$LESSON/learning" -H "Authorization: Bearer $LEARNER"; echo
curl -fsS "$BASE/question/quiz/$QUIZ" -H "Authorization: Bearer $LEARNER" | head -c 400; echo ' …'

echo "== 3. the learner submits the quiz (sending the same body again changes nothing)"
START=$(( $(date +%s) * 1000 - 120000 )); END=$(( $(date +%s) * 1000 ))
BODY=$(cat <<JSON
{"starttime":$START,"endtime":$END,"result":[
 {"iscorrect":true,"lessonquizid":"$QUIZ","lessonquizquestionid":"$LQ1","questionid":"$Q1"},
 {"iscorrect":true,"lessonquizid":"$QUIZ","lessonquizquestionid":"$LQ2","questionid":"$Q2"},
 {"iscorrect":true,"lessonquizid":"$QUIZ","lessonquizquestionid":"$LQ3","questionid":"$Q3"}]}
JSON
)
curl -fsS -X POST "$BASE/result/lesson/quiz/$QUIZ" -H "Authorization: Bearer $LEARNER" -H 'Content-Type: application/json' -d "$BODY"; echo
curl -fsS -X POST "$BASE/result/lesson/quiz/$QUIZ" -H "Authorization: Bearer $LEARNER" -H 'Content-Type: application/json' -d "$BODY"; echo

echo "== 4. the teacher signs in and downloads the activity log"
TEACHER=$(curl -fsS -X POST "$BASE/auth/login" -H 'Content-Type: application/json' \
  -d '{"studentusername":"demo.teacher","studentpassword":"demo"}' | token_of)
curl -fsS "$BASE/export/log" -H "Authorization: Bearer $TEACHER" -o "$OUT" -D - | grep -i -E '^(content-type|content-disposition):'
echo "saved $OUT"
if command -v unzip >/dev/null; then
  unzip -l "$OUT"
  unzip -p "$OUT" log.ini | grep -o "\"studentprogressreferenceid\":\"$QUIZ\"" | head -1 && echo "the quiz result is in log.ini"
fi

echo "== 5. a learner token is refused on the export (403)"
curl -sS -o /dev/null -w '%{http_code}\n' "$BASE/export/log" -H "Authorization: Bearer $LEARNER"
