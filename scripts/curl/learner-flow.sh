#!/usr/bin/env bash
# A learner signs in, opens a lesson, takes its quiz; a teacher then downloads the activity log that holds the result.
# Needs only curl (and unzip to look inside the ZIP). Run against `make run`:  bash scripts/curl/learner-flow.sh
# The ids are those of the demo data (make seed-demo).
set -euo pipefail
BASE=${CLASSROOM_URL:-http://127.0.0.1:3001}
OUT=${OUT:-studentlog.zip}

# (shared/src/demo/ids.ts: lesson 1 "Counting to ten", its quiz, the quiz's four questions and their link rows)
LESSON=b0000000-0000-4000-8000-000000000009
QUIZ=b0000000-0000-4000-8000-000000000011
Q1=b0000000-0000-4000-8000-000000000100; LQ1=b0000000-0000-4000-8000-000000000400
Q2=b0000000-0000-4000-8000-000000000101; LQ2=b0000000-0000-4000-8000-000000000401
Q3=b0000000-0000-4000-8000-000000000102; LQ3=b0000000-0000-4000-8000-000000000402
Q4=b0000000-0000-4000-8000-000000000103; LQ4=b0000000-0000-4000-8000-000000000403

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
 {"iscorrect":true,"lessonquizid":"$QUIZ","lessonquizquestionid":"$LQ3","questionid":"$Q3"},
 {"iscorrect":true,"lessonquizid":"$QUIZ","lessonquizquestionid":"$LQ4","questionid":"$Q4"}]}
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
