"""One GiB through the S3 front with boto3's default settings (t_big.sh):
the Run:ai streamer's pattern, download_file and upload_file. Prints one
line per check, "ok NAME" or "FAIL NAME: why", and exits 0.

  s3big.py URL ROOT KEY UPKEY
      KEY    a file under ROOT served as s3://models/KEY (1 GiB)
      UPKEY  where upload_file puts the same bytes back

Files are compared by sha256 (hashlib.file_digest), so the script holds at
most the 16 ranged answers in flight (128 MiB), never the whole object.
"""
import hashlib
import os
import sys

import boto3

import s3check
from s3check import check


def sha256_of(path):
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def default_client(url):
    """boto3 as a user runs it: default config, checksums included."""
    return boto3.client("s3", endpoint_url=url, region_name="us-east-1",
                        aws_access_key_id="dummy", aws_secret_access_key="dummy")


def main(url, root, key, upkey):
    s3 = default_client(url)
    src = os.path.join(root, key)
    want = sha256_of(src)
    s3check.streamer(url, root, key)  # its comparisons read the file range by range
    dst = os.path.join(os.environ.get("T", "/tmp"), "big.dl")
    s3.download_file("models", key, dst)
    check("download_file of %d bytes (default settings: ranged parts, 10 threads)"
          % os.path.getsize(src), sha256_of(dst) == want)
    s3.upload_file(dst, "models", upkey)
    os.unlink(dst)
    got = os.path.join(root, upkey)
    check("upload_file of the same bytes (default settings: multipart, checksums)",
          os.path.exists(got) and sha256_of(got) == want)
    h = s3.head_object(Bucket="models", Key=upkey)
    check("HeadObject of the upload: size and a multipart ETag",
          h["ContentLength"] == os.path.getsize(src) and "-" in h["ETag"], h["ETag"])


if __name__ == "__main__":
    main(*sys.argv[1:])
