// The AWS SDK for JavaScript v3 writing to the S3 front (t_writes.sh): a
// PutObject and a multipart upload (Create, two UploadParts, Complete),
// each read back. Prints "ok NAME" / "FAIL NAME: why".
// node js_put.cjs NODE_MODULES URL FILE
const fs = require("fs");
const path = require("path");
const [modules, url, file] = process.argv.slice(2);
const s3sdk = require(path.join(modules, "@aws-sdk/client-s3"));
const s3 = new s3sdk.S3Client({ endpoint: url, region: "us-east-1", forcePathStyle: true,
  credentials: { accessKeyId: "dummy", secretAccessKey: "dummy" } });
const data = fs.readFileSync(file);
async function get(key) {
  const g = await s3.send(new s3sdk.GetObjectCommand({ Bucket: "models", Key: key }));
  return Buffer.from(await g.Body.transformToByteArray());
}
(async () => {
  await s3.send(new s3sdk.PutObjectCommand({ Bucket: "models", Key: "js/put.safetensors", Body: data }));
  console.log((await get("js/put.safetensors")).equals(data) ? "ok js: PutObject" : "FAIL js: PutObject: bytes differ");
  const key = "js/mp.safetensors", five = 5 << 20;
  const { UploadId } = await s3.send(new s3sdk.CreateMultipartUploadCommand({ Bucket: "models", Key: key }));
  const parts = [];
  for (const [n, body] of [[1, data.subarray(0, five)], [2, data.subarray(five)]]) {
    const r = await s3.send(new s3sdk.UploadPartCommand({ Bucket: "models", Key: key, UploadId, PartNumber: n, Body: body }));
    parts.push({ PartNumber: n, ETag: r.ETag });
  }
  await s3.send(new s3sdk.CompleteMultipartUploadCommand({ Bucket: "models", Key: key, UploadId,
    MultipartUpload: { Parts: parts } }));
  console.log((await get(key)).equals(data) ? "ok js: multipart upload" : "FAIL js: multipart: bytes differ");
})().catch((e) => { console.log("FAIL js: " + e); });
