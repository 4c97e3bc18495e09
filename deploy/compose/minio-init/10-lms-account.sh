#!/bin/sh
# The services' own MinIO account (compose.yaml, minio-init): a user with the rights on the services'
# bucket alone, never MinIO's root. Run by the `minio-init` one-off container with MinIO's root
# credentials, which only it and MinIO hold. Safe to run again: the bucket, the policy and the user are
# left as they are or brought back to this; a changed LMS_S3_SECRET_KEY becomes the user's password.
set -eu
: "${MINIO_ROOT_USER:?}" "${MINIO_ROOT_PASSWORD:?}" "${LMS_S3_ACCESS_KEY:?}" "${LMS_S3_SECRET_KEY:?}"
bucket=${LMS_S3_BUCKET:-lms}
if [ "$LMS_S3_ACCESS_KEY" = "$MINIO_ROOT_USER" ]; then
  echo "minio-init: LMS_S3_ACCESS_KEY must not be MinIO's root user" >&2
  exit 1
fi
tries=0
until mc alias set lms http://minio:9000 "$MINIO_ROOT_USER" "$MINIO_ROOT_PASSWORD" >/dev/null 2>&1; do
  tries=$((tries + 1))
  [ "$tries" -lt 60 ] || { echo "minio-init: MinIO did not answer within 60 s" >&2; exit 1; }
  sleep 1
done
mc mb --ignore-existing "lms/$bucket"
# What central does with its bucket: checks it is there, lists keys (backup), reads, writes, deletes objects
# and abandons a failed upload.
cat > /tmp/lms-services.json <<POLICY
{
  "Version": "2012-10-17",
  "Statement": [
    {
      "Effect": "Allow",
      "Action": ["s3:GetBucketLocation", "s3:ListBucket", "s3:ListBucketMultipartUploads"],
      "Resource": ["arn:aws:s3:::$bucket"]
    },
    {
      "Effect": "Allow",
      "Action": ["s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload",
                 "s3:ListMultipartUploadParts"],
      "Resource": ["arn:aws:s3:::$bucket/*"]
    }
  ]
}
POLICY
mc admin policy create lms lms-services /tmp/lms-services.json
mc admin user add lms "$LMS_S3_ACCESS_KEY" "$LMS_S3_SECRET_KEY"
mc admin policy attach lms lms-services --user "$LMS_S3_ACCESS_KEY" 2>/dev/null || true
# Attached, whatever mc said (it refuses to attach a policy twice): the user's policy is this one.
mc admin user info lms "$LMS_S3_ACCESS_KEY" | grep -q 'lms-services'
echo "minio-init: user $LMS_S3_ACCESS_KEY may use bucket $bucket (policy lms-services)"
