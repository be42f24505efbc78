/*
 * zt pull's record of a complete pull, for --offline (ZT_OFFLINE=1) and for
 * an origin that cannot be reached: DIR/.ztpull-record/KEY, where KEY is a hash of
 * the command's URLs and selection flags, lists every file the pull left
 * complete and how to check it without the network:
 *
 *     ztpull-record 1
 *     f SIZE MTIME z - REL          a .zt: its own component digests
 *     f SIZE MTIME s SHA256 REL     any other file: the sha256 of its bytes
 *
 * SHA256 is the origin's when it named one (a ztensord listing), else the
 * file's hashed on disk once (kept from the last record while SIZE and
 * MTIME hold). Written after a pull with every file complete: temporary
 * file, fsync, rename. A check opens each file (never through a symbolic
 * link at its place), compares its size and checks its digests; it names
 * every file missing, cut or corrupt.
 */
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RECORD_DIR ".ztpull-record"
#define RECORD_MAX (64u << 20)

static void hex(const uint8_t *d, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
}

void tool_pull_record_key(const char *const *args, size_t n, char out[33])
{
    zt_hasher *h = zt_hasher_new(ZT_DIGEST_SHA256);
    uint8_t d[32] = {0};
    for (size_t i = 0; h && i < n; i++)
        zt_hasher_update(h, args[i], strlen(args[i]) + 1); /* with the NUL: a separator */
    if (h)
        zt_hasher_final(h, d);
    zt_hasher_free(h);
    hex(d, 16, out);
}

/* The sha256 of the regular file rel below top (not followed if a link). */
static int hash_file(int top, const char *rel, uint8_t out[32])
{
    int fd = openat(top, rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    zt_hasher *h = fd >= 0 ? zt_hasher_new(ZT_DIGEST_SHA256) : NULL;
    static __thread uint8_t buf[1 << 16];
    ssize_t n = h ? 0 : -1;
    while (h && (n = read(fd, buf, sizeof(buf))) > 0)
        zt_hasher_update(h, buf, (size_t)n);
    if (h && n == 0)
        zt_hasher_final(h, out);
    zt_hasher_free(h);
    if (fd >= 0)
        close(fd);
    return n == 0 ? 0 : -1;
}

/* The whole record file KEY, NUL-terminated, or NULL. */
static char *load(int top, const char *key)
{
    char name[64];
    snprintf(name, sizeof(name), RECORD_DIR "/%s", key);
    int fd = openat(top, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat sb;
    char *buf = NULL;
    if (fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size < RECORD_MAX &&
        (buf = malloc((size_t)sb.st_size + 1))) {
        if (read(fd, buf, (size_t)sb.st_size) == sb.st_size)
            buf[sb.st_size] = 0;
        else
            free(buf), buf = NULL;
    }
    if (fd >= 0)
        close(fd);
    if (buf && strncmp(buf, "ztpull-record 1\n", 16))
        free(buf), buf = NULL;
    return buf;
}

/* One "f" line of a record, parsed in place (line is modified). */
typedef struct entry {
    unsigned long long size;
    char mtime[32], kind, sha[65];
    const char *rel;
} entry;

static int parse_line(char *line, entry *e)
{
    int off = 0;
    if (sscanf(line, "f %llu %31s %c %64s %n", &e->size, e->mtime, &e->kind, e->sha, &off) != 4 ||
        !off || !line[off] || (e->kind != 'z' && e->kind != 's') ||
        (e->kind == 's' && strlen(e->sha) != 64) || !tool_pull_safe_rel(line + off))
        return -1;
    e->rel = line + off;
    return 0;
}

/* The sha256 hex the old record gives rel at this size and mtime, or NULL. */
static const char *kept_sha(char *old, const char *rel, unsigned long long size, const char *mtime,
                            entry *e)
{
    for (char *line = old, *nl; line && *line; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        if (!nl)
            return NULL;
        *nl = 0;
        int ok = line[0] == 'f' && !parse_line(line, e) && e->kind == 's' && e->size == size &&
                 !strcmp(e->mtime, mtime) && !strcmp(e->rel, rel);
        *nl = '\n';
        if (ok)
            return e->sha;
    }
    return NULL;
}

static int stat_rel(int top, const char *rel, struct stat *sb, char mtime[32])
{
    if (fstatat(top, rel, sb, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(sb->st_mode))
        return -1;
    snprintf(mtime, 32, "%lld.%09ld", (long long)sb->st_mtim.tv_sec, sb->st_mtim.tv_nsec);
    return 0;
}

int tool_pull_record_write(int top, const char *key, const tool_pull_entry *es, size_t n)
{
    char name[64], tmp[80];
    snprintf(name, sizeof(name), RECORD_DIR "/%s", key);
    snprintf(tmp, sizeof(tmp), RECORD_DIR "/.%s.%ld", key, (long)getpid());
    if (mkdirat(top, RECORD_DIR, 0755) != 0 && errno != EEXIST)
        return -1;
    char *old = load(top, key);
    FILE *f = NULL;
    int fd = openat(top, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0 && !(f = fdopen(fd, "w")))
        close(fd);
    int bad = !f;
    if (f)
        fputs("ztpull-record 1\n", f);
    for (size_t i = 0; !bad && i < n; i++) {
        struct stat sb;
        char mtime[32], sha[65] = "-";
        entry e;
        const char *k;
        uint8_t d[32];
        bad = strchr(es[i].rel, '\n') || stat_rel(top, es[i].rel, &sb, mtime);
        if (bad || es[i].zt)
            ;
        else if (es[i].sha256)
            hex(es[i].sha256, 32, sha);
        else if ((k = kept_sha(old, es[i].rel, (unsigned long long)sb.st_size, mtime, &e)))
            memcpy(sha, k, 65);
        else if (!(bad = hash_file(top, es[i].rel, d)))
            hex(d, 32, sha);
        if (!bad)
            fprintf(f, "f %llu %s %c %s %s\n", (unsigned long long)sb.st_size, mtime,
                    es[i].zt ? 'z' : 's', sha, es[i].rel);
    }
    free(old);
    if (f && (fflush(f) != 0 || fsync(fileno(f)) != 0))
        bad = 1;
    if (f)
        bad |= fclose(f) != 0;
    if (!bad && renameat(top, tmp, top, name) == 0)
        return 0;
    unlinkat(top, tmp, 0);
    return -1;
}

static void on_problem(void *ud, const zt_error *err)
{
    fprintf(stderr, "zt pull: %s: corrupt: %s\n", (const char *)ud, err->message);
}

/* One file of a record: 0 complete and verified, else 1 (said on stderr). */
static int check_one(int top, const char *dir, const entry *e)
{
    struct stat sb;
    char mtime[32], *path = tool_path_join(dir, e->rel);
    int bad = 1;
    if (!path)
        return 1;
    if (stat_rel(top, e->rel, &sb, mtime)) {
        fprintf(stderr, "zt pull: %s: missing (or not a regular file)\n", path);
    } else if ((unsigned long long)sb.st_size != e->size) {
        fprintf(stderr, "zt pull: %s: %llu bytes, the complete file has %llu\n", path,
                (unsigned long long)sb.st_size, e->size);
    } else if (e->kind == 's') {
        uint8_t d[32];
        char got[65];
        if (hash_file(top, e->rel, d))
            fprintf(stderr, "zt pull: %s: cannot read: %s\n", path, strerror(errno));
        else if (hex(d, 32, got), strcmp(got, e->sha))
            fprintf(stderr, "zt pull: %s: corrupt: its bytes hash to sha256:%s, not sha256:%s\n",
                    path, got, e->sha);
        else
            bad = 0;
    } else {
        zt_file *f;
        zt_error err;
        zt_verify_options vo;
        zt_verify_options_init(&vo);
        vo.on_problem = on_problem;
        vo.ud = path;
        if (zt_open(path, NULL, &f, &err)) {
            fprintf(stderr, "zt pull: %s: corrupt: %s\n", path, err.message);
        } else {
            bad = zt_file_verify(f, &vo, NULL, &err) != ZT_OK;
            zt_close(f);
        }
    }
    free(path);
    return bad;
}

int tool_pull_record_check(int top, const char *dir, const char *key, size_t *nfiles, size_t *nbad)
{
    *nfiles = *nbad = 0;
    char *rec = load(top, key);
    if (!rec)
        return -1;
    for (char *line = rec + 16, *nl; *line; line = nl + 1) {
        entry e;
        if (!(nl = strchr(line, '\n')))
            break; /* a cut last line: not ours (the record is renamed whole) */
        *nl = 0;
        if (parse_line(line, &e)) {
            fprintf(stderr, "zt pull: %s/" RECORD_DIR "/%s: a line that is not a record's\n", dir,
                    key);
            (*nbad)++;
            continue;
        }
        (*nfiles)++;
        *nbad += (size_t)check_one(top, dir, &e);
    }
    free(rec);
    return 0;
}
