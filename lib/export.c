/*
 * Exports of resolved frames: Chrome Trace Event JSON (a timeline that
 * Perfetto and chrome://tracing open), a JSON tree per frame with every
 * field of the tree-walk API, and CSV with one row per merged node.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "frame.h"
#include "map.h"
#include "text.h"
#include "tree.h"
#include "util.h"

#define DEVICE_TRACKS 1000000u   /* tids of device queues start here */
#define SIDE_TRACKS 2000000u     /* a thread's inserted and sync rows */

/* A JSON string; bytes that are not UTF-8 (names cut short, or damaged
 * input) become U+FFFD, so that the output always parses. */
static void json_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", out);
        else if (*p == '\t')
            fputs("\\t", out);
        else if (*p < 0x20)
            fprintf(out, "\\u%04x", *p);
        else if (*p < 0x80)
            fputc(*p, out);
        else {
            size_t n = tlog_utf8_length_(p);
            if (n)
                fwrite(p, 1, n, out);
            else
                fputs("\\ufffd", out);
            p += n ? n : 1;
            continue;
        }
        p++;
    }
    fputc('"', out);
}

void tlog_json_str_(FILE *out, const char *s)
{
    json_str(out, s);
}

/* Microseconds with nanosecond precision, as Chrome's format wants. */
static void json_us(FILE *out, int64_t ns)
{
    uint64_t mag = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    fprintf(out, "%s%" PRIu64 ".%03u", ns < 0 ? "-" : "", mag / 1000, (unsigned)(mag % 1000));
}

/* a + b, held within int64 (only damaged input comes near the limits). */
static int64_t add_sat(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}

static int64_t dur_ns(uint64_t d)
{
    return d > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)d;
}


/* ------------------------------------------------------------------------ */
/* Chrome Trace Event format                                                */
/* ------------------------------------------------------------------------ */

/* A device's queue, as frames name it. */
typedef struct device_queue {
    const char *device;
    uint32_t queue;
} device_queue;

typedef struct chrome {
    FILE *out;
    bool first;
    tlog_map named;             /* tracks whose name was written: pid << 32 | tid */
    device_queue *queues;       /* device queues, numbered for their tids */
    size_t nqueues, capqueues;
    uint64_t flows;
    uint64_t wall_origin;       /* the earliest log creation among the frames */
    bool no_memory;             /* a track went unnamed: TLOG_ENOMEM */
} chrome;

/* A time on the common timeline: ranks' logs were created at different
 * wall-clock times, so each frame's times shift by its log's creation. */
static int64_t ts_of(const chrome *c, const tlog_frame *f, int64_t start)
{
    uint64_t shift = f->wall0_ns - c->wall_origin;
    int64_t s = shift > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)shift;
    return add_sat(s, add_sat(f->start_ns, start));
}

static void event_sep(chrome *c)
{
    fputs(c->first ? "\n" : ",\n", c->out);
    c->first = false;
}

/* The track of a device's queue: numbered in the order first met, so that
 * no two queues share one, whatever their numbers. */
static uint32_t queue_number(chrome *c, const char *device, uint32_t queue)
{
    if (!device)
        device = "?";
    for (size_t i = 0; i < c->nqueues; i++)
        if (c->queues[i].queue == queue &&
            (c->queues[i].device == device || strcmp(c->queues[i].device, device) == 0))
            return (uint32_t)i;
    if (c->nqueues >= SIDE_TRACKS - DEVICE_TRACKS ||
        !TLOG_GROW(c->queues, c->capqueues, c->nqueues + 1)) {
        c->no_memory = true;
        return 0;
    }
    c->queues[c->nqueues] = (device_queue){device, queue};
    return (uint32_t)c->nqueues++;
}

/* One "M" thread_name event per track, the first time it is used. */
static void name_track(chrome *c, uint32_t pid, uint32_t tid, const char *name,
                       const char *suffix)
{
    uint64_t key = (uint64_t)pid << 32 | tid;
    uint32_t none;
    if (tlog_map_get_(&c->named, key, &none))
        return;
    if (!tlog_map_put_(&c->named, key, 0)) {
        c->no_memory = true;
        return;
    }
    char full[200];
    snprintf(full, sizeof full, "%s%s", name ? name : "?", suffix);
    event_sep(c);
    fprintf(c->out, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":%u,"
                    "\"args\":{\"name\":", pid, tid);
    json_str(c->out, full);
    fputs("}}", c->out);
}

/* The track an instance goes on: device rows on their queue's, rows a
 * thread did not time itself (inserted timings, `Device past frame end`,
 * forced syncs of older streams) beside the thread, so that every track's
 * slices nest. */
static uint32_t track_of(chrome *c, const tlog_frame *f, const tlog_node *n, uint32_t thread)
{
    if (n->dev && (n->flags & TLOG_NODE_DEVICE)) {
        uint32_t tid = DEVICE_TRACKS + queue_number(c, n->dev->device, n->dev->queue);
        char label[160];
        snprintf(label, sizeof label, " queue %u", n->dev->queue);
        name_track(c, f->rank, tid, n->dev->device, label);
        return tid;
    }
    bool side = (n->kind == TLOG_KIND_EXECUTION && n->site) ||
                (n->flags & (TLOG_NODE_FORCED_SYNC | TLOG_NODE_PAST_FRAME));
    uint32_t tid = side ? SIDE_TRACKS + thread : thread;
    name_track(c, f->rank, tid, n->thread_name, side ? " (inserted and sync rows)" : "");
    return tid;
}

static void complete_event(chrome *c, const tlog_frame *f, const tlog_inst *in,
                           const tlog_node *n, uint32_t tid)
{
    event_sep(c);
    fputs("{\"name\":", c->out);
    json_str(c->out, n->name);
    fprintf(c->out, ",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":",
            (n->flags & TLOG_NODE_DEVICE) ? "device"
            : n->kind == TLOG_KIND_EXECUTION ? "execution" : "control");
    json_us(c->out, ts_of(c, f, in->start_ns));
    fputs(",\"dur\":", c->out);
    json_us(c->out, dur_ns(in->duration_ns));
    fprintf(c->out, ",\"pid\":%u,\"tid\":%u,\"args\":{\"frame\":%" PRIu64 "}}", f->rank, tid,
            f->serial);
}

/* An arrow from the launching scope's slice to the device interval. */
static void flow(chrome *c, const tlog_frame *f, const tlog_inst *from,
                 const tlog_inst *device, uint32_t device_tid)
{
    uint64_t id = ++c->flows;
    event_sep(c);
    fprintf(c->out, "{\"name\":\"launch\",\"cat\":\"launch\",\"ph\":\"s\",\"id\":%" PRIu64
                    ",\"pid\":%u,\"tid\":%u,\"ts\":", id, f->rank, from->thread);
    json_us(c->out, ts_of(c, f, from->start_ns));
    fputs("},", c->out);
    fprintf(c->out, "\n{\"name\":\"launch\",\"cat\":\"launch\",\"ph\":\"f\",\"bp\":\"e\","
                    "\"id\":%" PRIu64 ",\"pid\":%u,\"tid\":%u,\"ts\":", id, f->rank, device_tid);
    json_us(c->out, ts_of(c, f, device->start_ns));
    fputc('}', c->out);
}

static int chrome_frame(chrome *c, const tlog_frame *f)
{
    /* A launcher's first instance is where its arrows start. */
    const tlog_inst **first = tlog_calloc_(f->nnodes, sizeof *first);
    if (!first)
        return TLOG_ENOMEM;
    for (size_t k = 0; k < f->ninsts; k++)
        if (!first[f->insts[k].node])
            first[f->insts[k].node] = &f->insts[k];
    for (size_t k = 0; k < f->ninsts; k++) {
        const tlog_inst *in = &f->insts[k];
        const tlog_node *n = &f->nodes[in->node];
        uint32_t tid = track_of(c, f, n, in->thread);
        complete_event(c, f, in, n, tid);
        tlog_instance info = {.size = sizeof info};
        if ((n->flags & TLOG_NODE_DEVICE) && tlog_frame_get_instance(f, k, &info) == TLOG_OK &&
            info.launcher && first[info.launcher - f->nodes])
            flow(c, f, first[info.launcher - f->nodes], in, tid);
    }
    free(first);
    return TLOG_OK;
}

/* The frames given to an export: n of them, none NULL. Checked before
 * anything is written, so that a refused export writes nothing. */
static bool frames_valid(const tlog_frame *const *frames, size_t n)
{
    if (!n)
        return true;
    if (!frames || n > SIZE_MAX / sizeof *frames)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!frames[i])
            return false;
    return true;
}

static bool has_rank(const uint32_t *ranks, size_t n, uint32_t rank)
{
    for (size_t i = 0; i < n; i++)
        if (ranks[i] == rank)
            return true;
    return false;
}

int tlog_export_chrome(const tlog_frame *const *frames, size_t n, FILE *out)
{
    if (!frames_valid(frames, n))
        return TLOG_EINVAL;
    if (!out)
        out = stdout;
    chrome c = {.out = out, .first = true};
    uint32_t *ranks = tlog_calloc_(n ? n : 1, sizeof *ranks);
    if (!ranks)
        return TLOG_ENOMEM;
    size_t nranks = 0;
    c.wall_origin = UINT64_MAX;
    for (size_t i = 0; i < n; i++)
        if (frames[i]->wall0_ns < c.wall_origin)
            c.wall_origin = frames[i]->wall0_ns;
    fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", out);
    for (size_t i = 0; i < n; i++) {
        if (has_rank(ranks, nranks, frames[i]->rank))
            continue;
        ranks[nranks++] = frames[i]->rank;
        event_sep(&c);
        fprintf(out, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":0,"
                     "\"args\":{\"name\":\"rank %u\"}}", frames[i]->rank, frames[i]->rank);
    }
    int rc = TLOG_OK;
    for (size_t i = 0; i < n && rc == TLOG_OK; i++)
        rc = chrome_frame(&c, frames[i]);
    fputs("\n]}\n", out);
    free(ranks);
    tlog_map_free_(&c.named);
    free(c.queues);
    if (rc == TLOG_OK && c.no_memory)
        rc = TLOG_ENOMEM;
    return rc != TLOG_OK ? rc : tlog_written_(out);
}

/* ------------------------------------------------------------------------ */
/* JSON trees                                                               */
/* ------------------------------------------------------------------------ */

static void json_node_fields(FILE *out, const tlog_frame *f, const tlog_node *n,
                             const uint32_t *index_of)
{
    tlog_node_info i = {.size = sizeof i};
    tlog_node_get_info(n, &i);
    fprintf(out, "{\"index\":%u,\"name\":", index_of[n - f->nodes]);
    json_str(out, i.name);
    fprintf(out, ",\"kind\":\"%s\",\"thread\":%u,\"thread_name\":",
            i.kind == TLOG_KIND_EXECUTION ? "execution" : "control", i.thread);
    json_str(out, i.thread_name);
    fprintf(out, ",\"depth\":%d,\"start_ns\":%" PRId64 ",\"total_ns\":%" PRIu64
                 ",\"self_ns\":%" PRIu64 ",\"percent_of_parent\":",
            i.depth, i.start_ns, i.total_ns, i.self_ns);
    tlog_put_fixed_(out, i.percent_of_parent, 6);
    fprintf(out, ",\"count\":%" PRIu64 ",\"min_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64
                 ",\"file\":",
            i.count, i.min_ns, i.max_ns);
    if (i.file)
        json_str(out, i.file);
    else
        fputs("null", out);
    fprintf(out, ",\"line\":%d,\"site_id\":\"0x%016" PRIx64 "\",\"flags\":[", i.line,
            i.site_id);
    static const char *const names[] = {"repaired", "device", "unresolved", "forced_sync",
                                        "past_frame"};
    bool first = true;
    for (unsigned b = 0; b < sizeof names / sizeof names[0]; b++)
        if (i.flags & (1u << b)) {
            fprintf(out, "%s\"%s\"", first ? "" : ",", names[b]);
            first = false;
        }
    fputs("],\"launcher\":", out);
    if (i.launcher)
        fprintf(out, "%u", index_of[i.launcher - f->nodes]);
    else
        fputs("null", out);
    fputs(",\"launch_site\":", out);
    if (i.launch_site)
        json_str(out, i.launch_site->name);
    else
        fputs("null", out);
    fputs(",\"device\":", out);
    if (i.device)
        json_str(out, i.device);
    else
        fputs("null", out);
    fprintf(out, ",\"queue\":%u", i.queue);
    if (f->reduced_ranks) {   /* rows of a reduced frame: their spread */
        fprintf(out, ",\"ranks\":%u,\"rank_min_ns\":%" PRIu64 ",\"rank_max_ns\":%" PRIu64
                     ",\"rank_mean_ns\":",
                i.ranks, i.rank_min_ns, i.rank_max_ns);
        tlog_put_fixed_(out, i.rank_mean_ns, 1);
        fputs(",\"imbalance\":", out);
        tlog_put_fixed_(out, i.imbalance, 6);
    }
    fputs(",\"children\":[", out);
}

static int json_frame(FILE *out, const tlog_frame *f)
{
    uint32_t *index_of = tlog_malloc_(f->nnodes * sizeof *index_of);
    if (!index_of)
        return TLOG_ENOMEM;
    uint32_t k = 0;
    for (const tlog_node *n = tlog_frame_root(f); n; n = tlog_node_next_(n, true))
        index_of[n - f->nodes] = k++;
    fprintf(out, "{\"serial\":%" PRIu64 ",\"rank\":%u,\"thread\":%u,\"thread_name\":",
            f->serial, f->rank, f->thread);
    json_str(out, f->thread_name);
    fprintf(out, ",\"start_ns\":%" PRId64 ",\"duration_ns\":%" PRIu64
                 ",\"scopes_dropped\":%" PRIu64 ",\"scopes_repaired\":%" PRIu64
                 ",\"device_intervals\":%" PRIu64 ",\"device_unresolved\":%" PRIu64,
            f->start_ns, f->duration_ns, f->dropped, f->repaired, f->device_rows,
            f->device_unresolved);
    if (f->reduced_ranks)   /* duration_ns is then the root's mean per rank */
        fprintf(out, ",\"reduced_ranks\":%u,\"partial_rows\":%zu", f->reduced_ranks,
                f->partial_rows);
    fputs(",\"root\":", out);
    /* Iterative: open a node, and close as many as the walk climbs. */
    for (const tlog_node *n = tlog_frame_root(f); n;) {
        json_node_fields(out, f, n, index_of);
        if (n->first_child) {
            n = n->first_child;
            continue;
        }
        fputs("]}", out);
        while (n && !n->next_sibling) {
            n = n->parent;
            if (n)
                fputs("]}", out);
        }
        if (n) {
            n = n->next_sibling;
            fputc(',', out);
        }
    }
    fputc('}', out);
    free(index_of);
    return TLOG_OK;
}

int tlog_export_json(const tlog_frame *const *frames, size_t n, FILE *out)
{
    if (!frames_valid(frames, n))
        return TLOG_EINVAL;
    if (!out)
        out = stdout;
    fputs("{\"frames\":[", out);
    int rc = TLOG_OK;
    for (size_t i = 0; i < n && rc == TLOG_OK; i++) {
        if (i)
            fputc(',', out);
        fputc('\n', out);
        rc = json_frame(out, frames[i]);
    }
    fputs("\n]}\n", out);
    return rc != TLOG_OK ? rc : tlog_written_(out);
}

/* ------------------------------------------------------------------------ */
/* CSV                                                                      */
/* ------------------------------------------------------------------------ */

/* Text as UTF-8, bytes that are not becoming U+FFFD; quotes doubled when
 * `quote`. */
static void put_utf8(FILE *out, const char *s, bool quote)
{
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t n = *p < 0x80 ? 1 : tlog_utf8_length_(p);
        if (!n) {
            fputs("\xef\xbf\xbd", out);
            p++;
            continue;
        }
        if (quote && *p == '"')
            fputc('"', out);
        fwrite(p, 1, n, out);
        p += n;
    }
}

static void csv_field(FILE *out, const char *s)
{
    bool quote = strpbrk(s, ",\"\n\r") != NULL;
    if (quote)
        fputc('"', out);
    put_utf8(out, s, quote);
    if (quote)
        fputc('"', out);
}

void tlog_csv_field_(FILE *out, const char *s)
{
    csv_field(out, s);
}

void tlog_put_utf8_(FILE *out, const char *s, bool quote)
{
    put_utf8(out, s, quote);
}

/* The row's path: its ancestors' titles and its own, joined by " / ";
 * written piece by piece, so that an export never needs memory. */
static void csv_path(FILE *out, const tlog_node *n)
{
    const tlog_node *chain[TLOG_MAX_DEPTH + 2];
    size_t k = 0;
    bool quote = false;
    for (; n && k < sizeof chain / sizeof chain[0]; n = n->parent) {
        quote |= strpbrk(n->name, ",\"\n\r") != NULL;
        chain[k++] = n;
    }
    if (quote)
        fputc('"', out);
    for (size_t i = k; i-- > 0;) {
        if (i + 1 != k)
            fputs(" / ", out);
        put_utf8(out, chain[i]->name, quote);
    }
    if (quote)
        fputc('"', out);
}

int tlog_export_csv(const tlog_frame *const *frames, size_t n, FILE *out)
{
    if (!frames_valid(frames, n))
        return TLOG_EINVAL;
    if (!out)
        out = stdout;
    fputs("rank,frame,path,kind,thread,count,total_ns,min_ns,max_ns,percent_of_parent\n", out);
    for (size_t i = 0; i < n; i++) {
        const tlog_frame *f = frames[i];
        for (const tlog_node *node = tlog_frame_root(f); node; node = tlog_node_next_(node, true)) {
            fprintf(out, "%u,%" PRIu64 ",", f->rank, f->serial);
            csv_path(out, node);
            fprintf(out, ",%s,", node->kind == TLOG_KIND_EXECUTION ? "E" : "C");
            csv_field(out, node->thread_name ? node->thread_name : "");
            fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", node->count,
                    node->total_ns, node->min_ns, node->max_ns);
            tlog_put_fixed_(out, tlog_node_percent_(node), 2);
            fputc('\n', out);
        }
    }
    return tlog_written_(out);
}
