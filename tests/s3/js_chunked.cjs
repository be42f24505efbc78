// The AWS SDK for JavaScript v3 signing with a key of --s3-keys (t_auth.sh):
// a PutObject of a stream (which the SDK sends as aws-chunked with a
// checksum trailer by default) and of a buffer, each read back; says which
// Content-Encoding went out. Prints "ok NAME" / "FAIL NAME: why".
// node js_chunked.cjs NODE_MODULES URL FILE ACCESS_KEY SECRET
const fs = require("fs");
const path = require("path");
const [modules, url, file, ak, secret] = process.argv.slice(2);
const s3sdk = require(path.join(modules, "@aws-sdk/client-s3"));
const s3 = new s3sdk.S3Client({ endpoint: url, region: "us-east-1", forcePathStyle: true,
  credentials: { accessKeyId: ak, secretAccessKey: secret } });
const seen = [];
s3.middlewareStack.add((next) => async (args) => {
  if (args.request && args.request.method === "PUT")
    seen.push(String(args.request.headers["content-encoding"] || "") + " " +
              String(args.request.headers["x-amz-content-sha256"] || ""));
  return next(args);
}, { step: "finalizeRequest", priority: "low" });
const data = fs.readFileSync(file);
async function get(key) {
  const g = await s3.send(new s3sdk.GetObjectCommand({ Bucket: "models", Key: key }));
  return Buffer.from(await g.Body.transformToByteArray());
}
(async () => {
  await s3.send(new s3sdk.PutObjectCommand({ Bucket: "models", Key: "js/stream.safetensors",
    Body: fs.createReadStream(file), ContentLength: data.length }));
  console.log("# sent: " + seen.join(" | "));
  console.log(seen[0] && seen[0].includes("aws-chunked") ? "ok js: the stream went as aws-chunked"
    : "FAIL js: the stream went as aws-chunked: " + seen[0]);
  console.log((await get("js/stream.safetensors")).equals(data) ? "ok js: aws-chunked PutObject read back"
    : "FAIL js: aws-chunked PutObject: bytes differ");
})().catch((e) => { console.log("FAIL js: " + e); });
