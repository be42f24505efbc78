// The AWS SDK for JavaScript v3 against the S3 front (t_clients.sh): list
// with a prefix, then a ranged get. Prints "ok NAME" / "FAIL NAME: why".
// node js_check.cjs NODE_MODULES URL KEY FIRST_BYTES_HEX
const path = require("path");
const [modules, url, key, wantHex] = process.argv.slice(2);
const { S3Client, ListObjectsV2Command, GetObjectCommand } = require(path.join(modules, "@aws-sdk/client-s3"));
const s3 = new S3Client({ endpoint: url, region: "us-east-1", forcePathStyle: true,
  credentials: { accessKeyId: "dummy", secretAccessKey: "dummy" } });
(async () => {
  const l = await s3.send(new ListObjectsV2Command({ Bucket: "models", Prefix: "llm/" }));
  const keys = (l.Contents || []).map((o) => o.Key);
  console.log(keys.includes(key) ? "ok js: list" : "FAIL js: list: " + keys);
  const g = await s3.send(new GetObjectCommand({ Bucket: "models", Key: key, Range: "bytes=0-15" }));
  const b = Buffer.from(await g.Body.transformToByteArray()).toString("hex");
  console.log(b === wantHex ? "ok js: ranged get" : "FAIL js: ranged get: " + b);
})().catch((e) => { console.log("FAIL js: " + e); });
