"""s3fill.py: fills a moto_server (the reference S3) with boto3, for the t_s3.sh tests.

    s3fill.py ENDPOINT iam KEYFILE           IAM user with s3:* (moto in auth
                                             mode); writes "KEY SECRET" to KEYFILE
    s3fill.py ENDPOINT put BUCKET PREFIX DIR [--sha256 NAME]... [--create]
                                             every file under DIR to PREFIX +
                                             its relative name; NAME uploaded
                                             with a SHA256 checksum
    s3fill.py ENDPOINT key BUCKET KEY TEXT   one object under a raw key

Keys come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (any value for moto
without auth). Loopback only.
"""
import json
import os
import sys

import boto3


def client(endpoint, service):
    return boto3.client(service, endpoint_url=endpoint, region_name="us-east-1",
                        aws_access_key_id=os.environ.get("AWS_ACCESS_KEY_ID", "test"),
                        aws_secret_access_key=os.environ.get("AWS_SECRET_ACCESS_KEY", "test"))


def main():
    endpoint, cmd = sys.argv[1], sys.argv[2]
    if cmd == "iam":
        iam = client(endpoint, "iam")
        iam.create_user(UserName="puller")
        k = iam.create_access_key(UserName="puller")["AccessKey"]
        doc = {"Version": "2012-10-17",
               "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}
        arn = iam.create_policy(PolicyName="s3all", PolicyDocument=json.dumps(doc))["Policy"]["Arn"]
        iam.attach_user_policy(UserName="puller", PolicyArn=arn)
        with open(sys.argv[3], "w") as f:
            f.write("%s %s\n" % (k["AccessKeyId"], k["SecretAccessKey"]))
        return
    s3 = client(endpoint, "s3")
    if cmd == "put":
        bucket, prefix, top = sys.argv[3:6]
        rest = sys.argv[6:]
        sha = {rest[i + 1] for i in range(len(rest)) if rest[i] == "--sha256"}
        if "--create" in rest:
            s3.create_bucket(Bucket=bucket)
        for d, _, files in os.walk(top):
            for n in sorted(files):
                p = os.path.join(d, n)
                rel = os.path.relpath(p, top)
                kw = {"ChecksumAlgorithm": "SHA256"} if rel in sha else {}
                with open(p, "rb") as f:
                    s3.put_object(Bucket=bucket, Key=prefix + rel, Body=f.read(), **kw)
    elif cmd == "key":
        bucket, key, text = sys.argv[3:6]
        s3.put_object(Bucket=bucket, Key=key, Body=text.encode())


if __name__ == "__main__":
    main()
