#!/usr/bin/python3
"""huggingface_hub (its source, not installable here: ZT_HF_HUB_SRC) against ztensord's /hf.

  hf_py.py HF_ENDPOINT REPO SRC_DIR WORK FILE...

snapshot_download into a cache and into a local_dir (twice: the second downloads
nothing), hf_hub_download of every file at main and at the commit, model_info,
list_repo_tree(recursive=True), get_paths_info, and the three 404s as their
exceptions. Prints "ok ..." / "FAIL ...: why" lines; exits 1 on a failure.
"""
import filecmp
import os
import sys

endpoint, repo, src, work, *files = sys.argv[1:]
os.environ["HF_ENDPOINT"] = endpoint
os.environ["HF_HOME"] = os.path.join(work, "hfhome")
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
import huggingface_hub as h  # noqa: E402
from huggingface_hub.errors import (  # noqa: E402
    RemoteEntryNotFoundError, RepositoryNotFoundError, RevisionNotFoundError)

failed = 0


def check(name, cond, why=""):
    global failed
    print(("ok %s" % name) if cond else ("FAIL %s: %s" % (name, why)))
    failed += 0 if cond else 1


api = h.HfApi()
info = api.model_info(repo)
check("model_info: siblings", sorted(s.rfilename for s in info.siblings) == sorted(files),
      [s.rfilename for s in info.siblings])
tree = [f.path for f in api.list_repo_tree(repo, recursive=True) if isinstance(f, h.hf_api.RepoFile)]
check("list_repo_tree recursive", sorted(tree) == sorted(files), tree)
pi = api.get_paths_info(repo, [files[0], "nope"])
check("get_paths_info", [p.path for p in pi] == [files[0]], pi)
pe = api.get_paths_info(repo, [files[0]], expand=True)
check("get_paths_info expand: last commit", pe[0].last_commit.oid == info.sha, pe)
te = list(api.list_repo_tree(repo, recursive=True, expand=True))
check("list_repo_tree expand", len(te) >= len(files) and all(t.last_commit.oid == info.sha for t in te), te)
snap = h.snapshot_download(repo)
check("snapshot_download: at the commit", snap.endswith(info.sha), snap)
for f in files:
    check("snapshot_download %s" % f, filecmp.cmp(os.path.join(snap, f), os.path.join(src, f), shallow=False))
    p = h.hf_hub_download(repo, f, revision=info.sha, cache_dir=os.path.join(work, "pinned"))
    check("hf_hub_download %s at the commit" % f, filecmp.cmp(p, os.path.join(src, f), shallow=False))
ld = os.path.join(work, "local")
for i in range(2):
    h.snapshot_download(repo, local_dir=ld)
    for f in files:
        check("local_dir %d: %s" % (i, f), filecmp.cmp(os.path.join(ld, f), os.path.join(src, f), shallow=False))
for name, call, exc in [
        ("missing file", lambda: h.hf_hub_download(repo, "nope.bin"), RemoteEntryNotFoundError),
        ("missing revision", lambda: h.hf_hub_download(repo, files[0], revision="0" * 40), RevisionNotFoundError),
        ("missing repository", lambda: h.hf_hub_download("org/nope", files[0]), RepositoryNotFoundError)]:
    try:
        call()
        check(name, False, "no exception")
    except exc:
        check(name, True)
    except Exception as e:  # noqa: BLE001
        check(name, False, "%s: %s" % (type(e).__name__, e))
sys.exit(1 if failed else 0)
