#!/bin/bash
# One GiB through the S3 front with boto3's default settings (issue 24's
# client list): the Run:ai streamer's pattern (a list with a prefix, then 16
# concurrent 8 MiB ranged GETs), download_file and upload_file (multipart,
# checksums as boto3 sends them by default), each byte-exact. Reads are
# anonymous, writes allowed by --allow-anonymous-writes. Needs about 3 GiB
# of free space under the test directory.
. "$(dirname "$0")/lib.sh" "$@"
need_s3py

ROOT=$T/root
st "$ROOT/llm/one/model.safetensors" $((256 * 1024 * 1024)) # 1 GiB of floats
start_daemon "$ROOT" --s3-bucket models --allow-anonymous-writes || finish
note "serving $URL"
s3py_checks big "$URL" "$ROOT" llm/one/model.safetensors up/one.safetensors
check_nomatch "no staging file left" "$(find "$ROOT/.ztensord-staging" -type f 2>/dev/null)" .
finish
