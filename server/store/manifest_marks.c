/*
 * Marks on a manifest's JSON for components whose digests did not match
 * (see manifest_marks.h). The JSON is parsed and written again with jansson,
 * which wrote it in the first place: keys keep their order, numbers their
 * text.
 */
#include "store/manifest_marks.h"
#include "core/json_line.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

size_t ztd_entry_mismatches(const ztd_entry *e)
{
    return __atomic_load_n(&e->digests.count[ZTD_DIGEST_MISMATCH], __ATOMIC_RELAXED);
}

/* "objects" -> the object's name -> "components" -> the role, when there. */
static json_t *component_of(json_t *root, const ztd_digest_check *k)
{
    json_t *o = json_object_getn(json_object_get(root, "objects"), zt_object_name(k->object),
                                 zt_object_name_len(k->object));
    return json_object_get(json_object_get(o, "components"), zt_component_role(k->component));
}

char *ztd_manifest_marked(const ztd_entry *e, const char *json, size_t len, size_t *out_len,
                          size_t *marks)
{
    *marks = 0;
    json_t *root = json_loadb(json, len, JSON_ALLOW_NUL, NULL);
    if (!root)
        return NULL;
    for (size_t i = 0; i < e->digests.n; i++) {
        const ztd_digest_check *k = &e->digests.v[i];
        if (ztd_digest_check_state(k) != ZTD_DIGEST_MISMATCH)
            continue;
        json_t *c = component_of(root, k);
        if (c && !json_object_set_new(c, "digest_status", json_string("mismatch")))
            (*marks)++;
    }
    char *out = ztd_json_line(root, out_len); /* the manifest's root is an object */
    json_decref(root);
    return out;
}

char *ztd_object_marked(const ztd_entry *e, const zt_object *o, const char *json, size_t len,
                        size_t *out_len, size_t *marks)
{
    *marks = 0;
    json_t *root = json_loadb(json, len, JSON_ALLOW_NUL, NULL);
    if (!root)
        return NULL;
    json_t *comps = json_object_get(root, "components");
    for (size_t i = 0; i < e->digests.n; i++) {
        const ztd_digest_check *k = &e->digests.v[i];
        if (k->object != o || ztd_digest_check_state(k) != ZTD_DIGEST_MISMATCH)
            continue;
        json_t *c = json_object_get(comps, zt_component_role(k->component));
        if (c && !json_object_set_new(c, "digest_status", json_string("mismatch")))
            (*marks)++;
    }
    char *out = ztd_json_line(root, out_len);
    json_decref(root);
    return out;
}
