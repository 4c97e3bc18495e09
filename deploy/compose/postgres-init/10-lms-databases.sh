#!/bin/sh
# Run once by the postgres image, on an empty data volume: one role and one database per service.
set -eu
psql -v ON_ERROR_STOP=1 --username postgres <<SQL
CREATE ROLE lms_central LOGIN PASSWORD '${CENTRAL_DB_PASSWORD}';
CREATE ROLE lms_classroom LOGIN PASSWORD '${CLASSROOM_DB_PASSWORD}';
CREATE DATABASE lms_central OWNER lms_central;
CREATE DATABASE lms_classroom OWNER lms_classroom;
SQL
