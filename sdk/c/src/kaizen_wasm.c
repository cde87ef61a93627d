/* kaizen_wasm.c: the component's side of the contract. Implements the
 * `tools` export and the log sink over the bindings that `wit-bindgen c`
 * generates for the `tool` world (renamed `kaizen_world` by `kaizen plugins
 * build`, see README.md).
 *
 * Canonical ABI ownership, as the generated code expects it:
 * - Export arguments (the call context, name and input) were allocated in
 *   our memory by the host through cabi_realloc and belong to the export:
 *   it frees them with the generated *_free helpers before returning.
 * - Export results must be malloc'ed: after the host has copied them, the
 *   generated cabi_post_* function frees every string and list whose length
 *   is not zero. Empty lists are passed as NULL so nothing leaks.
 * - Import arguments (the log message) are borrowed for the call only. */
#include "kaizen.h"
#include "kaizen_world.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kaizen_log_write(kaizen_log_level level, const char *message, size_t len) {
    kaizen_world_string_t text = {(uint8_t *)message, len};
    kaizen_plugin_log_log((kaizen_plugin_log_log_level_t)level, &text);
}

/* A malloc'ed copy of a NUL-terminated string; the post-return frees it. */
static void dup_string(kaizen_world_string_t *out, const char *text) {
    size_t len = strlen(text);
    out->len = len;
    out->ptr = len ? malloc(len) : NULL;
    if (len && !out->ptr) abort(); /* the tool list cannot report an error */
    if (len) memcpy(out->ptr, text, len);
}

static kaizen_plugin_types_danger_level_t danger_level(kaizen_danger danger) {
    switch (danger) {
    case KAIZEN_SAFE: return KAIZEN_PLUGIN_TYPES_DANGER_LEVEL_SAFE;
    case KAIZEN_DANGEROUS: return KAIZEN_PLUGIN_TYPES_DANGER_LEVEL_DANGEROUS;
    case KAIZEN_MODERATE: break;
    }
    return KAIZEN_PLUGIN_TYPES_DANGER_LEVEL_MODERATE;
}

void exports_kaizen_plugin_tools_tools(exports_kaizen_plugin_tools_list_tool_spec_t *ret) {
    char err[256];
    if (!kaizen_check_tools(err, sizeof err)) {
        /* Like the Rust kit's panic: the load fails, and the host shows
         * the plugin's last output, this line. */
        fprintf(stderr, "kaizen C kit: %s\n", err);
        abort();
    }
    size_t listed = 0;
    for (size_t i = 0; i < kaizen_tool_count; i++) listed += !kaizen_tools[i].internal;
    exports_kaizen_plugin_tools_tool_spec_t *specs = listed ? calloc(listed, sizeof *specs) : NULL;
    if (listed && !specs) abort();
    size_t at = 0;
    for (size_t i = 0; i < kaizen_tool_count; i++) {
        const kaizen_tool *t = &kaizen_tools[i];
        if (t->internal) continue;
        dup_string(&specs[at].name, t->name);
        dup_string(&specs[at].description, t->description);
        dup_string(&specs[at].input_schema, t->input_schema);
        specs[at].danger = danger_level(t->danger);
        specs[at].read_only = t->read_only;
        at++;
    }
    ret->ptr = specs;
    ret->len = listed;
}

static exports_kaizen_plugin_tools_error_kind_t error_kind(kaizen_error_kind kind) {
    switch (kind) {
    case KAIZEN_INVALID_INPUT: return EXPORTS_KAIZEN_PLUGIN_TOOLS_ERROR_KIND_INVALID_INPUT;
    case KAIZEN_NOT_FOUND: return EXPORTS_KAIZEN_PLUGIN_TOOLS_ERROR_KIND_NOT_FOUND;
    case KAIZEN_PERMISSION_DENIED: return EXPORTS_KAIZEN_PLUGIN_TOOLS_ERROR_KIND_PERMISSION_DENIED;
    case KAIZEN_CONFLICT: return EXPORTS_KAIZEN_PLUGIN_TOOLS_ERROR_KIND_CONFLICT;
    case KAIZEN_TIMEOUT: return EXPORTS_KAIZEN_PLUGIN_TOOLS_ERROR_KIND_TIMEOUT;
    case KAIZEN_FAILED: break;
    }
    return EXPORTS_KAIZEN_PLUGIN_TOOLS_ERROR_KIND_FAILED;
}

/* A NUL-terminated copy of a host string for the context; NULL when out of
 * memory. */
static char *cstr(const kaizen_world_string_t *s) {
    char *out = malloc(s->len + 1);
    if (!out) return NULL;
    if (s->len) memcpy(out, s->ptr, s->len);
    out[s->len] = '\0';
    return out;
}

/* Moves a malloc'ed buffer into a result string (NULL when empty, as the
 * post-return frees only non-empty ones). */
static void give(kaizen_world_string_t *out, char *data, size_t len) {
    if (!len) {
        free(data);
        data = NULL;
    }
    out->ptr = (uint8_t *)data;
    out->len = len;
}

bool exports_kaizen_plugin_tools_call(exports_kaizen_plugin_tools_call_context_t *host_ctx, kaizen_world_string_t *name,
                                      exports_kaizen_plugin_tools_json_t *input,
                                      exports_kaizen_plugin_tools_tool_output_t *ret,
                                      exports_kaizen_plugin_tools_tool_error_t *err) {
    kaizen_result result;
    char *session_id = cstr(&host_ctx->session_id);
    char *call_id = cstr(&host_ctx->call_id);
    char *workspace = cstr(&host_ctx->workspace);
    char *cwd = cstr(&host_ctx->cwd);
    if (session_id && call_id && workspace && cwd) {
        kaizen_context ctx = {session_id, call_id, workspace, cwd};
        kaizen_run(&ctx, (const char *)name->ptr, name->len, (const char *)input->ptr, input->len, &result);
    } else {
        memset(&result, 0, sizeof result);
        result.failed = true;
        result.error_kind = KAIZEN_FAILED;
    }
    free(session_id);
    free(call_id);
    free(workspace);
    free(cwd);
    exports_kaizen_plugin_tools_call_context_free(host_ctx);
    kaizen_world_string_free(name);
    exports_kaizen_plugin_tools_json_free(input);

    if (result.failed) {
        err->kind = error_kind(result.error_kind);
        const char *msg = result.error_message ? result.error_message : "the plugin ran out of memory";
        /* A copy: the kit's static out-of-memory message must not reach
         * the post-return's free(). */
        size_t len = strlen(msg);
        char *copy = malloc(len + 1);
        if (!copy) abort();
        memcpy(copy, msg, len + 1);
        give(&err->message, copy, len);
        kaizen_result_free(&result);
        return false;
    }

    /* Parts move to the host's list without copying; the result keeps
     * nothing that the post-return will free again. */
    exports_kaizen_plugin_tools_content_part_t *parts =
        result.part_count ? calloc(result.part_count, sizeof *parts) : NULL;
    if (result.part_count && !parts) abort();
    for (size_t i = 0; i < result.part_count; i++) {
        kaizen_part *p = &result.parts[i];
        if (p->kind == KAIZEN_PART_TEXT) {
            parts[i].tag = KAIZEN_PLUGIN_TYPES_CONTENT_PART_TEXT;
            give(&parts[i].val.text, p->data, p->len);
        } else {
            parts[i].tag = KAIZEN_PLUGIN_TYPES_CONTENT_PART_IMAGE;
            give(&parts[i].val.image.media_type, p->media_type, p->media_type ? strlen(p->media_type) : 0);
            if (!p->len) {
                free(p->data);
                p->data = NULL;
            }
            parts[i].val.image.data.ptr = (uint8_t *)p->data;
            parts[i].val.image.data.len = p->len;
        }
        p->data = NULL;
        p->media_type = NULL;
    }
    ret->content.ptr = parts;
    ret->content.len = result.part_count;
    ret->metadata.is_some = result.metadata != NULL;
    if (result.metadata) {
        give(&ret->metadata.val, result.metadata, strlen(result.metadata));
        result.metadata = NULL;
    }
    kaizen_result_free(&result);
    return true;
}
