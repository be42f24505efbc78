// The real @huggingface/hub (tests/clients/node_modules) against ztensord's /hf:
//   node hf_js.mjs CLIENTS_DIR HUB_URL REPO SRC_DIR CACHE_DIR FILE...
// listFiles (recursive) gives exactly FILE...; fileDownloadInfo and downloadFile of
// every file give its bytes (sha256 against SRC_DIR); downloadFileToCacheDir and
// snapshotDownload build the hub's cache layout with the same bytes; modelInfo gives
// the commit; a missing file is null (EntryNotFound); fileExists. Prints "ok ..." or
// "FAIL ..." lines; exits 1 on any failure.
import { createHash } from "node:crypto";
import { readFileSync, realpathSync, existsSync, lstatSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [clients, hubUrl, repo, src, cacheDir, ...files] = process.argv.slice(2);
const hub = await import(pathToFileURL(join(clients, "node_modules/@huggingface/hub/dist/index.mjs")).href);
console.debug = () => {}; // downloadFileToCacheDir logs each download
let failed = 0;
const ok = (name) => console.log(`ok ${name}`);
const bad = (name, why) => { failed++; console.log(`FAIL ${name}: ${why}`); };
const check = (name, cond, why) => (cond ? ok(name) : bad(name, why));
const sha = (buf) => createHash("sha256").update(buf).digest("hex");
const want = Object.fromEntries(files.map((f) => [f, sha(readFileSync(join(src, f)))]));

try {
  const info = await hub.modelInfo({ name: repo, hubUrl, additionalFields: ["sha"], revision: "main" });
  check("modelInfo: sha is a 40-hex commit", /^[0-9a-f]{40}$/.test(info.sha), JSON.stringify(info.sha));
  const commit = info.sha;

  const listed = [];
  const dirs = [];
  for await (const e of hub.listFiles({ repo, hubUrl, recursive: true })) {
    if (e.type === "file") listed.push(e.path);
    else dirs.push(e.path);
  }
  check("listFiles recursive: every file", JSON.stringify(listed.sort()) === JSON.stringify([...files].sort()),
        `${JSON.stringify(listed)} vs ${JSON.stringify(files)}`);
  const wantDirs = [...new Set(files.filter((f) => f.includes("/")).map((f) => f.slice(0, f.lastIndexOf("/"))))].sort();
  check("listFiles recursive: the directories", JSON.stringify(dirs.sort()) === JSON.stringify(wantDirs), JSON.stringify(dirs));

  for (const f of files) {
    const di = await hub.fileDownloadInfo({ repo, hubUrl, path: f });
    check(`fileDownloadInfo ${f}: size`, di && di.size === readFileSync(join(src, f)).length, JSON.stringify(di));
    check(`fileDownloadInfo ${f}: no xet`, di && !di.xet, JSON.stringify(di));
    const blob = await hub.downloadFile({ repo, hubUrl, path: f });
    const got = Buffer.from(await blob.arrayBuffer());
    check(`downloadFile ${f}: byte-exact`, sha(got) === want[f], `sha256 ${sha(got)}`);
    const pinned = await hub.downloadFile({ repo, hubUrl, path: f, revision: commit });
    check(`downloadFile ${f} at the commit: byte-exact`, sha(Buffer.from(await pinned.arrayBuffer())) === want[f], "differs");
    check(`fileExists ${f}`, await hub.fileExists({ repo, hubUrl, path: f }), "false");
  }
  check("downloadFile of a missing file: null", (await hub.downloadFile({ repo, hubUrl, path: "nope.bin" })) === null, "not null");
  check("fileExists of a missing file: false", !(await hub.fileExists({ repo, hubUrl, path: "nope.bin" })), "true");

  const one = files[0];
  const p = await hub.downloadFileToCacheDir({ repo, hubUrl, path: one, cacheDir: join(cacheDir, "one") });
  check(`downloadFileToCacheDir ${one}: under snapshots/<commit>`, p.includes(`/snapshots/${commit}/`), p);
  check(`downloadFileToCacheDir ${one}: a link to a blob`, lstatSync(p).isSymbolicLink() && realpathSync(p).includes("/blobs/"), p);
  check(`downloadFileToCacheDir ${one}: byte-exact`, sha(readFileSync(p)) === want[one], "differs");

  const snap = await hub.snapshotDownload({ repo, hubUrl, cacheDir: join(cacheDir, "snap") });
  check("snapshotDownload: snapshots/<commit>", snap.endsWith(`/snapshots/${commit}`), snap);
  for (const f of files) {
    const q = join(snap, f);
    check(`snapshotDownload ${f}: byte-exact`, existsSync(q) && sha(readFileSync(q)) === want[f], q);
  }
  const ref = join(cacheDir, "snap", `models--${repo.replace("/", "--")}`, "refs", "main");
  check("snapshotDownload: refs/main is the commit", existsSync(ref) && readFileSync(ref, "utf8") === commit, ref);
} catch (e) {
  bad("client call", e && e.stack ? e.stack : String(e));
}
process.exit(failed ? 1 : 0);
